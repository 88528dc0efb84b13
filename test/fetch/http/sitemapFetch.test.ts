/**
 * The sitemap fetch (src/fetch/http/sitemapFetch.ts) against a local server: what it decompresses, where
 * it stops (the size cap on decompressed bytes, a gzip bomb, the timeout), what it refuses to
 * connect to (the egress, the scope, on redirects too), and the class of each failure.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { Egress } from '../../../src/fetch/egress/egress.js';
import type { FetchFailure } from '../../../src/fetch/failures/failures.js';
import { createSitemapFetch, type SitemapFetchOptions } from '../../../src/fetch/http/sitemapFetch.js';

const SITEMAP =
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">' +
    '<url><loc>http://127.0.0.1/products/1</loc></url></urlset>';
const MIB = 1024 * 1024;
/**
 * 1,024 gzip members of 1 MiB of spaces each: 1 GiB unpacked
 * from ~1 MB, a gzip file being many members read as one stream.
 */
const BOMB = Buffer.concat([gzipSync('<urlset>'), ...Array<Buffer>(1024).fill(gzipSync(Buffer.alloc(MIB, 0x20)))]);

interface Reply {
    status?: number;
    body?: string | Buffer;
    headers?: Record<string, string>;
    hang?: boolean;
}

const REPLIES: Record<string, Reply> = {
    '/plain.xml': { body: SITEMAP, headers: { 'content-type': 'application/xml' } },
    '/encoded.xml': {
        body: gzipSync(SITEMAP),
        headers: { 'content-type': 'application/xml', 'content-encoding': 'gzip' },
    },
    '/file.xml.gz': { body: gzipSync(SITEMAP), headers: { 'content-type': 'application/gzip' } },
    // Gzipped twice, as a server does that compresses a .gz file again on the way out.
    '/twice.xml.gz': {
        body: gzipSync(gzipSync(SITEMAP)),
        headers: { 'content-type': 'application/x-gzip', 'content-encoding': 'gzip' },
    },
    '/bomb.xml.gz': { body: BOMB, headers: { 'content-type': 'application/gzip' } },
    '/bomb.xml': { body: BOMB, headers: { 'content-type': 'application/xml', 'content-encoding': 'gzip' } },
    '/corrupt.xml.gz': { body: Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00]), Buffer.alloc(64, 0x41)]) },
    '/declared-large.xml': { headers: { 'content-length': String(20 * MIB) }, hang: true },
    '/hang.xml': { hang: true },
    '/down.xml': { status: 503 },
    '/blocked.xml': { status: 403 },
};

describe('the sitemap fetch', () => {
    let server: Server;
    let other: Server;
    let origin: string;
    let otherOrigin: string;
    /** Connections the server on 127.0.0.2 was offered. */
    let otherConnections = 0;

    before(async () => {
        server = createServer((req, res) => {
            const path = req.url!;
            if (path === '/offsite-redirect.xml')
                return void res.writeHead(302, { location: `${otherOrigin}/plain.xml` }).end();
            const reply = REPLIES[path] ?? { status: 404 };
            if (reply.hang) return void res.writeHead(reply.status ?? 200, reply.headers).flushHeaders();
            res.writeHead(reply.status ?? 200, reply.headers).end(reply.body ?? '');
        });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        const { port } = server.address() as AddressInfo;
        origin = `http://127.0.0.1:${port}`;
        other = createServer((_req, res) => res.end(SITEMAP));
        other.on('connection', () => (otherConnections += 1));
        await new Promise<void>((resolve) => other.listen(port, '127.0.0.2', resolve));
        otherOrigin = `http://127.0.0.2:${port}`;
    });
    after(async () => {
        for (const s of [server, other]) {
            s.closeAllConnections();
            await new Promise((resolve) => s.close(resolve));
        }
    });

    /** The decompressed body, or the failure it ended in; `bytes` counts what was read before it. */
    async function read(path: string, options: SitemapFetchOptions = {}, url = `${origin}${path}`) {
        const fetch = createSitemapFetch({ timeoutSecs: 5, ...options });
        let bytes = 0;
        const chunks: Buffer[] = [];
        try {
            for await (const chunk of await fetch(url, new AbortController().signal)) {
                bytes += chunk.length;
                if (chunks.length < 10) chunks.push(chunk);
            }
            return { text: Buffer.concat(chunks).toString(), bytes };
        } catch (error) {
            return { failure: error as FetchFailure, bytes };
        }
    }

    it('reads a sitemap plain, gzip-encoded, as a .gz file, and gzipped twice', async () => {
        for (const path of ['/plain.xml', '/encoded.xml', '/file.xml.gz', '/twice.xml.gz']) {
            const { text, failure } = await read(path);
            assert.equal(failure, undefined, path);
            assert.equal(text, SITEMAP, path);
        }
    });

    it('stops a gzip bomb at the size cap on the decompressed bytes, as a file and as an encoding', async () => {
        for (const path of ['/bomb.xml.gz', '/bomb.xml']) {
            const { failure, bytes } = await read(path, { maxBytes: MIB });
            assert.equal(failure?.reason, 'too-large', path);
            assert.equal(failure.failureClass, 'permanent');
            assert.match(failure.message, /past the 1 MiB cap/);
            assert.ok(bytes <= MIB, `${path}: ${bytes} bytes handed on`);
        }
    });

    it('refuses a body whose Content-Length is past the cap before reading it', async () => {
        const { failure, bytes } = await read('/declared-large.xml', { maxBytes: MIB });
        assert.equal(failure?.reason, 'too-large');
        assert.match(failure.message, /Content-Length 20971520/);
        assert.equal(bytes, 0);
    });

    it('classes what went wrong: a status, a corrupt gzip, a timeout', async () => {
        const outcomes = Object.fromEntries(
            await Promise.all(
                ['/missing.xml', '/down.xml', '/blocked.xml', '/corrupt.xml.gz'].map(async (path) => {
                    const { failure } = await read(path);
                    return [path, [failure?.failureClass, failure?.reason]] as const;
                }),
            ),
        );
        assert.deepEqual(outcomes, {
            '/missing.xml': ['permanent', 'http-404'],
            '/down.xml': ['transient', 'http-503'],
            '/blocked.xml': ['blocked', 'http-403'],
            '/corrupt.xml.gz': ['permanent', 'malformed'],
        });
        const started = Date.now();
        const { failure } = await read('/hang.xml', { timeoutSecs: 0.3 });
        assert.deepEqual([failure?.failureClass, failure?.reason], ['transient', 'etimedout']);
        assert.ok(Date.now() - started < 3000);
    });

    it(`refuses a sitemap, or a redirect, to a host the egress \
forbids or out of scope, without connecting`, async () => {
        const egress = new Egress({ startUrls: [`${origin}/`] });
        const inScope = (url: URL) => url.hostname === '127.0.0.1';
        const cases = [
            {
                url: `${otherOrigin}/plain.xml`,
                options: { egress },
                reason: 'forbidden-address',
                message: /127\.0\.0\.2 is a loopback address/,
            },
            {
                url: `${origin}/offsite-redirect.xml`,
                options: { egress },
                reason: 'forbidden-address',
                message: /127\.0\.0\.2 is a loopback address/,
            },
            {
                url: `${otherOrigin}/plain.xml`,
                options: { inScope },
                reason: 'offsite',
                message: /127\.0\.0\.2:\d+ is not one of the site's hosts/,
            },
            {
                url: `${origin}/offsite-redirect.xml`,
                options: { inScope },
                reason: 'offsite-redirect',
                message: /offsite-redirect/,
            },
        ];
        for (const { url, options, reason, message } of cases) {
            const { failure } = await read('', options, url);
            assert.equal(failure?.reason, reason, url);
            assert.equal(failure.failureClass, 'permanent');
            assert.match(failure.message, message);
        }
        assert.equal(otherConnections, 0, 'nothing connected to 127.0.0.2');
        const allowed = await read(
            '',
            { egress: new Egress({ startUrls: [`${origin}/`], allowPrivateNetwork: true }) },
            `${otherOrigin}/plain.xml`,
        );
        assert.equal(allowed.text, SITEMAP, 'with --allow-private-network it may');
    });

    it('ends the fetch when its signal aborts', async () => {
        const controller = new AbortController();
        const fetch = createSitemapFetch({ timeoutSecs: 30 });
        const opening = fetch(`${origin}/hang.xml`, controller.signal);
        const body = await opening;
        setTimeout(() => controller.abort(), 50);
        const started = Date.now();
        await assert.rejects(async () => {
            for await (const _ of body) void _;
        });
        assert.ok(Date.now() - started < 3000);
    });
});
