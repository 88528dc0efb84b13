import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';

import { chromium, type Browser } from 'playwright';

import { CHROMIUM_ARGS } from '../../../src/fetch/browser/chromium.js';
import { Egress, type LookupFunction } from '../../../src/fetch/egress/egress.js';
import { startEgressProxy, type EgressProxy } from '../../../src/fetch/egress/egressProxy.js';

/**
 * A server that must never be reached: counts TCP connections
 * (a CONNECT tunnel or WebSocket included) and requests.
 */
interface Canary {
    server: http.Server;
    connections: number;
    requests: string[];
}

async function listen(server: http.Server, host: string, port: number): Promise<number> {
    await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
            server.off('error', reject);
            resolve();
        });
    });
    return (server.address() as AddressInfo).port;
}

async function canary(host: string, port: number): Promise<Canary> {
    const record: Canary = { server: http.createServer(), connections: 0, requests: [] };
    record.server.on('connection', () => record.connections++);
    record.server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
        record.requests.push(`${request.headers.host} ${request.url}`);
        response.end('window.canaryReached = true;');
    });
    await listen(record.server, host, port);
    return record;
}

const close = (server: http.Server) =>
    new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
    });

describe('startEgressProxy with Chromium', () => {
    let pageServer: http.Server;
    let port: number;
    const pageRequests: string[] = [];
    const canaries: Canary[] = [];
    let otherPortCanary: Canary;
    let otherPort: number;
    const lookedUp: string[] = [];
    let proxy: EgressProxy;
    let browser: Browser;
    const seen = new Map<string, { status?: number; failure?: string }>();
    let reached: { ok: unknown; canary: unknown };
    const webSockets: string[] = [];

    before(async () => {
        pageServer = http.createServer((request, response) => {
            pageRequests.push(request.url ?? '');
            if (request.url === '/') {
                response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
                return response.end(`<!doctype html><html><head><title>egress</title>
<script src="http://127.0.0.1:${port}/ok.js"></script>
<script src="http://127.0.0.2:${port}/canary.js"></script>
<script src="http://evil.test:${port}/x.js"></script>
<script src="https://evil.test:${port}/tunnel.js"></script>
<script src="http://127.0.0.1:${otherPort}/other-port.js"></script>
</head><body>
<img src="http://127.0.0.1:22/ssh.png">
<img src="http://127.0.0.3:${port}/pixel.png">
<script>
for (const url of ['ws://127.0.0.2:${port}/socket', 'ws://evil.test:${port}/socket']) {
    try { new WebSocket(url); } catch {}
}
fetch('http://127.0.0.2:${port}/xhr').catch(() => {});
</script>
</body></html>`);
            }
            if (request.url === '/ok.js') {
                response.writeHead(200, { 'content-type': 'text/javascript' });
                return response.end('window.okLoaded = true;');
            }
            response.writeHead(404).end();
        });
        port = await listen(pageServer, '127.0.0.1', 0);
        // The canaries listen on the page server's port, on loopback addresses the page must not reach.
        canaries.push(await canary('127.0.0.2', port), await canary('127.0.0.3', port));
        otherPortCanary = await canary('127.0.0.1', 0);
        otherPort = (otherPortCanary.server.address() as AddressInfo).port;

        const lookup: LookupFunction = (hostname, _options, callback) => {
            lookedUp.push(hostname);
            const table: Record<string, LookupAddress[]> = { 'evil.test': [{ address: '127.0.0.3', family: 4 }] };
            const found = table[hostname];
            setImmediate(() =>
                found
                    ? callback(null, found)
                    : callback(
                          Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }),
                          [],
                      ),
            );
        };
        proxy = await startEgressProxy(new Egress({ startUrls: [`http://127.0.0.1:${port}/`], lookup }));
        browser = await chromium.launch({
            executablePath: '/usr/bin/chromium',
            args: CHROMIUM_ARGS,
            headless: true,
            // `<-loopback>`: send loopback through the proxy too, which Chromium bypasses by default.
            proxy: { server: proxy.url, bypass: '<-loopback>' },
        });

        const page = await browser.newPage();
        page.on('response', (response) => seen.set(response.url(), { status: response.status() }));
        page.on('requestfailed', (request) => seen.set(request.url(), { failure: request.failure()?.errorText }));
        page.on('websocket', (socket) => webSockets.push(socket.url()));
        await page.goto(`http://127.0.0.1:${port}/`, { waitUntil: 'load', timeout: 20_000 });
        await page.waitForTimeout(500); // the WebSockets and the fetch
        reached = await page.evaluate(() => {
            const set = window as Window & { okLoaded?: unknown; canaryReached?: unknown }; // by the page's scripts
            return { ok: set.okLoaded, canary: set.canaryReached };
        });
        await page.close();
    });

    after(async () => {
        await browser?.close();
        await proxy?.close();
        await Promise.all(
            [pageServer, otherPortCanary?.server, ...canaries.map((c) => c.server)]
                .filter(Boolean)
                .map((server) => close(server!)),
        );
    });

    it('loads the page and its allowed script through the proxy', () => {
        assert.deepEqual(
            pageRequests.filter((url) => url !== '/favicon.ico'),
            ['/', '/ok.js'],
        );
        assert.equal(reached.ok, true, 'ok.js ran');
        assert.equal(seen.get(`http://127.0.0.1:${port}/ok.js`)?.status, 200);
    });

    it('lets nothing reach other loopback addresses on the allowed port', () => {
        for (const record of canaries) {
            assert.equal(record.connections, 0, `${(record.server.address() as AddressInfo).address} was connected to`);
            assert.deepEqual(record.requests, []);
        }
        assert.equal(reached.canary, undefined, 'no canary script ran');
        assert.deepEqual(
            webSockets.sort(),
            [`ws://127.0.0.2:${port}/socket`, `ws://evil.test:${port}/socket`],
            'the WebSockets were tried',
        );
    });

    /** The page asked for `url` (so the test is not passing by never asking) and got nothing usable. */
    function assertAskedAndRefused(url: string) {
        const outcome = seen.get(url);
        assert.ok(outcome, `Chromium never requested ${url}`);
        assert.ok(outcome.failure || outcome.status === 403, `${url}: ${JSON.stringify(outcome)}`);
    }

    it('answers a refused request with the proxy’s 403, and the page goes on', () => {
        // An image shows the proxy's status; a cross-origin script with a 403 is aborted by Chromium.
        assert.equal(seen.get(`http://127.0.0.3:${port}/pixel.png`)?.status, 403);
        assertAskedAndRefused(`http://127.0.0.2:${port}/canary.js`);
        assertAskedAndRefused(`http://127.0.0.2:${port}/xhr`);
        assertAskedAndRefused(`http://evil.test:${port}/x.js`);
        assertAskedAndRefused(`https://evil.test:${port}/tunnel.js`);
    });

    it('refuses a start host on a port no start URL names', () => {
        assertAskedAndRefused(`http://127.0.0.1:${otherPort}/other-port.js`);
        assert.equal(otherPortCanary.connections, 0);
        assert.deepEqual(otherPortCanary.requests, []);
        assertAskedAndRefused('http://127.0.0.1:22/ssh.png');
    });

    it('resolves host names in the proxy with the egress’s lookup, not in Chromium', () => {
        assert.ok(lookedUp.includes('evil.test'), `looked up: ${lookedUp.join(', ')}`);
        // The CONNECT tunnel for https://evil.test failed: no TLS handshake reached 127.0.0.3.
        assert.ok(seen.get(`https://evil.test:${port}/tunnel.js`)?.failure, 'the tunnelled request failed');
    });
});

describe('startEgressProxy with an IPv6 literal host', () => {
    let server: http.Server | undefined;
    let port = 0;

    before(async () => {
        const candidate = http.createServer((_request, response) => response.end('v6 ok'));
        port = await listen(candidate, '::1', 0).catch(() => 0);
        if (port) server = candidate;
    });
    after(() => server && close(server));

    /** A plain-HTTP proxy request, as Chromium sends one: the absolute URL as the request target. */
    async function viaProxy(egress: Egress, target: string) {
        const proxy = await startEgressProxy(egress);
        try {
            const { hostname, port: proxyPort } = new URL(proxy.url);
            return await new Promise<{ status?: number; body: string }>((resolve, reject) => {
                http.get(
                    {
                        host: hostname,
                        port: proxyPort,
                        path: target,
                        headers: { host: new URL(target).host },
                        agent: false,
                    },
                    (response) => {
                        let body = '';
                        response.setEncoding('utf8');
                        response.on('data', (chunk: string) => (body += chunk));
                        response.on('end', () => resolve({ status: response.statusCode, body }));
                    },
                ).once('error', reject);
            });
        } finally {
            await proxy.close();
        }
    }

    const noDns: LookupFunction = (hostname, _options, callback) =>
        callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);

    // proxy-chain hands prepareRequestFunction the WHATWG hostname, brackets included (`[::1]`):
    // bracketed again, `new URL('http://[[::1]]:…/')` would throw and the proxy answer 500.

    it('forwards to an allowed IPv6 literal start host', async (t) => {
        if (!server) return t.skip('no IPv6 loopback here');
        const target = `http://[::1]:${port}/`;
        const result = await viaProxy(new Egress({ startUrls: [target], lookup: noDns }), target);
        assert.deepEqual(result, { status: 200, body: 'v6 ok' });
    });

    it('refuses a loopback IPv6 literal with the proxy’s 403', async (t) => {
        if (!server) return t.skip('no IPv6 loopback here');
        const result = await viaProxy(
            new Egress({ startUrls: [`http://shop.example:${port}/`], lookup: noDns }),
            `http://[::1]:${port}/`,
        );
        assert.equal(result.status, 403);
        assert.notEqual(result.body, 'v6 ok');
    });
});
