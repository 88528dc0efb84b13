/**
 * The redaction functions on the inputs they meet in a crawl: connection URLs of PostgreSQL and
 * Redis, a proxy URL, errors whose message and stack carry one, response headers as Node (lower
 * case, set-cookie an array) and as a site's own definition (any case) give them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connectRedis } from '../../src/frontier/redis/connection.js';
import { redactHeaders, redactUrl, REDACTED, scrubText, scrubUrls, scrubValue } from '../../src/vocabulary/redact.js';

describe('redactUrl', () => {
    it('masks the password of a connection URL and keeps the username', () => {
        assert.equal(
            redactUrl('postgres://dragnet:s3cr3t@127.0.0.1:5432/test'),
            'postgres://dragnet:***@127.0.0.1:5432/test',
        );
        assert.equal(redactUrl('redis://:pw@host:6379/0'), 'redis://:***@host:6379/0');
        assert.equal(redactUrl('http://user:pass@proxy:8000'), 'http://user:***@proxy:8000/');
    });

    it('masks a password holding an escaped or unescaped @ whole', () => {
        assert.equal(redactUrl('postgres://dragnet:p%40ss@db/test'), 'postgres://dragnet:***@db/test');
        assert.equal(redactUrl('http://u:p@ss@host/a'), 'http://u:***@host/a');
    });

    it('gives a URL without a password back exactly as it came', () => {
        for (const url of ['https://shop.test/a?b=1', 'http://token@host/', 'HTTP://Host/Path', 'postgres:///test']) {
            assert.equal(redactUrl(url), url);
        }
    });

    it('scrubs a string the URL parser refuses as text, and leaves other strings alone', () => {
        assert.equal(redactUrl('postgres://dragnet:pa#ss@db/test'), 'postgres://dragnet:***@db/test');
        assert.equal(redactUrl('not a url'), 'not a url');
        assert.equal(redactUrl('/var/lib/dragnet/storage'), '/var/lib/dragnet/storage');
    });

    it('is idempotent', () => {
        const once = redactUrl('postgres://dragnet:s3cr3t@127.0.0.1:5432/test');
        assert.equal(redactUrl(once), once);
    });
});

describe('scrubText', () => {
    it('masks every credentialed URL in an error message', () => {
        const message =
            'tunneling socket could not be established, cause=connect ECONNREFUSED ' +
            '127.0.0.1:8000 (proxy http://scraper:proxypass@127.0.0.1:8000); ' +
            'results at postgres://dragnet:s3cr3t@127.0.0.1:5432/test and redis://:pw@127.0.0.1:6379';
        const scrubbed = scrubText(message);
        for (const secret of ['proxypass', 's3cr3t', ':pw@']) assert.ok(!scrubbed.includes(secret), scrubbed);
        assert.match(scrubbed, /http:\/\/scraper:\*\*\*@127\.0\.0\.1:8000\)/);
        assert.match(
            scrubbed,
            /postgres:\/\/dragnet:\*\*\*@127\.0\.0\.1:5432\/test and redis:\/\/:\*\*\*@127\.0\.0\.1:6379$/,
        );
        assert.match(
            scrubbed,
            /^tunneling socket could not be established, cause=connect ECONNREFUSED 127\.0\.0\.1:8000/,
        );
    });

    it("masks a stack trace's URLs, leaving its frames", () => {
        const error = new Error('connect to postgres://dragnet:s3cr3t@127.0.0.1:5432/test failed');
        const scrubbed = scrubText(error.stack!);
        assert.ok(!scrubbed.includes('s3cr3t'));
        assert.match(
            scrubbed,
            /^Error: connect to postgres:\/\/dragnet:\*\*\*@127\.0\.0\.1:5432\/test failed\n {4}at /,
        );
        assert.equal(scrubbed.split('\n').length, error.stack!.split('\n').length);
    });

    it('replaces the values of credential header lines, in any case, to the end of their line only', () => {
        const text =
            'GET / HTTP/1.1\r\nHost: shop.test\r\n' +
            'authorization: Basic dXNlcjpwYXNz\r\nCOOKIE: sid=abc; theme=dark\r\n' +
            'Proxy-Authorization: Basic cHJveHk6cGFzcw==\r\n' +
            'Accept: */*\r\n\r\nSet-Cookie: session=xyz; HttpOnly\nafter';
        assert.equal(
            scrubText(text),
            'GET / HTTP/1.1\r\nHost: shop.test\r\nauthorization: [redacted]\r\nCOOKIE: [redacted]\r\n' +
                'Proxy-Authorization: [redacted]\r\nAccept: */*\r\n\r\nSet-Cookie: [redacted]\nafter',
        );
    });

    it('leaves text without secrets as it was', () => {
        const text = 'HTTP 404 at https://shop.test/p/1 (mailto:someone@shop.test; user@host)';
        assert.equal(scrubText(text), text);
    });
});

describe('scrubUrls', () => {
    it('masks passwords in a JSON line without touching its structure', () => {
        const line = JSON.stringify({ msg: 'Cookie: a=b', url: 'http://u:secret@host/', headers: { cookie: 'x' } });
        const scrubbed = scrubUrls(line);
        assert.deepEqual(JSON.parse(scrubbed), {
            msg: 'Cookie: a=b',
            url: 'http://u:***@host/',
            headers: { cookie: 'x' },
        });
    });
});

describe('redactHeaders', () => {
    it("masks the credential headers as Node gives them, keeping set-cookie's count", () => {
        const headers = {
            'content-type': 'text/html',
            'set-cookie': ['session=abc123; HttpOnly', 'csrftoken=xyz789; Path=/'],
            location: 'http://reader:urlpass@127.0.0.1:9/next',
            'content-length': undefined,
        };
        assert.deepEqual(redactHeaders(headers), {
            'content-type': 'text/html',
            'set-cookie': [REDACTED, REDACTED],
            location: 'http://reader:***@127.0.0.1:9/next',
            'content-length': undefined,
        });
        assert.equal(headers['set-cookie'][0], 'session=abc123; HttpOnly', 'the caller keeps its headers');
    });

    it('masks them in any case', () => {
        assert.deepEqual(
            redactHeaders({
                Authorization: 'Bearer tok3n',
                'PROXY-AUTHORIZATION': 'Basic cHc=',
                Cookie: 'sid=1',
                'Set-Cookie': 'a=1\nb=2',
                Accept: '*/*',
            }),
            {
                Authorization: REDACTED,
                'PROXY-AUTHORIZATION': REDACTED,
                Cookie: REDACTED,
                'Set-Cookie': REDACTED,
                Accept: '*/*',
            },
        );
    });
});

describe('scrubValue', () => {
    it('deep-copies an object with header fields masked at any depth and strings scrubbed', () => {
        const value = {
            url: 'http://user:pass@proxy:8000',
            request: { headers: { Cookie: 'sid=1', 'x-trace': 'ok' }, retries: 2 },
            list: ['redis://:pw@host', 3, null],
            password: 'hunter2',
        };
        assert.deepEqual(scrubValue(value), {
            url: 'http://user:***@proxy:8000',
            request: { headers: { Cookie: REDACTED, 'x-trace': 'ok' }, retries: 2 },
            list: ['redis://:***@host', 3, null],
            password: REDACTED,
        });
        assert.equal(value.request.headers.Cookie, 'sid=1', 'the original is left as it was');
    });

    it('turns an error into fields with its message, stack and cause scrubbed', () => {
        const error = Object.assign(new Error('connect postgres://dragnet:s3cr3t@127.0.0.1:5432/test'), {
            code: 'ECONNREFUSED',
            cause: new Error('via http://scraper:proxypass@127.0.0.1:8000'),
        });
        const fields = scrubValue({ err: error }) as { err: Record<string, unknown> };
        const text = JSON.stringify(fields);
        assert.ok(!text.includes('s3cr3t') && !text.includes('proxypass'), text);
        assert.equal(fields.err.message, 'connect postgres://dragnet:***@127.0.0.1:5432/test');
        assert.match(String(fields.err.stack), /^Error: connect postgres:\/\/dragnet:\*\*\*@/);
        assert.equal(fields.err.code, 'ECONNREFUSED');
        assert.equal((fields.err.cause as Record<string, unknown>).message, 'via http://scraper:***@127.0.0.1:8000');
    });

    it('copies values with toJSON as they stringify, and ends a cycle', () => {
        const cyclic: Record<string, unknown> = { at: new Date(0), link: new URL('http://u:p@host/') };
        cyclic.self = cyclic;
        assert.deepEqual(scrubValue(cyclic), {
            at: '1970-01-01T00:00:00.000Z',
            link: 'http://u:***@host/',
            self: '[Circular]',
        });
    });
});

describe('the Redis connection', () => {
    it('names the URL without its password when Redis does not answer', async () => {
        // Port 1 on loopback: refused at once.
        await assert.rejects(connectRedis('redis://:s3cr3t@127.0.0.1:1', { connectTimeoutMs: 300 }), (error: Error) => {
            assert.ok(!error.message.includes('s3cr3t'), error.message);
            assert.match(error.message, /Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:1 is unreachable/);
            return true;
        });
    });
});
