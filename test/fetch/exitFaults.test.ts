/**
 * Exit faults as the HTTP stage meets them: real errors and statuses from got-scraping through real
 * proxy-chain proxies on 127.0.0.1, classified by failures.ts. The HTTPS target's certificate is
 * self-signed, made by openssl for this run in a temporary directory.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { gotScraping } from 'got-scraping';
import { Server } from 'proxy-chain';

import { classifyError, classifyStatus } from '../../src/fetch/failures.js';

type Outcome = { status: number; body: string } | { error: Error };

/** A server answering `/<status>` with that status, on 127.0.0.1. */
const answerStatus = (request: http.IncomingMessage, response: http.ServerResponse) => {
    const status = Number(request.url?.slice(1)) || 200;
    response.writeHead(status, { 'content-type': 'text/html', ...(status === 429 ? { 'retry-after': '5' } : {}) });
    response.end(`<html><body>status ${status}</body></html>`);
};

async function listening<T extends net.Server>(server: T): Promise<number> {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
}

describe('exit faults from real proxies (got-scraping through proxy-chain)', () => {
    const servers: net.Server[] = [];
    const proxies: Server[] = [];
    let certDir: string;
    let plain: string;
    let secure: string;
    /** Asks for user `u`, password `p`. */
    let working: string;
    /** Answers every request and CONNECT with 407, whatever the credentials. */
    let rejecting: string;
    /** A port nothing listens on. */
    let closedPort: number;

    before(async () => {
        certDir = mkdtempSync(join(tmpdir(), 'dragnet-exit-faults-'));
        execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-days', '1', '-keyout', join(certDir, 'key.pem'), '-out', join(certDir, 'cert.pem')], { stdio: 'ignore' });
        const httpServer = http.createServer(answerStatus);
        const httpsServer = https.createServer({ key: readFileSync(join(certDir, 'key.pem')), cert: readFileSync(join(certDir, 'cert.pem')) }, answerStatus);
        servers.push(httpServer, httpsServer);
        plain = `http://127.0.0.1:${await listening(httpServer)}`;
        secure = `https://127.0.0.1:${await listening(httpsServer)}`;

        const good = new Server({
            port: 0,
            host: '127.0.0.1',
            prepareRequestFunction: ({ username, password }) => (username === 'u' && password === 'p' ? {} : { requestAuthentication: true, failMsg: 'Proxy credentials rejected' }),
        });
        const broken = new Server({ port: 0, host: '127.0.0.1', prepareRequestFunction: () => ({ requestAuthentication: true, failMsg: 'Proxy credentials rejected' }) });
        proxies.push(good, broken);
        await good.listen();
        await broken.listen();
        working = `http://u:p@127.0.0.1:${good.port}`;
        rejecting = `http://u:p@127.0.0.1:${broken.port}`;

        const spare = net.createServer();
        closedPort = await listening(spare);
        await new Promise<void>((resolve) => spare.close(() => resolve()));
    });

    after(async () => {
        for (const proxy of proxies) await proxy.close(true);
        for (const server of servers) {
            (server as http.Server).closeAllConnections?.();
            await new Promise<void>((resolve) => server.close(() => resolve()));
        }
        rmSync(certDir, { recursive: true, force: true });
    });

    /** One GET as the HTTP stage makes it (no retries, statuses not thrown), its error caught. */
    async function get(url: string, proxyUrl: string | undefined, http2 = false): Promise<Outcome> {
        try {
            const response = await gotScraping({
                url, proxyUrl, http2, throwHttpErrors: false, followRedirect: false, useHeaderGenerator: false,
                retry: { limit: 0 }, timeout: { request: 5000 }, https: { rejectUnauthorized: false },
            });
            return { status: response.statusCode, body: String(response.body) };
        } catch (error) {
            return { error: error as Error };
        }
    }

    const statusOf = (outcome: Outcome) => ('status' in outcome ? outcome.status : assert.fail(`threw ${(outcome as { error: Error }).error.message}`));
    const errorOf = (outcome: Outcome) => ('error' in outcome ? outcome.error : assert.fail(`answered ${(outcome as { status: number }).status}`));

    it('checks the world first: the working proxy carries both schemes', async () => {
        assert.equal(statusOf(await get(`${plain}/200`, working)), 200);
        assert.equal(statusOf(await get(`${secure}/200`, working)), 200);
        assert.equal(statusOf(await get(`${secure}/200`, working, true)), 200);
    });

    it('an http:// target through a proxy that rejects the credentials: the 407 is a response, classed exit', async () => {
        const outcome = await get(`${plain}/200`, rejecting);
        assert.equal(statusOf(outcome), 407);
        assert.equal((outcome as { body: string }).body, 'Proxy credentials rejected');
        assert.equal(classifyStatus(407, { viaProxy: true }), 'exit');
    });

    it('an https:// target through that proxy: the refused CONNECT throws, classed exit (proxy-auth), over HTTP/1.1 and HTTP/2', async () => {
        const messages: Record<string, string> = {
            // got-scraping's HTTP/1.1 tunnel agent.
            h1: 'The proxy responded with 407 Proxy Authentication Required: Proxy credentials rejected',
            // http2-wrapper's proxy, which also quotes the body.
            h2: 'Proxy responded with 407 Proxy Authentication Required: 26 bytes. Below is the first 100 bytes of the proxy response body: Proxy credentials rejected',
        };
        for (const http2 of [false, true]) {
            const error = errorOf(await get(`${secure}/200`, rejecting, http2));
            const failure = classifyError(error, { viaProxy: true });
            assert.deepEqual([failure.failureClass, failure.reason], ['exit', 'proxy-auth'], failure.message);
            assert.equal(failure.message, messages[http2 ? 'h2' : 'h1']);
            assert.equal(classifyError(error).failureClass, 'exit', 'a message only a proxy gives is the exit’s even unflagged');
        }
    });

    it('a proxy on a closed port: ECONNREFUSED is the exit’s via a proxy, transient (the site’s) without', async () => {
        for (const [url, http2] of [[`${plain}/200`, false], [`${secure}/200`, false], [`${secure}/200`, true]] as const) {
            const error = errorOf(await get(url, `http://u:p@127.0.0.1:${closedPort}`, http2));
            assert.equal((error as Error & { code?: string }).code, 'ECONNREFUSED');
            assert.equal(error.message, `connect ECONNREFUSED 127.0.0.1:${closedPort}`);
            assert.deepEqual(pick(classifyError(error, { viaProxy: true })), ['exit', 'proxy-econnrefused']);
            assert.deepEqual(pick(classifyError(error, { viaProxy: false })), ['transient', 'econnrefused']);
        }
        const direct = errorOf(await get(`http://127.0.0.1:${closedPort}/200`, undefined));
        assert.deepEqual(pick(classifyError(direct)), ['transient', 'econnrefused'], 'the site itself refusing, no proxy');
    });

    it('an https:// target refusing behind a working proxy: proxy-chain drops the tunnel, "socket hang up", transient not exit', async () => {
        for (const http2 of [false, true]) {
            const error = errorOf(await get(`https://127.0.0.1:${closedPort}/`, working, http2));
            assert.equal((error as Error & { code?: string }).code, 'ECONNRESET');
            assert.deepEqual(pick(classifyError(error, { viaProxy: true })), ['transient', 'econnreset'], error.message);
        }
    });

    // A fixed bug, kept as a test (src/fetch/failures.ts, isProxyUpstreamStatus, line 49, used by classifyStatus line 54):
    // proxy-chain answers an http:// request whose *target* refused the connection with 594
    // ("Connection Refused", its badGatewayStatusCodes.CONNECTION_REFUSED; 593 is the target's DNS,
    // 595 a reset by the target, 504 its timeout). Taking all of 590-599 as the exit's makes a site
    // that is down an exit fault: no attempt charged, each retry puts another proxy on its breaker,
    // and after MAX_EXIT_RETRIES (10) it is dead-lettered as `exits-failing`.
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
        for (const status of [500, 502, 503, 504]) assert.equal(classifyStatus(status, { viaProxy: true }), 'transient', String(status));
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
            assert.deepEqual(statuses.map((status) => classifyStatus(status, { viaProxy: true })), ['blocked', 'transient', 'transient']);
        }
    });
});

const pick = ({ failureClass, reason }: { failureClass: string; reason: string }) => [failureClass, reason];
