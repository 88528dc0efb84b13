/**
 * The HTTP client (src/fetch/http/httpClient.ts, connector.ts) against real servers on 127.0.0.1: an
 * HTTP/1.1 server, an HTTPS server speaking HTTP/2 and HTTP/1.1 (its certificate self-signed, made
 * by openssl for this run in a temporary directory), and a real proxy-chain proxy.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import tls from 'node:tls';
import zlib from 'node:zlib';

import { Server } from 'proxy-chain';

import { classifyError } from '../../../src/fetch/failures/failures.js';
import { type ClientResponse, HttpClient } from '../../../src/fetch/http/httpClient.js';
import { readBody } from '../../../src/fetch/http/responseBody.js';
import { selfSignedCert } from '../../helpers/selfSignedCert.js';

const PAGE = `<html><body>${'hello, world. '.repeat(500)}</body></html>`;

/** What a server saw of one request. */
interface Seen {
    path: string;
    version: string;
    rawHeaders: string[];
}

/** Answers the paths below; records every request it sees and every connection it accepts. */
function handler(seen: Seen[]) {
    return (
        request: http.IncomingMessage | http2.Http2ServerRequest,
        response: http.ServerResponse | http2.Http2ServerResponse,
    ) => {
        const path = request.url ?? '/';
        seen.push({ path, version: request.httpVersion, rawHeaders: request.rawHeaders });
        const out = response as http.ServerResponse;
        const send = (status: number, headers: Record<string, string>, body: Buffer | string = '') => {
            out.writeHead(status, headers);
            out.end(body);
        };
        if (path === '/page') return send(200, { 'content-type': 'text/html' }, PAGE);
        if (path === '/gzip')
            return send(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' }, zlib.gzipSync(PAGE));
        if (path === '/br')
            return send(200, { 'content-type': 'text/html', 'content-encoding': 'br' }, zlib.brotliCompressSync(PAGE));
        if (path === '/deflate')
            return send(200, { 'content-type': 'text/html', 'content-encoding': 'deflate' }, zlib.deflateSync(PAGE));
        // A gzip body cut short: a browser shows what it has.
        if (path === '/gzip-cut')
            return send(
                200,
                { 'content-type': 'text/html', 'content-encoding': 'gzip' },
                zlib.gzipSync(PAGE).subarray(0, 200),
            );
        if (path === '/trickle') {
            out.writeHead(200, { 'content-type': 'text/html' });
            const timer = setInterval(() => out.write('.'), 100);
            out.once('close', () => clearInterval(timer));
            return;
        }
        if (path.startsWith('/hop/')) {
            const hop = Number(path.slice(5));
            return send(302, { location: hop === 0 ? '/page' : `/hop/${hop - 1}` });
        }
        send(404, { 'content-type': 'text/plain' }, 'not here');
    };
}

async function listen(server: http.Server | http2.Http2SecureServer): Promise<number> {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
}

async function text(response: ClientResponse): Promise<string> {
    return (await readBody(response, 10 * 1024 * 1024)).toString('utf8');
}

describe('the HTTP client', () => {
    const seen: Seen[] = [];
    let key: Buffer;
    let cert: Buffer;
    let plainServer: http.Server;
    let secureServer: http2.Http2SecureServer;
    let plain: string;
    let secure: string;
    let proxy: Server;
    let proxyUrl: string;
    let tunnelsOpened = 0;
    let plainConnections = 0;
    const client = new HttpClient();

    before(async () => {
        ({ key, cert } = selfSignedCert('shop.test'));
        plainServer = http.createServer(handler(seen));
        plainServer.on('connection', () => (plainConnections += 1));
        secureServer = http2.createSecureServer({ key, cert, allowHTTP1: true }, handler(seen));
        plain = `http://127.0.0.1:${await listen(plainServer)}`;
        secure = `https://127.0.0.1:${await listen(secureServer)}`;
        proxy = new Server({
            port: 0,
            host: '127.0.0.1',
            prepareRequestFunction: ({ username, password, isHttp }) => {
                if (!isHttp) tunnelsOpened += 1;
                return username === 'u' && password === 'p' ? {} : { requestAuthentication: true };
            },
        });
        await proxy.listen();
        proxyUrl = `http://u:p@127.0.0.1:${proxy.port}`;
    });

    after(async () => {
        await client.close();
        await proxy.close(true);
        plainServer.closeAllConnections();
        await new Promise<void>((resolve) => plainServer.close(() => resolve()));
        await new Promise<void>((resolve) => secureServer.close(() => resolve()));
    });

    const lastSeen = (path: string) => seen.filter((record) => record.path.endsWith(path)).at(-1)!;

    it('sends the headers in the order given, in Chrome’s HTTP/1.1 casing, the client hints lower-case', async () => {
        const headers = {
            'sec-ch-ua': '"Chromium";v="124"',
            'sec-ch-ua-mobile': '?0',
            'user-agent': 'Mozilla/5.0 Chrome/124.0',
            accept: 'text/html',
            'accept-language': 'en-US',
        };
        assert.equal(await text(await client.fetch({ url: `${plain}/page`, headers, timeoutMs: 5000 })), PAGE);
        const names = lastSeen('/page').rawHeaders.filter((_, index) => index % 2 === 0);
        assert.deepEqual(
            names.filter((name) => !['host', 'connection'].includes(name)),
            ['sec-ch-ua', 'sec-ch-ua-mobile', 'User-Agent', 'Accept', 'Accept-Language'],
        );
    });

    it('speaks HTTP/2 where the server offers it, sending the names lower-case, in order', async () => {
        const response = await client.fetch({
            url: `${secure}/page`,
            headers: { 'user-agent': 'UA', accept: 'text/html' },
            timeoutMs: 5000,
        });
        assert.equal(await text(response), PAGE);
        const record = lastSeen('/page');
        assert.equal(record.version, '2.0');
        assert.deepEqual(
            record.rawHeaders.filter((name, index) => index % 2 === 0 && !name.startsWith(':')),
            ['user-agent', 'accept'],
        );
    });

    it('offers h2 before http/1.1 in its TLS hello, as Chrome does', async () => {
        const offers: string[][] = [];
        // A TLS server that only records the offer and answers one HTTP/1.1 response.
        const server = tls.createServer(
            {
                key,
                cert,
                ALPNCallback: ({ protocols }) => {
                    offers.push(protocols);
                    return 'http/1.1';
                },
            },
            (socket) => {
                socket.once('data', () =>
                    socket.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok'),
                );
            },
        );
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        try {
            const response = await client.fetch({
                url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/`,
                timeoutMs: 5000,
            });
            assert.equal(await text(response), 'ok');
            assert.deepEqual(offers, [['h2', 'http/1.1']]);
        } finally {
            await new Promise<void>((resolve) => server.close(() => resolve()));
        }
    });

    it('decodes gzip, deflate and brotli bodies, and a gzip body cut short as far as it goes', async () => {
        for (const path of ['/gzip', '/br', '/deflate'])
            assert.equal(await text(await client.fetch({ url: `${plain}${path}`, timeoutMs: 5000 })), PAGE, path);
        const cut = await text(await client.fetch({ url: `${plain}/gzip-cut`, timeoutMs: 5000 }));
        assert.ok(cut.length > 0 && PAGE.startsWith(cut), `the first ${cut.length} characters of the page`);
    });

    it('resolves a direct connection’s host by its lookup only, and fails with the lookup’s error', async () => {
        const asked: string[] = [];
        const pinned = new HttpClient({
            lookup: (hostname, options, callback) => {
                asked.push(hostname);
                if (hostname === 'refused.test')
                    return callback(
                        Object.assign(new Error('forbidden-address: refused.test is not allowed'), {
                            code: 'ERR_FORBIDDEN_ADDRESS',
                        }),
                        '',
                    );
                const all = typeof options === 'object' && options.all;
                return all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4);
            },
        });
        try {
            const port = new URL(plain).port;
            assert.equal(
                await text(await pinned.fetch({ url: `http://shop.test:${port}/page`, timeoutMs: 5000 })),
                PAGE,
            );
            assert.equal(
                lastSeen('/page').rawHeaders[lastSeen('/page').rawHeaders.indexOf('host') + 1],
                `shop.test:${port}`,
            );
            const error = await pinned.fetch({ url: `http://refused.test:${port}/page`, timeoutMs: 5000 }).then(
                () => assert.fail('connected to a refused host'),
                (rejected: unknown) => rejected,
            );
            assert.deepEqual(pick(classifyError(error)), ['permanent', 'forbidden-address']);
            assert.deepEqual(asked, ['shop.test', 'refused.test']);
        } finally {
            await pinned.close();
        }
    });

    it('keeps connections alive: ten requests in a row use one', async () => {
        const before = plainConnections;
        for (let i = 0; i < 10; i++) await text(await client.fetch({ url: `${plain}/page`, timeoutMs: 5000 }));
        assert.ok(plainConnections - before <= 1, `${plainConnections - before} connections for 10 requests`);
    });

    it(`goes through a proxy: https:// by one kept tunnel, http:// \
as absolute-form requests with the proxy’s credentials`, async () => {
        const tunnelsBefore = tunnelsOpened;
        for (let i = 0; i < 5; i++)
            assert.equal(await text(await client.fetch({ url: `${secure}/page`, proxyUrl, timeoutMs: 5000 })), PAGE);
        assert.equal(tunnelsOpened - tunnelsBefore, 1, 'one CONNECT for five requests');
        assert.equal(lastSeen('/page').version, '2.0', 'HTTP/2 inside the tunnel');
        assert.equal(await text(await client.fetch({ url: `${plain}/page`, proxyUrl, timeoutMs: 5000 })), PAGE);
        const wrong = await client.fetch({
            url: `${plain}/page`,
            proxyUrl: proxyUrl.replace('u:p', 'u:nope'),
            timeoutMs: 5000,
        });
        assert.equal(wrong.statusCode, 407);
        wrong.destroy();
    });

    it('bounds the whole exchange: a body that trickles fails as etimedout at the timeout', async () => {
        const started = Date.now();
        const response = await client.fetch({ url: `${plain}/trickle`, timeoutMs: 600 });
        const error = await text(response).then(
            () => assert.fail('read a body that never ends'),
            (rejected: unknown) => rejected,
        );
        const elapsed = Date.now() - started;
        assert.deepEqual(pick(classifyError(error)), ['transient', 'etimedout']);
        assert.ok(elapsed >= 550 && elapsed < 1500, `gave up after ${elapsed} ms`);
    });

    it('does not fail a request answered in time when the thread was busy past the timeout', async () => {
        // A server in a process of its own, so it answers while this thread is busy.
        const server = spawn(process.execPath, [
            '-e',
            `require('node:http').createServer((q, s) => s.end(${JSON.stringify(PAGE)})).listen(0, ` +
                `'127.0.0.1', function () { console.log(this.address().port); })`,
        ]);
        try {
            const port = await new Promise<string>((resolve) =>
                server.stdout.once('data', (data: Buffer) => resolve(data.toString().trim())),
            );
            const url = `http://127.0.0.1:${port}/`;
            await text(await client.fetch({ url, timeoutMs: 5000 })); // a kept-alive connection to send on
            // Once the request is on the wire, this thread is busy for 400 ms: the answer arrives meanwhile, and the
            // 200 ms timeout is overdue when the thread comes back (as when a browser starts beside the crawl).
            // undici announces the headers before it writes them, so the wait starts on the next tick, after the write.
            const busy = () =>
                process.nextTick(() => {
                    const until = Date.now() + 400;
                    while (Date.now() < until);
                });
            subscribe('undici:client:sendHeaders', busy);
            try {
                assert.equal(await text(await client.fetch({ url, timeoutMs: 200 })), PAGE);
            } finally {
                unsubscribe('undici:client:sendHeaders', busy);
            }
        } finally {
            server.kill();
        }
    });

    it('ends a request when its signal aborts, and lets a reader drop a body without an error', async () => {
        const abort = new AbortController();
        const response = await client.fetch({ url: `${plain}/trickle`, timeoutMs: 10_000, signal: abort.signal });
        setTimeout(() => abort.abort(new Error('stopped')), 100);
        await assert.rejects(text(response), /stopped/);
        const dropped = await client.fetch({ url: `${plain}/trickle`, timeoutMs: 10_000 });
        const closed = new Promise((resolve) => dropped.once('close', resolve));
        dropped.destroy();
        await closed;
    });

    it('follows redirects up to its limit, checking each hop, the timeout over the whole chain', async () => {
        const hops: string[] = [];
        const followed = await client.fetchFollowing({
            url: `${plain}/hop/3`,
            timeoutMs: 5000,
            maxRedirects: 5,
            checkHop: (url) => void hops.push(url.pathname),
        });
        assert.equal(followed.statusCode, 200);
        assert.equal(await text(followed), PAGE);
        assert.deepEqual(hops, ['/hop/2', '/hop/1', '/hop/0', '/page']);
        const cut = await client.fetchFollowing({ url: `${plain}/hop/3`, timeoutMs: 5000, maxRedirects: 2 });
        assert.equal(cut.statusCode, 302, 'past the limit, the last redirect');
        cut.destroy();
        await assert.rejects(
            client.fetchFollowing({
                url: `${plain}/hop/3`,
                timeoutMs: 5000,
                maxRedirects: 5,
                checkHop: (url) => assert.notEqual(url.pathname, '/hop/1', 'refused'),
            }),
            /refused/,
        );
    });
});

const pick = ({ failureClass, reason }: { failureClass: string; reason: string }) => [failureClass, reason];
