/**
 * The wire recorder (test/helpers/wireRecorder.ts) against real clients: undici over HTTP/2, Node's
 * https over HTTP/1.1, and Chromium, whose fingerprint (GREASE, permuted extensions, its SETTINGS)
 * is what the recorder exists to see.
 */
import assert from 'node:assert/strict';
import { get } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { type Browser, chromium } from 'playwright';
import { Agent, request } from 'undici';
import { CHROMIUM_ARGS, findChromium } from '../../../src/fetch/browser/chromium.js';
import { akamaiFingerprint, startWireRecorder } from '../../helpers/wireRecorder.js';

/** A name for the recorder, so clients send SNI as to a site: none goes with an IP (JA4 `t13i…`). */
const HOST = 'wire.test';

describe('the wire recorder', () => {
    it('records undici over HTTP/2: no GREASE, its SETTINGS, its pseudo-header and header order', async (t) => {
        const recorder = await startWireRecorder();
        const agent = new Agent({ allowH2: true, connect: { rejectUnauthorized: false, servername: HOST } });
        t.after(async () => {
            await agent.close();
            await recorder.close();
        });

        const response = await request(`${recorder.origin}/api?q=1`, {
            dispatcher: agent,
            headers: { 'x-second': '2', 'x-first': '1' },
        });
        assert.match(await response.body.text(), /<title>wire<\/title>/);

        const [connection] = recorder.connections;
        assert.equal(recorder.connections.length, 1);
        assert.equal(connection!.protocol, 'h2');
        assert.equal(connection!.serverName, HOST);
        assert.deepEqual(connection!.alpn, ['http/1.1', 'h2']);
        assert.match(connection!.ja4, /^t13d\d{4}h1_/); // undici offers http/1.1 first
        assert.deepEqual(connection!.grease, {
            ciphers: false,
            extensions: false,
            groups: false,
            signatureAlgorithms: false,
        });
        // Node's http2 client as undici 7 sets it up: no server push, a 256 KiB stream window.
        assert.deepEqual(connection!.settings, [
            [2, 0],
            [4, 262144],
        ]);
        assert.ok(connection!.windowUpdate! > 0);

        const [recorded] = recorder.requests;
        assert.equal(recorded!.protocol, 'h2');
        assert.equal(recorded!.connection, 0);
        assert.equal(recorded!.url, '/api?q=1');
        assert.deepEqual(recorded!.pseudoHeaderOrder, [':authority', ':method', ':path', ':scheme']);
        assert.deepEqual(recorded!.headerOrder, ['x-second', 'x-first']);
        console.log('undici:', {
            ja4: connection!.ja4,
            extensions: connection!.extensions,
            akamai: akamaiFingerprint(connection!, recorded!),
        });
    });

    it('records an HTTP/1.1 client: its headers in the order sent, their case kept; and answers as told', async (t) => {
        const recorder = await startWireRecorder({ handler: () => ({ status: 418, body: 'teapot' }) });
        t.after(() => recorder.close());

        const headers = { 'X-Zeta': 'z', Accept: '*/*', 'x-alpha': 'a' };
        const { status, body } = await new Promise<{ status?: number; body: string }>((resolve, reject) => {
            get(`${recorder.origin}/plain`, { rejectUnauthorized: false, headers }, (response) => {
                let body = '';
                response.setEncoding('utf8').on('data', (chunk: string) => {
                    body += chunk;
                });
                response.on('end', () => resolve({ status: response.statusCode, body }));
            }).on('error', reject);
        });
        assert.deepEqual({ status, body }, { status: 418, body: 'teapot' });

        const [connection] = recorder.connections;
        assert.equal(connection!.protocol, 'http/1.1');
        assert.deepEqual(connection!.alpn, []);
        assert.equal(connection!.serverName, undefined);
        assert.match(connection!.ja4, /^t13i\d{4}00_/);
        assert.deepEqual(connection!.settings, []);

        const [recorded] = recorder.requests;
        assert.equal(recorded!.protocol, 'http/1.1');
        assert.equal(recorded!.method, 'GET');
        assert.equal(recorded!.url, '/plain');
        assert.deepEqual(recorded!.pseudoHeaderOrder, []);
        assert.deepEqual(recorded!.headerOrder, ['X-Zeta', 'Accept', 'x-alpha', 'Host', 'Connection']);
        assert.equal(recorded!.headers['x-zeta'], 'z');
    });

    const executablePath = findChromium();
    describe('with Chromium', { skip: executablePath ? false : 'no Chromium found' }, () => {
        let browser: Browser | undefined;
        before(async () => {
            browser = await chromium.launch({
                executablePath,
                args: [...CHROMIUM_ARGS, `--host-resolver-rules=MAP ${HOST} 127.0.0.1`],
            });
        });
        after(() => browser?.close());

        it('records its GREASE, its permuted extensions under one JA4, its SETTINGS and header order', async (t) => {
            const recorder = await startWireRecorder();
            t.after(() => recorder.close());

            // Each context has a connection pool and TLS session cache of its own: two full handshakes.
            for (let visit = 0; visit < 2; visit++) {
                const context = await browser!.newContext({ ignoreHTTPSErrors: true });
                const page = await context.newPage();
                await page.goto(`https://${HOST}:${recorder.port}/page`);
                assert.equal(await page.title(), 'wire');
                await context.close();
            }

            const pages = recorder.requests.filter((request) => request.url === '/page');
            assert.equal(pages.length, 2);
            const [first, second] = pages.map((request) => recorder.connections[request.connection]!);
            assert.notEqual(pages[0]!.connection, pages[1]!.connection);
            for (const connection of [first!, second!]) {
                assert.equal(connection.protocol, 'h2');
                assert.equal(connection.serverName, HOST);
                assert.deepEqual(connection.grease, {
                    ciphers: true,
                    extensions: true,
                    groups: true,
                    signatureAlgorithms: true,
                });
                assert.ok(connection.settings.some(([id, value]) => id === 1 && value === 65536));
                assert.ok(connection.settings.some(([id, value]) => id === 4 && value === 6291456));
                assert.equal(connection.windowUpdate, 15663105);
            }
            assert.match(first!.ja4, /^t13d\d{4}h2_/);
            assert.equal(second!.ja4, first!.ja4);
            assert.notDeepEqual(second!.extensions, first!.extensions);

            const [page] = pages;
            assert.deepEqual(page!.pseudoHeaderOrder, [':method', ':authority', ':scheme', ':path']);
            console.log('Chromium:', {
                ja4: first!.ja4,
                ja3: first!.ja3,
                extensions: [first!.extensions, second!.extensions],
                settings: first!.settings,
                windowUpdate: first!.windowUpdate,
                priorityFrames: first!.priorityFrames,
                headersPriority: page!.priority,
                akamai: akamaiFingerprint(first!, page!),
                pseudoHeaderOrder: page!.pseudoHeaderOrder,
                headerOrder: page!.headerOrder,
                userAgent: page!.headers['user-agent'],
                secChUa: page!.headers['sec-ch-ua'],
            });
        });
    });
});
