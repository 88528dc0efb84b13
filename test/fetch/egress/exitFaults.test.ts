/**
 * Exit faults as the HTTP stage meets them: real errors and statuses from the HTTP client (undici)
 * through real proxy-chain proxies on 127.0.0.1, classified by failures.ts. The HTTPS target speaks
 * HTTP/2 and HTTP/1.1 (ALPN); its certificate is self-signed, made by openssl for this run in a
 * temporary directory.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import http2 from 'node:http2';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';

import { Server } from 'proxy-chain';

import { classifyError, classifyStatus } from '../../../src/fetch/failures/failures.js';
import { HttpClient } from '../../../src/fetch/http/httpClient.js';
import { selfSignedCert } from '../../helpers/selfSignedCert.js';

type Outcome = { status: number; body: string } | { error: Error };

/** A server answering `/<status>` with that status, on 127.0.0.1, saying which HTTP version it was asked in. */
const answerStatus = (
    request: http.IncomingMessage | http2.Http2ServerRequest,
    response: http.ServerResponse | http2.Http2ServerResponse,
) => {
    const status = Number(request.url?.slice(1)) || 200;
    response.writeHead(status, { 'content-type': 'text/html', ...(status === 429 ? { 'retry-after': '5' } : {}) });
    response.end(`<html><body>status ${status} over HTTP/${request.httpVersion}</body></html>`);
};

async function listening<T extends net.Server>(server: T): Promise<number> {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
}

describe('exit faults from real proxies (the HTTP client through proxy-chain)', () => {
    const servers: net.Server[] = [];
    const proxies: Server[] = [];
    let plain: string;
    let secure: string;
    /** Asks for user `u`, password `p`. */
    let working: string;
    /** Answers every request and CONNECT with 407, whatever the credentials. */
    let rejecting: string;
    /** A port nothing listens on. */
    let closedPort: number;

    before(async () => {
        const httpServer = http.createServer(answerStatus);
        const httpsServer = http2.createSecureServer(
            { ...selfSignedCert('127.0.0.1'), allowHTTP1: true },
            answerStatus,
        );
        servers.push(httpServer, httpsServer);
        plain = `http://127.0.0.1:${await listening(httpServer)}`;
        secure = `https://127.0.0.1:${await listening(httpsServer)}`;

        const good = new Server({
            port: 0,
            host: '127.0.0.1',
            prepareRequestFunction: ({ username, password }) =>
                username === 'u' && password === 'p'
                    ? {}
                    : { requestAuthentication: true, failMsg: 'Proxy credentials rejected' },
        });
        const broken = new Server({
            port: 0,
            host: '127.0.0.1',
            prepareRequestFunction: () => ({ requestAuthentication: true, failMsg: 'Proxy credentials rejected' }),
        });
        proxies.push(good, broken);
        await good.listen();
        await broken.listen();
        working = `http://u:p@127.0.0.1:${good.port}`;
        rejecting = `http://u:p@127.0.0.1:${broken.port}`;

        const spare = net.createServer();
        closedPort = await listening(spare);
        await new Promise<void>((resolve) => spare.close(() => resolve()));
    });

    const client = new HttpClient();

    after(async () => {
        await client.close();
        for (const proxy of proxies) await proxy.close(true);
        for (const server of servers) {
            (server as http.Server).closeAllConnections?.();
            await new Promise<void>((resolve) => server.close(() => resolve()));
        }
    });

    /** One GET as the HTTP stage makes it (statuses not thrown, redirects not followed), its error caught. */
    async function get(url: string, proxyUrl: string | undefined): Promise<Outcome> {
        try {
            const response = await client.fetch({ url, proxyUrl, timeoutMs: 5000 });
            const chunks: Buffer[] = [];
            for await (const chunk of response) chunks.push(chunk as Buffer);
            return { status: response.statusCode!, body: Buffer.concat(chunks).toString('utf8') };
        } catch (error) {
            return { error: error as Error };
        }
    }

    const statusOf = (outcome: Outcome) =>
        'status' in outcome ? outcome.status : assert.fail(`threw ${(outcome as { error: Error }).error.message}`);
    const errorOf = (outcome: Outcome) =>
        'error' in outcome ? outcome.error : assert.fail(`answered ${(outcome as { status: number }).status}`);

    it('checks the world first: the working proxy carries both schemes, https:// over HTTP/2', async () => {
        const plainAnswer = await get(`${plain}/200`, working);
        assert.equal(statusOf(plainAnswer), 200);
        assert.match((plainAnswer as { body: string }).body, /over HTTP\/1\.1/);
        const secureAnswer = await get(`${secure}/200`, working);
        assert.equal(statusOf(secureAnswer), 200);
        assert.match((secureAnswer as { body: string }).body, /over HTTP\/2\.0/, 'ALPN chose h2 through the tunnel');
        assert.match(
            ((await get(`${secure}/200`, undefined)) as { body: string }).body,
            /over HTTP\/2\.0/,
            'and direct',
        );
    });

    it(`an http:// target through a proxy that rejects the \
credentials: the 407 is a response, classed exit`, async () => {
        const outcome = await get(`${plain}/200`, rejecting);
        assert.equal(statusOf(outcome), 407);
        assert.equal((outcome as { body: string }).body, 'Proxy credentials rejected');
        assert.equal(classifyStatus(407, { viaProxy: true }), 'exit');
    });

    it('an https:// target through that proxy: the refused CONNECT throws, classed exit (proxy-auth)', async () => {
        const error = errorOf(await get(`${secure}/200`, rejecting));
        const failure = classifyError(error, { viaProxy: true });
        assert.deepEqual(
            [failure.failureClass, failure.reason, failure.status],
            ['exit', 'proxy-auth', 407],
            failure.message,
        );
        assert.equal(
            failure.message,
            'the proxy refused the tunnel: CONNECT answered "HTTP/1.1 407 Proxy Authentication Required"',
        );
        assert.equal(classifyError(error).failureClass, 'exit', 'a refused tunnel is the exit’s even unflagged');
    });

    it('reads a refused CONNECT’s status as a response’s: 590 and 597 are the exit’s, 593-596 the site’s', () => {
        const refused = (status: number) =>
            classifyError(
                Object.assign(new Error(`the proxy refused the tunnel: CONNECT answered "HTTP/1.1 ${status}"`), {
                    code: 'ERR_TUNNEL_REFUSED',
                    status,
                }),
                { viaProxy: true },
            );
        assert.deepEqual(pick(refused(590)), ['exit', 'proxy-refused']);
        assert.deepEqual(pick(refused(597)), ['exit', 'proxy-refused']);
        for (const status of [593, 594, 595, 596])
            assert.deepEqual(pick(refused(status)), ['transient', `http-${status}`], String(status));
        assert.deepEqual(pick(refused(403)), ['blocked', 'http-403']);
    });

    it('a proxy on a closed port: ECONNREFUSED is the exit’s via a proxy, transient (the site’s) without', async () => {
        for (const url of [`${plain}/200`, `${secure}/200`]) {
            const error = errorOf(await get(url, `http://u:p@127.0.0.1:${closedPort}`));
            assert.equal((error as Error & { code?: string }).code, 'ECONNREFUSED');
            assert.equal(error.message, `connect ECONNREFUSED 127.0.0.1:${closedPort}`);
            assert.deepEqual(pick(classifyError(error, { viaProxy: true })), ['exit', 'proxy-econnrefused']);
            assert.deepEqual(pick(classifyError(error, { viaProxy: false })), ['transient', 'econnrefused']);
        }
        const direct = errorOf(await get(`http://127.0.0.1:${closedPort}/200`, undefined));
        assert.deepEqual(
            pick(classifyError(direct)),
            ['transient', 'econnrefused'],
            'the site itself refusing, no proxy',
        );
    });

    it(`an https:// target refusing behind a working proxy: proxy-chain \
closes the tunnel unanswered, transient econnreset, not exit`, async () => {
        const started = Date.now();
        const error = errorOf(await get(`https://127.0.0.1:${closedPort}/`, working));
        assert.ok(
            Date.now() - started < 2000,
            'failed at the close, not by a timeout (undici’s own tunnel connects again and again here)',
        );
        assert.equal((error as Error & { code?: string }).code, 'ECONNRESET');
        assert.deepEqual(pick(classifyError(error, { viaProxy: true })), ['transient', 'econnreset'], error.message);
    });

    // A fixed bug, kept as a test (src/fetch/failures/failures.ts, isProxyUpstreamStatus, line 49,
    // used by classifyStatus line 54): proxy-chain answers an http:// request whose *target*
    // refused the connection with 594 ("Connection Refused", its
    // badGatewayStatusCodes.CONNECTION_REFUSED; 593 is the target's DNS, 595 a reset by the target,
    // 504 its timeout). Taking all of 590-599 as the exit's makes a site that is down an exit
    // fault: no attempt charged, each retry puts another proxy on its breaker, and after
    // MAX_EXIT_RETRIES (10) it is dead-lettered as `exits-failing`.
    it('an http:// target refusing behind a working proxy is not an exit fault', async () => {
        const outcome = await get(`http://127.0.0.1:${closedPort}/`, working);
        assert.equal(statusOf(outcome), 594);
        assert.equal((outcome as { body: string }).body, 'Connection Refused');
        assert.notEqual(classifyStatus(594, { viaProxy: true }), 'exit');
    });

    it('takes a status as the exit’s only for 407 and, via a proxy, 590-599; never 502 or 504', () => {
        for (let status = 400; status <= 599; status++) {
            const exit = classifyStatus(status, { viaProxy: true }) === 'exit';
            if (exit) assert.ok(status === 407 || (status >= 590 && status <= 599), String(status));
            if (status !== 407) assert.notEqual(classifyStatus(status), 'exit', `${status} straight from a site`);
        }
        for (const status of [500, 502, 503, 504])
            assert.equal(classifyStatus(status, { viaProxy: true }), 'transient', String(status));
        // The upstream proxy's own failures when proxies are chained: its non-200 to CONNECT, its credentials.
        assert.equal(classifyStatus(590, { viaProxy: true }), 'exit');
        assert.equal(classifyStatus(597, { viaProxy: true }), 'exit');
        assert.equal(classifyStatus(407), 'exit', '407 is a proxy’s status, flagged or not');
    });

    it('leaves the site’s own 403, 429 and 503 through a proxy as blocked, transient, transient', async () => {
        for (const base of [plain, secure]) {
            const statuses = [];
            for (const status of [403, 429, 503]) statuses.push(statusOf(await get(`${base}/${status}`, working)));
            assert.deepEqual(statuses, [403, 429, 503], base);
            assert.deepEqual(
                statuses.map((status) => classifyStatus(status, { viaProxy: true })),
                ['blocked', 'transient', 'transient'],
            );
        }
    });
});

const pick = ({ failureClass, reason }: { failureClass: string; reason: string }) => [failureClass, reason];
