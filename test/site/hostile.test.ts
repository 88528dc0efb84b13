/**
 * The hostile fixture server (hostile.ts) itself, asked with plain node:http requests: that each
 * case serves what HOSTILE_CASES says, that the endless ones stop when their client leaves, and
 * that serving the bombs costs the server next to no memory.
 */
import assert from 'node:assert/strict';
import { get as httpGet, type IncomingHttpHeaders } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createBrotliDecompress, createGunzip } from 'node:zlib';
import { load } from 'cheerio';
import iconv from 'iconv-lite';
import { textOf, numberOf } from '../../src/site/site.js';
import {
    BOMB_BYTES,
    CHAIN_HOPS,
    DEEP_NESTING,
    HOSTILE_CASES,
    LONG_LINK_LENGTH,
    MANY_LINKS,
    NORMAL_PRODUCTS,
    startHostileSite,
    type HostileSite,
} from './hostile.js';
import hostileSite from './hostileSite.js';

const MiB = 1 << 20;
const ENDLESS = new Set(['/huge-declared', '/huge-streamed', '/trickle', '/slow-headers']);

let site: HostileSite;
let rssBeforeStart: number;

before(async () => {
    rssBeforeStart = process.memoryUsage().rss;
    site = await startHostileSite();
});
after(() => site.close());

interface Reply {
    status: number;
    headers: IncomingHttpHeaders;
    body: Buffer;
}

/** A GET of `path` as sent, its body as raw bytes (no decoding, no decompression), on a connection of its own. */
function get(path: string, headers: Record<string, string> = {}): Promise<Reply> {
    return new Promise((resolve, reject) => {
        httpGet({ host: '127.0.0.1', port: site.port, path, headers, agent: false }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () =>
                resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
            );
            res.on('error', reject);
        }).on('error', reject);
    });
}

/** Bytes out of `decompressor` fed `body`, stopping (and ending it) once past `limit`. */
function inflatedSize(
    body: Buffer,
    decompressor: ReturnType<typeof createGunzip | typeof createBrotliDecompress>,
    limit = Infinity,
): Promise<number> {
    let size = 0;
    return new Promise((resolve, reject) => {
        decompressor.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > limit) {
                decompressor.destroy();
                resolve(size);
            }
        });
        decompressor.on('end', () => resolve(size)).on('error', reject);
        decompressor.end(body);
    });
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 3000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (!condition()) {
        if (Date.now() > until) assert.fail(`timed out waiting for ${what}`);
        await sleep(20);
    }
}

const title = (html: string) => textOf(load(html, { _useHtmlParser2: true } as never), 'h1.title');
const caseFor = (path: string) => HOSTILE_CASES.find((hostileCase) => hostileCase.path === path)!;

describe('the hostile site', () => {
    it('links every product and every case from its index, with its class', async () => {
        const $ = load((await get('/')).body.toString('utf8'));
        const links = $('a')
            .toArray()
            .map((a) => [$(a).attr('class'), $(a).attr('href')]);
        const expected = [
            ...NORMAL_PRODUCTS.map(({ path }) => ['p', path]),
            ...HOSTILE_CASES.map(({ path, href, linkClass }) => [
                linkClass,
                href?.({ port: site.port, offsiteOrigin: `http://127.0.0.2:${site.port}` }) ?? path,
            ]),
        ];
        assert.deepEqual(links, expected);
        assert.ok(
            links.some(([, href]) => href === `http://2130706433:${site.port}/decimal`),
            'the odd spellings are written as is',
        );
        assert.ok(links.some(([, href]) => href?.length === LONG_LINK_LENGTH));
        assert.equal((await get('/robots.txt')).body.toString(), 'User-agent: *\nAllow: /\n');
    });

    it('serves small valid product pages', async () => {
        for (const { path, expected } of NORMAL_PRODUCTS) {
            const { status, headers, body } = await get(path);
            assert.equal(status, 200);
            assert.equal(headers['content-type'], 'text/html; charset=utf-8');
            const $ = load(body.toString('utf8'));
            assert.deepEqual({ title: textOf($, 'h1.title'), price: numberOf($, 'p.price') }, expected, path);
        }
        assert.match((await get('/products/1')).body.toString(), /<p class="price">£12\.50<\/p>/);
    });

    it('answers every case a crawler may ask for (none is a 404)', async () => {
        for (const { path, neverAsked } of HOSTILE_CASES) {
            if (!path.startsWith('/') || neverAsked || ENDLESS.has(path) || path === '/lying-length') continue;
            assert.notEqual((await get(path)).status, 404, path);
        }
    });

    it('records each request with its Host header and target', async () => {
        const from = site.asked.length;
        await get('/products/2?x=1', { host: `shop.hostile.test:${site.port}` });
        assert.deepEqual(site.asked.slice(from), [{ host: `shop.hostile.test:${site.port}`, path: '/products/2?x=1' }]);
    });

    it(`answers the 100 KiB link with 414, and records it \
(Node would refuse the head itself over 16 KiB)`, async () => {
        const { path } = HOSTILE_CASES.find(({ path }) => path.startsWith('/long/'))!;
        assert.equal((await get(path)).status, 414);
        assert.equal(site.asked.at(-1)?.path.length, LONG_LINK_LENGTH);
    });

    it('sends bombs that are small on the wire and inflate past 10 MiB, at next to no cost to its memory', async () => {
        const rssBefore = process.memoryUsage().rss;
        for (const [path, encoding, wireLimit, decompressor] of [
            ['/gzip-bomb', 'gzip', 2 * MiB, createGunzip],
            ['/brotli-bomb', 'br', 64 * 1024, createBrotliDecompress],
        ] as const) {
            for (let i = 0; i < 5; i++) {
                const { headers, body } = await get(path, { 'accept-encoding': 'gzip, br' });
                assert.equal(headers['content-encoding'], encoding);
                assert.equal(Number(headers['content-length']), body.length);
                assert.ok(body.length < wireLimit, `${path}: ${body.length} bytes on the wire`);
                assert.ok((await inflatedSize(body, decompressor(), 11 * MiB)) > 10 * MiB, path);
            }
        }
        const grown = (process.memoryUsage().rss - rssBefore) / MiB;
        assert.ok(grown < 64, `rss grew ${grown.toFixed(0)} MiB serving 10 bombs`);
        const sinceStart = (process.memoryUsage().rss - rssBeforeStart) / MiB;
        assert.ok(
            sinceStart < 200,
            `rss grew ${sinceStart.toFixed(0)} MiB since before the ` +
                `server started (the bombs are built without holding them)`,
        );
    });

    it(`builds each bomb as one valid stream of exactly BOMB_BYTES \
(its segments are repeated, not compressed)`, async () => {
        for (const [path, decompressor] of [
            ['/gzip-bomb', createGunzip],
            ['/brotli-bomb', createBrotliDecompress],
        ] as const) {
            const { body } = await get(path);
            assert.equal(await inflatedSize(body, decompressor({ chunkSize: 4 * MiB })), BOMB_BYTES, path);
        }
    });

    it('encodes each charset page so that its bytes decode to the expected title', async () => {
        const pages: Array<[path: string, contentType: string, decode: (bytes: Buffer) => string]> = [
            ['/invalid-utf8', 'text/html; charset=utf-8', (bytes) => new TextDecoder('utf-8').decode(bytes)],
            ['/cp1252-meta', 'text/html', (bytes) => iconv.decode(bytes, 'windows-1252')],
            ['/sjis-header', 'text/html; charset=Shift_JIS', (bytes) => iconv.decode(bytes, 'Shift_JIS')],
            ['/utf16-bom', 'text/html', (bytes) => new TextDecoder('utf-16le').decode(bytes)],
            ['/header-vs-meta', 'text/html; charset=utf-8', (bytes) => new TextDecoder('utf-8').decode(bytes)],
        ];
        for (const [path, contentType, decode] of pages) {
            const { headers, body } = await get(path);
            assert.equal(headers['content-type'], contentType, path);
            assert.equal(title(decode(body)), caseFor(path).expected.title, path);
        }
        const { body: utf16 } = await get('/utf16-bom');
        assert.deepEqual([...utf16.subarray(0, 2)], [0xff, 0xfe]);
        const { body: cp1252 } = await get('/cp1252-meta');
        assert.match(cp1252.toString('latin1'), /<meta charset="windows-1252">/);
        assert.ok(cp1252.includes(Buffer.from([0x96, 0x20, 0x35, 0x80])), '– 5€ in windows-1252 bytes');
        const { body: both } = await get('/header-vs-meta');
        assert.notEqual(
            title(iconv.decode(both, 'windows-1252')),
            caseFor('/header-vs-meta').expected.title,
            'the meta, if obeyed, gives another title',
        );
    });

    it('serves the malformed page so that htmlparser2 still finds its title', async () => {
        assert.equal(title((await get('/malformed')).body.toString('utf8')), 'Malformed ok');
    });

    it('serves a page of MANY_LINKS item links, and the items', async () => {
        const $ = load((await get('/many-links')).body.toString('utf8'));
        const hrefs = $('a.m')
            .toArray()
            .map((a) => $(a).attr('href'));
        assert.equal(hrefs.length, MANY_LINKS);
        assert.equal(hrefs[42], '/many-links/item/42');
        assert.equal(title((await get('/many-links/item/42')).body.toString()), 'Item 42');
        assert.equal((await get(`/many-links/item/${MANY_LINKS}`)).status, 404);
    });

    it('nests /deep DEEP_NESTING divs deep around its title', async () => {
        const html = (await get('/deep')).body.toString('utf8');
        assert.equal(html.split('<div>').length - 1, DEEP_NESTING);
        assert.equal(html.split('</div>').length - 1, DEEP_NESTING);
        assert.match(html, /<div><h1 class="title">Deep title<\/h1><\/div>/);
    });

    it('redirects in a loop, down a long chain, off-site and to the metadata address', async () => {
        assert.deepEqual(
            [(await get('/redirect-loop-a')).status, (await get('/redirect-loop-a')).headers.location],
            [301, '/redirect-loop-b'],
        );
        assert.deepEqual(
            [(await get('/redirect-loop-b')).status, (await get('/redirect-loop-b')).headers.location],
            [301, '/redirect-loop-a'],
        );
        for (let hop = 0; hop < CHAIN_HOPS; hop++) {
            const { status, headers } = await get(`/chain/${hop}`);
            assert.deepEqual([status, headers.location], [302, `/chain/${hop + 1}`]);
        }
        assert.equal(title((await get(`/chain/${CHAIN_HOPS}`)).body.toString()), 'Chain end');
        assert.equal((await get('/redirect-offsite')).headers.location, `http://127.0.0.2:${site.port}/x`);
        assert.equal((await get('/redirect-metadata')).headers.location, 'http://169.254.169.254/latest/meta-data/');
    });

    it('serves binary bytes as text/html, and a PDF', async () => {
        const binary = await get('/binary');
        assert.equal(binary.headers['content-type'], 'text/html');
        assert.equal(binary.body.length, 64 * 1024);
        assert.ok(binary.body.filter((byte) => byte === 0).length >= 4096);
        const pdf = await get('/pdf');
        assert.equal(pdf.headers['content-type'], 'application/pdf');
        assert.match(pdf.body.toString('latin1'), /^%PDF-/);
    });

    it('gives the extractor traps their titles; the site module throws on THROW', async () => {
        const product = hostileSite.routes.get('product')!;
        const extract = (html: string) =>
            product.extract!(load(html, { _useHtmlParser2: true } as never), {
                url: new URL(site.origin),
                label: 'product',
                renderer: 'http',
                userData: {},
            });
        const throws = (await get('/throws')).body.toString();
        assert.throws(() => extract(throws), /told to throw/);
        assert.equal(title((await get('/hangs')).body.toString()), 'HANG');
        assert.deepEqual(extract((await get('/products/3')).body.toString()), NORMAL_PRODUCTS[2]!.expected);
    });

    it('ends /lying-length short of its Content-Length', async () => {
        const { headers, received, aborted } = await new Promise<{
            headers: IncomingHttpHeaders;
            received: number;
            aborted: boolean;
        }>((resolve, reject) => {
            httpGet({ host: '127.0.0.1', port: site.port, path: '/lying-length', agent: false }, (res) => {
                let received = 0;
                res.on('data', (chunk: Buffer) => (received += chunk.length));
                res.on('error', () => undefined); // "aborted": the premature close itself
                res.on('close', () => resolve({ headers: res.headers, received, aborted: !res.complete }));
            }).on('error', reject);
        });
        assert.equal(headers['content-length'], '100000');
        assert.equal(received, 10);
        assert.ok(aborted);
    });

    it('stops writing each endless response when its client goes away', async () => {
        /** Opens `path`, hands the response to `until` to decide when to leave, then leaves. */
        const openThenLeave = (
            path: string,
            until: (res: import('node:http').IncomingMessage, leave: () => void) => void,
            leaveAfterMs?: number,
        ) =>
            new Promise<void>((resolve) => {
                const request = httpGet({ host: '127.0.0.1', port: site.port, path, agent: false }, (res) => {
                    res.on('error', () => undefined);
                    until(res, () => {
                        request.destroy();
                        resolve();
                    });
                });
                request.on('error', () => undefined);
                if (leaveAfterMs !== undefined)
                    setTimeout(() => {
                        request.destroy();
                        resolve();
                    }, leaveAfterMs);
            });

        await openThenLeave('/huge-streamed', (res, leave) => {
            let received = 0;
            res.on('data', (chunk: Buffer) => {
                received += chunk.length;
                if (received >= 3 * MiB) leave();
            });
        });
        await waitFor(() => site.openStreams === 0, '/huge-streamed to stop');
        const sent = site.peakBytesSent;
        await sleep(300);
        assert.equal(site.peakBytesSent, sent, 'nothing written after the client left');
        // What the client read, plus the kernel's socket buffers on both ends, plus a chunk.
        assert.ok(sent < 3 * MiB + 32 * MiB, `${sent} bytes sent`);
        assert.ok(site.peakBuffered <= 2 * MiB, `${site.peakBuffered} bytes queued in the server at once`);

        await openThenLeave('/huge-declared', (res, leave) => {
            assert.equal(res.headers['content-length'], '2147483648');
            res.once('data', (chunk: Buffer) => {
                assert.equal(chunk.toString(), '<html>');
                leave();
            });
        });

        const trickleStarted = Date.now();
        await openThenLeave('/trickle', (res, leave) => {
            assert.ok(Date.now() - trickleStarted < 900, 'headers at once');
            let received = 0;
            res.on('data', (chunk: Buffer) => {
                received += chunk.length;
                if (received >= 2) leave();
            });
        });
        assert.ok(Date.now() - trickleStarted >= 900, 'the second byte a second later');

        let answered = false;
        await openThenLeave('/slow-headers', () => (answered = true), 500);
        assert.equal(answered, false, 'nothing sent');

        await waitFor(() => site.openStreams === 0, 'every endless response to end');
    });
});
