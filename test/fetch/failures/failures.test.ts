import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { classifyError, classifyStatus, FetchFailure } from '../../../src/fetch/failures/failures.js';
import {
    checkResponse,
    detectBlock,
    isChallengeRedirect,
    type ResponseSnapshot,
} from '../../../src/fetch/failures/responseCheck.js';

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
        const { failureClass, reason, status, message } = classifyError(new FetchFailure('blocked', 'HTTP 403', 403));
        assert.deepEqual(
            { failureClass, reason, status, message },
            {
                failureClass: 'blocked',
                reason: 'http-403',
                status: 403,
                message: 'HTTP 403',
            },
        );
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
        const wrapped = new Error('Request failed', {
            cause: systemError('connect ECONNREFUSED 127.0.0.1:1', 'ECONNREFUSED'),
        });
        const failure = classifyError(wrapped);
        assert.equal(failure.failureClass, 'transient');
        assert.equal(failure.reason, 'econnrefused');
        assert.equal(failure.message, 'Request failed');

        const twice = new Error('outer', { cause: new Error('middle', { cause: systemError('x', 'ECONNRESET') }) });
        assert.equal(classifyError(twice).reason, 'econnreset');
    });

    it("finds a code named only in the message, as in Crawlee's session errors", () => {
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
            assert.deepEqual(classifyError(new Error(message)), {
                failureClass: 'transient',
                reason: 'timeout',
                message,
            });
        }
    });

    it('calls too many redirects a permanent redirect-loop', () => {
        const failure = classifyError(new Error('Redirected 11 times. Aborting.'));
        assert.equal(failure.failureClass, 'permanent');
        assert.equal(failure.reason, 'redirect-loop');
        assert.equal(classifyError(new Error('MaxRedirectsError: Redirected 10 times')).reason, 'redirect-loop');
    });

    it(`does not take a message that merely mentions redirects \
for a redirect loop (a browser closed while it launched)`, () => {
        const launch =
            'browserType.launch: Target page, context or browser has ' +
            'been closed Browser logs: <launching> /usr/bin/chromium ' +
            '--disable-back-forward-cache ' +
            '--disable-features=AvoidUnnecessaryBeforeUnloadCheckSync,HttpsUpgrades,MaxRedirectsTest --no-first-run';
        assert.equal(classifyError(new Error(launch)).failureClass, 'transient');
        assert.equal(
            classifyError(new Error('net::ERR_TOO_MANY_REDIRECTS at http://127.0.0.1:9/a')).reason,
            'redirect-loop',
        );
    });

    it("calls a TLS failure a retry cannot cure permanent tls-failure, by its code, a cause's, or its message", () => {
        const tlsFailure = (error: unknown) => {
            const { failureClass, reason } = classifyError(error);
            return `${failureClass}:${reason}`;
        };
        // Chromium's, as Playwright words them (the first from test/fetch/failures/tlsFailures.test.ts).
        for (const code of [
            'ERR_SSL_VERSION_OR_CIPHER_MISMATCH',
            'ERR_SSL_PROTOCOL_ERROR',
            'ERR_SSL_UNRECOGNIZED_NAME_ALERT',
            'ERR_SSL_CLIENT_AUTH_CERT_NEEDED',
            'ERR_BAD_SSL_CLIENT_AUTH_CERT',
            'ERR_CERT_AUTHORITY_INVALID',
            'ERR_CERT_DATE_INVALID',
            'ERR_CERTIFICATE_TRANSPARENCY_REQUIRED',
        ]) {
            const message = `page.goto: net::${code} at https://127.0.0.1:9/\nCall log:\n  - navigating to "https://127.0.0.1:9/"`;
            assert.equal(tlsFailure(new Error(message)), 'permanent:tls-failure', code);
        }
        // Node's, with OpenSSL's message; on the error, on a cause (got wraps it), or only in the message.
        const protocolVersion = systemError(
            '808CAD8F517F0000:error:0A00042E:SSL routines:ssl3_read_bytes:tlsv1 alert protocol version:' +
                '../deps/openssl/openssl/ssl/record/rec_layer_s3.c:1601:SSL alert number 70\n',
            'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION',
        );
        assert.equal(tlsFailure(protocolVersion), 'permanent:tls-failure');
        assert.equal(tlsFailure(new Error('Request failed', { cause: protocolVersion })), 'permanent:tls-failure');
        assert.equal(tlsFailure(new Error(protocolVersion.message)), 'permanent:tls-failure');
        for (const code of [
            'ERR_SSL_WRONG_VERSION_NUMBER',
            'ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE',
            'ERR_SSL_NO_PROTOCOLS_AVAILABLE',
            'ERR_SSL_NO_SHARED_CIPHER',
        ]) {
            assert.equal(tlsFailure(systemError('the TLS handshake failed', code)), 'permanent:tls-failure', code);
        }
        // A client that verifies: Node's certificate codes, whose messages do not name them.
        for (const [code, message] of [
            ['DEPTH_ZERO_SELF_SIGNED_CERT', 'self-signed certificate'],
            ['SELF_SIGNED_CERT_IN_CHAIN', 'self-signed certificate in certificate chain'],
            ['CERT_HAS_EXPIRED', 'certificate has expired'],
            ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'unable to verify the first certificate'],
            ['ERR_TLS_CERT_ALTNAME_INVALID', "Hostname/IP does not match certificate's altnames"],
        ] as const) {
            assert.equal(
                tlsFailure(new Error('Request failed', { cause: systemError(message, code) })),
                'permanent:tls-failure',
                code,
            );
        }
    });

    it('leaves a TLS record damaged on the way, or a connection cut short, transient', () => {
        for (const error of [
            new Error('page.goto: net::ERR_SSL_BAD_RECORD_MAC_ALERT at https://127.0.0.1:9/'),
            systemError('SSL routines::sslv3 alert bad record mac', 'ERR_SSL_SSLV3_ALERT_BAD_RECORD_MAC'),
            systemError(
                'SSL routines::decryption failed or bad record mac',
                'ERR_SSL_DECRYPTION_FAILED_OR_BAD_RECORD_MAC',
            ),
            new Error('error:0A000126:SSL routines::unexpected eof while reading'),
        ]) {
            assert.equal(classifyError(error).failureClass, 'transient', error.message);
        }
        // A TLS handshake that took too long is a timeout, as any other.
        assert.equal(
            classifyError(systemError('TLS handshake timeout', 'ERR_TLS_HANDSHAKE_TIMEOUT')).reason,
            'timeout',
        );
    });

    it("calls Crawlee's content-type rejection permanent", () => {
        const failure = classifyError(
            new Error('Resource http://x/a.pdf served Content-Type application/pdf, but only text/html is allowed.'),
        );
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

/** detectBlock's answer as `class:reason`, or `none`. */
function verdict(status: number, body = '', headers: ResponseSnapshot['headers'] = {}): string {
    const failure = detectBlock({ status, headers, body });
    return failure ? `${failure.failureClass}:${failure.reason}` : 'none';
}

/** An ordinary page, padded past the interstitial size as real product and article pages are (50 KB and up). */
function ordinaryPage(title: string, content: string): string {
    const filler = '<p>Ordinary catalogue text about products and prices.</p>'.repeat(800);
    return (
        `<!DOCTYPE html><html><head><title>${title}</title></head><body>` +
        `<nav>Home · Shop · Contact</nav>${content}${filler}</body></html>`
    );
}

// Block pages below are trimmed renditions of what each vendor serves, written from the vendors' docs and the
// public captures cited next to BLOCK_SIGNS in responseCheck.ts (ids, hosts and keys made up).

/** Cloudflare's managed challenge: its title, `_cf_chl_opt` and the orchestrate script it loads. */
const CLOUDFLARE_CHALLENGE = `<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title></head><body>
<h1>shop.example</h1><p>Verifying you are human. This may take a few seconds.</p>
<script>(function(){window._cf_chl_opt={cvId:'3',cZone:'shop.example',cType:'managed'};\
var a=document.createElement('script');
a.src='/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1?ray=8f2a1c4d5e6f0a1b';\
document.head.appendChild(a);}());</script></body></html>`;

/** Cloudflare's Error 1020: a firewall rule refused the request. */
const CLOUDFLARE_1020 = `<!DOCTYPE html><html><head><title>Attention Required! | Cloudflare</title></head>
<body><h1>Sorry, you have been blocked</h1><p>Error 1020</p><p>Ray ID: 8f2a1c4d5e6f0a1b</p></body></html>`;

/** DataDome's block page: a `dd` object naming its captcha host, and its script from captcha-delivery.com. */
const DATADOME_BLOCK = `<html lang="en"><head><title>shop.example</title></head><body style="margin:0">
<p id="cmsg">Please enable JS and disable any ad blocker</p>
<script>var dd={'rt':'c','cid':'AHrlqAAAAAMA','hsh':'A55FBF4311ED','t':'fe','host':'geo.captcha-delivery.com'}</script>
<script src="https://ct.captcha-delivery.com/c.js"></script></body></html>`;

/** PerimeterX/HUMAN's block page: the press-and-hold captcha container and the app id. */
const PERIMETERX_BLOCK = `<!DOCTYPE html><html><head><title>Access to this page has been denied</title></head><body>
<h1>Press &amp; Hold to confirm you are a human (and not a bot).</h1><div id="px-captcha"></div>
<script>window._pxAppId='PXab12cd34';</script></body></html>`;

/** Akamai's edge refusal as an HTTP client receives it, the reference link entity-encoded. */
const AKAMAI_DENIED = `<HTML><HEAD>
<TITLE>Access Denied</TITLE>
</HEAD><BODY>
<H1>Access Denied</H1>
You don't have permission to access "http&#58;&#47;&#47;shop&#46;example&#47;" on this server.<P>
Reference&#32;&#35;18&#46;1a2b3c4d&#46;1700000000&#46;5e6f7a8b
<P>https&#58;&#47;&#47;errors&#46;edgesuite&#46;net&#47;18&#46;1a2b3c4d&#46;1700000000&#46;5e6f7a8b</P>
</BODY>
</HTML>`;

/** Akamai's edge outage page: same reference host, but an outage, not a refusal. */
const AKAMAI_503 = `<HTML><HEAD><TITLE>Service Unavailable</TITLE></HEAD><BODY>
<H1>Service Unavailable - Zero size object</H1>The server is \
temporarily unable to service your request. Please try again later.<P>
Reference&#32;&#35;15&#46;1a2b3c4d&#46;1700000000&#46;5e6f7a8b
<P>https&#58;&#47;&#47;errors&#46;edgesuite&#46;net&#47;15&#46;1a2b3c4d&#46;1700000000&#46;5e6f7a8b</P></BODY></HTML>`;

/** Akamai Bot Manager's behavioural challenge, served with a 200. */
const AKAMAI_CHALLENGE = `<!DOCTYPE html><html><head><title>shop.example</title></head><body>
<div id="sec-if-cpt-container"><p>Powered and protected by Akamai</p></div>
<script src="/_sec/cp_challenge/ak-challenge-4-3.htm"></script></body></html>`;

/** Imperva's bare interstitial: a robots meta, then the resource script, nothing else (served with a 200). */
const IMPERVA_INTERSTITIAL = `<html>
<head>
<META NAME="robots" CONTENT="noindex,nofollow">
<script src="/_Incapsula_Resource?SWJIYLWA=5074a744e2e3d891814e9a2dace20bd4,719d34d31c8e3a6e6fffd425f7e032f3">
</script>
<body>
</body></html>`;

/** Imperva's refusal page, with the iframe crawlee's RETRY_CSS_SELECTORS looks for. */
const IMPERVA_BLOCK = `<html><head><META NAME="ROBOTS" CONTENT="NOINDEX, NOFOLLOW"></head><body>
<iframe id="main-iframe" src="/_Incapsula_Resource?CWUDNSAI=9&xinfo=1-2345-0" frameborder=0 width="100%" height="100%">
Request unsuccessful. Incapsula incident ID: 473000110123456789-12345678901234567</iframe></body></html>`;

/** AWS WAF's challenge page: challenge.js and the keys it needs in window.gokuProps. */
const AWS_WAF_CHALLENGE = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title></title>
<script>window.awsWafCookieDomainList = [];window.gokuProps = \
{"key":"AQIDAHj","iv":"A6wUCgAh","context":"glDLQwA7"};</script>
<script src="https://1a2b3c4d.token.awswaf.com/1a2b3c4d/challenge.js"></script></head>
<body><div id="challenge-container"></div></body></html>`;

/** Google's "unusual traffic" page, served with a 429 and a reCAPTCHA. */
const GOOGLE_SORRY = `<html><head><title>https://www.google.com/search?q=shoes</title></head><body>
<div id="infoDiv0">Our systems have detected unusual traffic from your computer network.</div>
<form id="captcha-form"><div class="g-recaptcha" data-sitekey="6LfwuyUT"></div></form></body></html>`;

/** A small, ordinary contact page with a reCAPTCHA in its form: a page, not a block. */
const CONTACT_FORM = `<!DOCTYPE html><html><head><title>Contact us | Shop Example</title>
<script src="https://www.google.com/recaptcha/api.js" async defer></script></head><body>
<h1>Contact us</h1><p>Please verify you are human before sending.</p>
<form action="/contact" method="post"><textarea name="message"></textarea>
<div class="g-recaptcha" data-sitekey="6LfwuyUT"></div><button>Send</button></form></body></html>`;

describe('detectBlock', () => {
    it('keeps a plain 403 blocked with reason http-403', () => {
        const failure = detectBlock({ status: 403, headers: {}, body: '<h1>Forbidden</h1>' });
        assert.ok(failure instanceof FetchFailure);
        assert.equal(failure.failureClass, 'blocked');
        assert.equal(failure.reason, 'http-403');
        assert.equal(failure.status, 403);
        assert.equal(failure.message, 'HTTP 403');
        assert.equal(verdict(403), 'blocked:http-403');
    });

    it('leaves a 429 or 503 without anti-bot signs to the status (transient), even from behind Cloudflare', () => {
        const cloudflareEdge = { server: 'cloudflare', 'cf-ray': '8f2a1c4d5e6f0a1b-FRA', 'retry-after': '30' };
        assert.equal(verdict(429, '<h1>Too Many Requests</h1>', cloudflareEdge), 'none');
        assert.equal(verdict(503, '<h1>Service Unavailable</h1>', cloudflareEdge), 'none');
        assert.equal(
            checkResponse(429, 'text/html', { headers: cloudflareEdge, body: '<h1>Too Many Requests</h1>' })?.reason,
            'http-429',
        );
        assert.equal(checkResponse(429, 'text/html', { headers: cloudflareEdge })?.failureClass, 'transient');
    });

    it('leaves ordinary pages and ordinary error pages alone', () => {
        assert.equal(
            verdict(200, ordinaryPage('Red shoes | Shop Example', '<h1>Red shoes</h1>'), {
                'content-type': 'text/html',
            }),
            'none',
        );
        assert.equal(verdict(200, '<html><body>tiny but ordinary</body></html>'), 'none');
        assert.equal(verdict(404, '<h1>Not found</h1>'), 'none');
        assert.equal(verdict(500, '<h1>Internal error</h1>'), 'none');
        assert.equal(verdict(200), 'none');
    });

    it('Cloudflare: the cf-mitigated header on any status, and the challenge page on a 403, 429 or 503', () => {
        assert.equal(verdict(403, CLOUDFLARE_CHALLENGE, { 'cf-mitigated': 'challenge' }), 'blocked:challenge');
        // Super Bot Fight Mode's managed challenge comes as a 429: a block, not a rate limit.
        assert.equal(verdict(429, '', { 'cf-mitigated': 'challenge', server: 'cloudflare' }), 'blocked:challenge');
        assert.equal(verdict(200, '', { 'cf-mitigated': 'challenge' }), 'blocked:challenge');
        assert.equal(verdict(403, CLOUDFLARE_CHALLENGE), 'blocked:challenge');
        // The legacy "I'm Under Attack" page came as a 503.
        assert.equal(verdict(503, CLOUDFLARE_CHALLENGE), 'blocked:challenge');
        assert.equal(verdict(503, '<script>window._cf_chl_opt={cvId:"2"}</script>'), 'blocked:challenge');
        assert.equal(verdict(429, '<title>Just a moment...</title>'), 'blocked:challenge');
        assert.equal(
            verdict(403, '<script src="/cdn-cgi/challenge-platform/h/b/orchestrate/managed/v1?ray=1"></script>'),
            'blocked:challenge',
        );
    });

    it('Cloudflare: Error 1020 is a refusal, reason http-<status>-blocked', () => {
        assert.equal(verdict(403, CLOUDFLARE_1020), 'blocked:http-403-blocked');
    });

    it('Cloudflare: the JavaScript Detections script in an ordinary page or a 503 is no challenge', () => {
        const jsd = '<script src="/cdn-cgi/challenge-platform/scripts/jsd/main.js"></script>';
        assert.equal(verdict(503, `<title>Down for maintenance</title><h1>Back soon</h1>${jsd}`), 'none');
        assert.equal(verdict(200, `<title>Red shoes</title>${jsd}`), 'none');
        assert.equal(verdict(200, ordinaryPage('Red shoes', jsd)), 'none');
    });

    it('DataDome: x-dd-b on any status, its block page, and x-datadome on a 403 or 429', () => {
        assert.equal(verdict(403, '', { 'x-dd-b': '2' }), 'blocked:captcha');
        assert.equal(verdict(403, '', { 'x-dd-b': '1' }), 'blocked:challenge');
        assert.equal(verdict(403, DATADOME_BLOCK, { 'x-datadome': 'protected' }), 'blocked:captcha');
        // Some sites get the page with a 200.
        assert.equal(verdict(200, DATADOME_BLOCK), 'blocked:captcha');
        assert.equal(
            verdict(429, '<h1>Too Many Requests</h1>', { 'x-datadome': 'protected' }),
            'blocked:http-429-blocked',
        );
        const message = detectBlock({ status: 429, headers: { 'x-datadome': 'protected' } })?.message ?? '';
        assert.match(message, /DataDome refusal \(x-datadome header\)/);
    });

    it('DataDome: its header on an allowed page, or a preconnect to its host in a full page, is no block', () => {
        assert.equal(
            verdict(200, ordinaryPage('Red shoes', '<h1>Red shoes</h1>'), { 'x-datadome': 'protected' }),
            'none',
        );
        assert.equal(verdict(200, '<title>Red shoes</title><h1>Red shoes</h1>', { 'x-datadome': 'protected' }), 'none');
        const preconnect = '<link rel="preconnect" href="https://geo.captcha-delivery.com">';
        assert.equal(verdict(200, ordinaryPage('Red shoes', preconnect)), 'none');
    });

    it('PerimeterX/HUMAN: the press-and-hold captcha and the refusal text', () => {
        assert.equal(verdict(403, PERIMETERX_BLOCK), 'blocked:captcha');
        const robotOrHuman = PERIMETERX_BLOCK.replace('Access to this page has been denied', 'Robot or human?');
        assert.equal(verdict(200, robotOrHuman), 'blocked:captcha');
        assert.equal(verdict(403, '<script>window._pxCaptcha = true;</script>'), 'blocked:captcha');
        const refusal =
            '<title>Access to this page has been denied</title><p>Access to this page ' +
            'has been denied because we believe you are using automation tools.</p>';
        assert.equal(verdict(403, refusal), 'blocked:http-403-blocked');
    });

    it("Akamai: the edge's Access Denied page in either encoding, and the bot manager's challenge", () => {
        assert.equal(verdict(403, AKAMAI_DENIED, { server: 'AkamaiGHost' }), 'blocked:http-403-blocked');
        // A browser renders the entities; the same page, decoded, still counts.
        const decoded = AKAMAI_DENIED.replace(/&#46;/g, '.').replace(/&#47;/g, '/').replace(/&#58;/g, ':');
        assert.equal(verdict(403, decoded), 'blocked:http-403-blocked');
        assert.equal(verdict(200, AKAMAI_CHALLENGE), 'blocked:challenge');
    });

    it("Akamai: the edge's outage page links the same host but stays a transient 503", () => {
        assert.equal(verdict(503, AKAMAI_503, { server: 'AkamaiGHost' }), 'none');
        assert.equal(
            checkResponse(503, 'text/html', { headers: { server: 'AkamaiGHost' }, body: AKAMAI_503 })?.failureClass,
            'transient',
        );
    });

    it('Imperva: the bare interstitial, the iframe and the incident ID — not the script it injects into pages', () => {
        assert.equal(verdict(200, IMPERVA_INTERSTITIAL, { 'x-iinfo': '5-2434707-0 0NNN' }), 'blocked:challenge');
        assert.equal(verdict(200, IMPERVA_BLOCK), 'blocked:challenge');
        assert.equal(
            verdict(403, '<p>Request unsuccessful. Incapsula incident ID: 473000110123456789-1</p>'),
            'blocked:http-403-blocked',
        );
        const injected =
            '<script src="/_Incapsula_Resource?SWJIYLWA=719d34d31c8e3a6e6fffd425f7e032f3&ns=1&cb=12345" ' +
            'async></script>';
        assert.equal(verdict(200, ordinaryPage('Red shoes', injected)), 'none');
        assert.equal(
            verdict(
                200,
                `<html><head><title>Red shoes</title></head><body><h1>Red shoes</h1>${injected}</body></html>`,
            ),
            'none',
        );
    });

    it('AWS WAF: x-amzn-waf-action on its 405 and 202, and the gokuProps page', () => {
        assert.equal(verdict(405, AWS_WAF_CHALLENGE, { 'x-amzn-waf-action': 'captcha' }), 'blocked:captcha');
        assert.equal(verdict(202, AWS_WAF_CHALLENGE, { 'x-amzn-waf-action': 'challenge' }), 'blocked:challenge');
        assert.equal(verdict(200, AWS_WAF_CHALLENGE), 'blocked:challenge');
        // Without the header a 405 stays what the status says.
        assert.equal(checkResponse(405, 'text/html', { headers: {} })?.failureClass, 'permanent');
        assert.equal(
            checkResponse(405, 'text/html', { headers: { 'x-amzn-waf-action': 'captcha' } })?.failureClass,
            'blocked',
        );
    });

    it("Vercel's attack-mode challenge and Google's unusual-traffic page", () => {
        assert.equal(verdict(429, '', { 'x-vercel-mitigated': 'challenge' }), 'blocked:challenge');
        assert.equal(verdict(429, GOOGLE_SORRY), 'blocked:captcha');
    });

    it('counts a captcha widget on a 403 or 429, or on a page titled as a check', () => {
        const widget = '<div class="g-recaptcha" data-sitekey="6Lf"></div>';
        assert.equal(verdict(429, widget), 'blocked:captcha');
        assert.equal(verdict(403, widget), 'blocked:captcha');
        assert.equal(
            verdict(200, `<title>Human Verification</title><div class="h-captcha" data-sitekey="x"></div>`),
            'blocked:captcha',
        );
        assert.equal(
            verdict(200, `<title>Verify you are human</title><div class="cf-turnstile" data-sitekey="x"></div>`),
            'blocked:captcha',
        );
        // The title gate reads the title, however long the page.
        assert.equal(verdict(200, ordinaryPage('Pardon Our Interruption', widget)), 'blocked:captcha');
    });

    it('does not count a reCAPTCHA, hCaptcha or Turnstile in an ordinary form, small or large', () => {
        assert.equal(verdict(200, CONTACT_FORM), 'none');
        assert.equal(verdict(200, ordinaryPage('Contact us', CONTACT_FORM)), 'none');
        assert.equal(
            verdict(200, '<title>Sign in</title><form><div class="h-captcha" data-sitekey="x"></div></form>'),
            'none',
        );
        assert.equal(
            verdict(200, '<title>Newsletter</title><form><div class="cf-turnstile" data-sitekey="x"></div></form>'),
            'none',
        );
        assert.equal(checkResponse(200, 'text/html', { headers: {}, body: CONTACT_FORM }), undefined);
    });

    it('does not turn a 401 login page or a 404 page with a captcha form into a block', () => {
        const login = '<title>Sign in</title><form><div class="g-recaptcha" data-sitekey="6Lf"></div></form>';
        assert.equal(verdict(401, login), 'none');
        assert.equal(verdict(404, ordinaryPage('Page not found', CONTACT_FORM)), 'none');
        assert.equal(checkResponse(401, 'text/html', { headers: {}, body: login })?.failureClass, 'permanent');
    });

    it('reads header names in any case and repeated headers as arrays', () => {
        assert.equal(verdict(403, '', { 'CF-Mitigated': 'Challenge' }), 'blocked:challenge');
        assert.equal(verdict(405, '', { 'X-Amzn-Waf-Action': ['captcha'] }), 'blocked:captcha');
        assert.equal(verdict(403, '', { 'x-dd-b': undefined }), 'blocked:http-403');
    });

    it('calls a 3xx to a challenge page a challenge-redirect, resolving it against the URL', () => {
        const toDataDome = { location: 'https://geo.captcha-delivery.com/captcha/?initialCid=AHrlqAAAAAMA&t=fe' };
        assert.equal(verdict(302, '', toDataDome), 'blocked:challenge-redirect');
        assert.equal(
            verdict(307, '', { Location: '/cdn-cgi/challenge-platform/h/b/jsd/r/1' }),
            'blocked:challenge-redirect',
        );
        assert.equal(verdict(301, '', { location: 'https://shop.example/products/red-shoes' }), 'none');
        const ownSection = detectBlock({
            status: 301,
            headers: { location: '/challenge/' },
            url: 'https://shop.example/challenge',
        });
        assert.equal(ownSection, undefined);
        assert.match(
            detectBlock({ status: 302, headers: toDataDome })?.message ?? '',
            /redirect to a challenge page https:\/\/geo\.captcha-delivery\.com/,
        );
    });

    it('names the vendor and the sign in the message', () => {
        assert.equal(
            detectBlock({ status: 403, headers: { 'cf-mitigated': 'challenge' } })?.message,
            'HTTP 403: Cloudflare challenge (cf-mitigated: challenge)',
        );
        assert.equal(
            detectBlock({ status: 403, headers: {}, body: AKAMAI_DENIED })?.message,
            'HTTP 403: Akamai refusal ("Access Denied" page)',
        );
    });
});

describe('isChallengeRedirect', () => {
    it("recognises the bot managers' challenge hosts and paths", () => {
        for (const location of [
            'https://geo.captcha-delivery.com/captcha/?initialCid=AHrl&hash=789&t=fe',
            'https://geo.captcha-delivery.com/interstitial/?initialCid=AHrl',
            'https://validate.perfdrive.com/64b926de/?ssa=be69e7ab&ssc=https%3A%2F%2Fshop.example%2F',
            'https://challenges.cloudflare.com/cdn-cgi/challenge-platform/h/g/turnstile/if/ov2',
            'https://shop.example/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1?ray=1',
            '/cdn-cgi/challenge-platform/h/b/jsd/r/1',
            '/_Incapsula_Resource?CWUDNSAI=9&xinfo=1',
            '/_sec/cp_challenge/verify?provider=crypto',
            '/.well-known/sgcaptcha/?r=%2Fproducts%2Fred-shoes',
        ]) {
            assert.equal(isChallengeRedirect(location), true, location);
        }
    });

    it('recognises a path segment that is captcha or challenge, in any case, with or without an extension', () => {
        for (const location of [
            'https://shop.example/captcha',
            'https://shop.example/captcha/?return=%2Fproducts',
            '/Challenge/',
            '/security/captcha.html',
            '/bot/challenge.php?from=%2Fcart',
        ]) {
            assert.equal(isChallengeRedirect(location), true, location);
        }
    });

    it('does not mistake a slug, a query value or a host that merely contains the word', () => {
        for (const location of [
            'https://shop.example/products/challenge-coin-set',
            'https://shop.example/products?name=challenge&sort=price',
            'https://shop.example/search?q=captcha',
            'https://shop.example/login?next=/captcha',
            'https://shop.example/login#captcha',
            'https://shop.example/blog/captcha-tips',
            'https://shop.example/recaptcha-guide',
            'https://challenge.example/',
            'https://captcha.shop.example/products/red-shoes',
            'https://notcaptcha-delivery.com/',
            '/cdn-cgi/l/email-protection',
            '/products/red-shoes',
        ]) {
            assert.equal(isChallengeRedirect(location), false, location);
        }
    });

    it("does not call a move within the site's own /challenge section a challenge, when it knows the URL", () => {
        assert.equal(isChallengeRedirect('/challenge/', 'https://shop.example/challenge'), false);
        assert.equal(
            isChallengeRedirect('https://shop.example/challenge/2024/winners', 'https://shop.example/challenge/2024'),
            false,
        );
        assert.equal(isChallengeRedirect('/challenge/', 'https://shop.example/products/red-shoes'), true);
        // The vendors' hosts and paths count wherever the request came from.
        assert.equal(
            isChallengeRedirect('/cdn-cgi/challenge-platform/h/b/jsd', 'https://shop.example/challenge'),
            true,
        );
    });

    it('rejects an unparseable or non-HTTP location', () => {
        assert.equal(isChallengeRedirect('http://'), false);
        assert.equal(isChallengeRedirect('javascript:alert("captcha")'), false);
        assert.equal(isChallengeRedirect('mailto:captcha@shop.example'), false);
        assert.equal(isChallengeRedirect(''), false);
    });
});

describe('checkResponse with the response', () => {
    it('reports a block before the status and the content type', () => {
        const challenge = checkResponse(429, 'text/html', {
            headers: { 'cf-mitigated': 'challenge' },
            body: CLOUDFLARE_CHALLENGE,
        });
        assert.equal(challenge?.failureClass, 'blocked');
        assert.equal(challenge?.reason, 'challenge');
        assert.equal(challenge?.status, 429);
        assert.equal(checkResponse(200, 'text/html', { headers: {}, body: DATADOME_BLOCK })?.reason, 'captcha');
        assert.equal(
            checkResponse(202, 'text/html', { headers: { 'x-amzn-waf-action': 'challenge' } })?.reason,
            'challenge',
        );
        assert.equal(checkResponse(403, 'text/html', { headers: {}, body: '' })?.reason, 'http-403');
    });

    it('otherwise answers as the two-argument form does', () => {
        const page = ordinaryPage('Red shoes', '<h1>Red shoes</h1>');
        assert.equal(checkResponse(200, 'text/html; charset=utf-8', { headers: {}, body: page }), undefined);
        assert.equal(checkResponse(404, 'text/html', { headers: {}, body: page })?.reason, 'http-404');
        assert.equal(
            checkResponse(200, 'application/json', { headers: {}, body: '{}' })?.reason,
            'unsupported-content-type',
        );
    });
});
