import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { checkResponse, classifyError, classifyStatus, FetchFailure } from '../../src/fetch/failures.js';

describe('classifyStatus', () => {
    const cases: [number, ReturnType<typeof classifyStatus>][] = [
        [200, undefined],
        [204, undefined],
        [301, undefined],
        [304, undefined],
        [400, 'permanent'],
        [401, 'permanent'],
        [404, 'permanent'],
        [410, 'permanent'],
        [403, 'blocked'],
        [408, 'transient'],
        [429, 'transient'],
        [500, 'transient'],
        [502, 'transient'],
        [503, 'transient'],
        [504, 'transient'],
        // 501 Not Implemented is a 5xx that asking again will not fix.
        [501, 'permanent'],
    ];
    for (const [status, expected] of cases) {
        it(`${status} → ${expected ?? 'usable'}`, () => assert.equal(classifyStatus(status), expected));
    }
});

describe('checkResponse', () => {
    it('accepts HTML, with or without parameters and in any case', () => {
        assert.equal(checkResponse(200, 'text/html'), undefined);
        assert.equal(checkResponse(200, 'text/html; charset=utf-8'), undefined);
        assert.equal(checkResponse(200, 'Text/HTML ; charset=ISO-8859-1'), undefined);
        assert.equal(checkResponse(200, 'application/xhtml+xml'), undefined);
    });

    it('turns an error status into a FetchFailure with class, status and an http-<status> reason', () => {
        const failure = checkResponse(404, 'text/html');
        assert.ok(failure instanceof FetchFailure);
        assert.equal(failure.failureClass, 'permanent');
        assert.equal(failure.status, 404);
        assert.equal(failure.reason, 'http-404');
        assert.equal(checkResponse(503, 'text/html')?.failureClass, 'transient');
        assert.equal(checkResponse(403, 'text/html')?.failureClass, 'blocked');
    });

    it('rejects a non-HTML or missing content type as permanent unsupported-content-type', () => {
        for (const type of ['application/json', 'application/pdf; name=x.pdf', '', undefined]) {
            const failure = checkResponse(200, type);
            assert.ok(failure, `content type ${String(type)} is rejected`);
            assert.equal(failure.failureClass, 'permanent');
            assert.equal(failure.reason, 'unsupported-content-type');
            assert.equal(failure.status, 200);
        }
        assert.match(checkResponse(200, 'application/json')?.message ?? '', /application\/json/);
        assert.match(checkResponse(200, undefined)?.message ?? '', /none/);
    });

    it('judges the status before the content type', () => {
        assert.equal(checkResponse(500, 'application/json')?.reason, 'http-500');
    });
});

/** An error as Node's socket layer makes them: a message and a `code`. */
function systemError(message: string, code: string): Error {
    return Object.assign(new Error(message), { code });
}

describe('classifyError', () => {
    it('keeps the class and reason of a FetchFailure', () => {
        assert.deepEqual(classifyError(new FetchFailure('blocked', 'HTTP 403', 403)), {
            failureClass: 'blocked',
            reason: 'http-403',
            status: 403,
            message: 'HTTP 403',
        });
        const custom = classifyError(new FetchFailure('permanent', 'redirect loop at a → b', 301, 'redirect-loop'));
        assert.equal(custom.failureClass, 'permanent');
        assert.equal(custom.reason, 'redirect-loop');
        assert.equal(custom.status, 301);
    });

    it('reads a connection error code on the error itself', () => {
        assert.deepEqual(classifyError(systemError('read ECONNRESET', 'ECONNRESET')), {
            failureClass: 'transient',
            reason: 'econnreset',
            message: 'read ECONNRESET',
        });
        assert.equal(classifyError(systemError('connect failed', 'ECONNREFUSED')).reason, 'econnrefused');
        assert.equal(classifyError(systemError('socket closed', 'UND_ERR_SOCKET')).reason, 'und-err-socket');
    });

    it('reads a connection error code on its cause (got wraps the socket error)', () => {
        const wrapped = new Error('Request failed', { cause: systemError('connect ECONNREFUSED 127.0.0.1:1', 'ECONNREFUSED') });
        const failure = classifyError(wrapped);
        assert.equal(failure.failureClass, 'transient');
        assert.equal(failure.reason, 'econnrefused');
        assert.equal(failure.message, 'Request failed');

        const twice = new Error('outer', { cause: new Error('middle', { cause: systemError('x', 'ECONNRESET') }) });
        assert.equal(classifyError(twice).reason, 'econnreset');
    });

    it('finds a code named only in the message, as in Crawlee\'s session errors', () => {
        const failure = classifyError(new Error('Detected a session error, rotating session... \nread ECONNRESET'));
        assert.equal(failure.failureClass, 'transient');
        assert.equal(failure.reason, 'econnreset');
        assert.equal(failure.message, 'Detected a session error, rotating session... read ECONNRESET');
        assert.equal(classifyError('connect ECONNREFUSED 127.0.0.1:9').reason, 'econnrefused');
    });

    it('calls a timeout message a transient timeout', () => {
        for (const message of [
            'Navigation timed out after 30 seconds.',
            'request timed out after 30 seconds.',
            'page.waitForSelector: Timeout 10000ms exceeded.',
        ]) {
            assert.deepEqual(classifyError(new Error(message)), { failureClass: 'transient', reason: 'timeout', message });
        }
    });

    it('calls too many redirects a permanent redirect-loop', () => {
        const failure = classifyError(new Error('Redirected 11 times. Aborting.'));
        assert.equal(failure.failureClass, 'permanent');
        assert.equal(failure.reason, 'redirect-loop');
        assert.equal(classifyError(new Error('MaxRedirectsError: Redirected 10 times')).reason, 'redirect-loop');
    });

    it('calls Crawlee\'s content-type rejection permanent', () => {
        const failure = classifyError(new Error('Resource http://x/a.pdf served Content-Type application/pdf, but only text/html is allowed.'));
        assert.equal(failure.failureClass, 'permanent');
        assert.equal(failure.reason, 'unsupported-content-type');
    });

    it('leaves an unknown error transient with reason "error", so retrying stays capped', () => {
        assert.deepEqual(classifyError(new Error('something odd happened')), {
            failureClass: 'transient',
            reason: 'error',
            message: 'something odd happened',
        });
        assert.equal(classifyError('a thrown string').reason, 'error');
        assert.equal(classifyError(undefined).failureClass, 'transient');
        // A code that is not a connection error does not count as one.
        assert.equal(classifyError(systemError('no such file', 'ENOENT')).reason, 'error');
    });

    it('collapses whitespace in the message to one line', () => {
        const failure = classifyError(new Error('  first line\n\n   second\tline  '));
        assert.equal(failure.message, 'first line second line');
        assert.equal(classifyError(new FetchFailure('permanent', 'HTTP\n404', 404)).message, 'HTTP 404');
    });
});
