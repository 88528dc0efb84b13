/**
 * The sitemap reader (src/frontier/sitemaps.ts) over an injected fetch: sitemaps written here as
 * strings or generated chunk by chunk, and a sink in place of the frontier that records what it is
 * handed. What the fetch itself refuses and decompresses: test/fetch/http/sitemapFetch.test.ts.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { setImmediate as tick } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { FetchFailure } from '../../src/fetch/failures/failures.js';
import { type SitemapFetch, SitemapReader, type SitemapReaderOptions } from '../../src/frontier/sitemaps.js';
import { createLogger } from '../../src/monitor/logger.js';
import { RunStats } from '../../src/monitor/stats.js';
import type { Link } from '../../src/vocabulary/request.js';

const ORIGIN = 'http://127.0.0.1:9';

const urlset = (entries: string[]) =>
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${entries.join('')}</urlset>`;
const index = (locs: string[]) => {
    const sitemaps = locs.map((loc) => `<sitemap><loc>${loc}</loc></sitemap>`).join('');
    return `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${sitemaps}</sitemapindex>`;
};
const entry = (path: string, lastmod?: string) =>
    `<url><loc>${ORIGIN}${path}</loc>${lastmod ? `<lastmod>${lastmod}</lastmod>` : ''}</url>`;

/** A body in chunks of `size` bytes, so the parser meets every boundary a socket could give it. */
async function* chunked(text: string, size = 7): AsyncGenerator<Buffer> {
    const bytes = Buffer.from(text);
    for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

/** A fetch answering from `bodies` by URL (a function for a body that changes per attempt); anything else is a 404. */
function fetchFrom(
    bodies: Record<string, string | ((attempt: number) => AsyncIterable<Buffer>)>,
    asked: string[] = [],
): SitemapFetch {
    return async (url) => {
        asked.push(url);
        const body = bodies[url];
        if (body === undefined) throw new FetchFailure('permanent', 'the sitemap answered 404', 404);
        return typeof body === 'string' ? chunked(body) : body(asked.filter((u) => u === url).length);
    };
}

/** A logger whose records are kept, to see what was said and why. */
function recordingLog() {
    const records: { level: number; msg: string; reason?: string; sitemap?: string }[] = [];
    const destination = new Writable({
        write(chunk, _encoding, done) {
            records.push(JSON.parse(String(chunk)));
            done();
        },
    });
    return { log: createLogger({ level: 'debug', destination }), records };
}

/** A reader whose batches go to a sink that records them. */
function readerWith(options: Partial<SitemapReaderOptions> & Pick<SitemapReaderOptions, 'fetch'>) {
    const stats = new RunStats();
    const batches: Link[][] = [];
    const { log, records } = recordingLog();
    const reader = new SitemapReader({
        enqueue: async (links) => {
            batches.push(links);
            return links.length;
        },
        counters: stats.sitemaps,
        log,
        retryBaseSecs: 0.01,
        ...options,
    });
    return { reader, stats, batches, records, urls: () => batches.flat().map((link) => new URL(link.url).pathname) };
}

describe('the sitemap reader', () => {
    it('hands on each <url> as a link with no label, its lastmod as an ISO string, in batches', async () => {
        const sitemap = urlset([
            entry('/products/1', '2024-01-02'),
            entry('/products/2', '2024-01-02T10:30:00+01:00'),
            entry('/products/3'),
            entry('/products/4', 'not a date'),
            // An extension's <image:loc> is not the page's URL; the entity is decoded.
            `<url><loc>${ORIGIN}/products/5?a=1&amp;b=2</loc><image:image>` +
                `<image:loc>${ORIGIN}/img/5.jpg</image:loc></image:image></url>`,
        ]);
        const { reader, stats, batches } = readerWith({
            fetch: fetchFrom({ [`${ORIGIN}/sitemap.xml`]: sitemap }),
            batchSize: 2,
        });
        await reader.read([`${ORIGIN}/sitemap.xml`]);
        assert.deepEqual(batches, [
            [
                { url: `${ORIGIN}/products/1`, userData: { lastmod: '2024-01-02T00:00:00.000Z' } },
                { url: `${ORIGIN}/products/2`, userData: { lastmod: '2024-01-02T09:30:00.000Z' } },
            ],
            [{ url: `${ORIGIN}/products/3` }, { url: `${ORIGIN}/products/4` }],
            [{ url: `${ORIGIN}/products/5?a=1&b=2` }],
        ]);
        assert.deepEqual(stats.sitemaps, { read: 1, failed: 0, skipped: 0, urls: 5, queued: 5, reasons: {} });
    });

    it('reads the sitemaps an index names, each once, and skips those nested too deep or past the cap', async () => {
        const asked: string[] = [];
        const fetch = fetchFrom(
            {
                [`${ORIGIN}/sitemap.xml`]: index([
                    `${ORIGIN}/a.xml`,
                    '/b.xml',
                    `${ORIGIN}/a.xml#again`,
                    `${ORIGIN}/nested.xml`,
                ]),
                [`${ORIGIN}/a.xml`]: urlset([entry('/products/1')]),
                [`${ORIGIN}/b.xml`]: urlset([entry('/products/2')]),
                // An index of indexes, one of them the top index again: a loop is read once.
                [`${ORIGIN}/nested.xml`]: index([`${ORIGIN}/sitemap.xml`, `${ORIGIN}/deeper.xml`]),
                [`${ORIGIN}/deeper.xml`]: index([`${ORIGIN}/deepest.xml`]),
            },
            asked,
        );
        const { reader, stats, urls, records } = readerWith({ fetch, maxDepth: 2 });
        await reader.read([`${ORIGIN}/sitemap.xml`]);
        assert.deepEqual(asked, [
            `${ORIGIN}/sitemap.xml`,
            `${ORIGIN}/a.xml`,
            `${ORIGIN}/b.xml`,
            `${ORIGIN}/nested.xml`,
            `${ORIGIN}/deeper.xml`,
        ]);
        assert.deepEqual(urls(), ['/products/1', '/products/2']);
        assert.deepEqual(stats.sitemaps, {
            read: 5,
            failed: 0,
            skipped: 1,
            urls: 2,
            queued: 2,
            reasons: { 'too-deep': 1 },
        });
        assert.ok(
            records.some((r) => r.level === 40 && r.reason === 'too-deep'),
            'the skip is logged',
        );

        const capped = readerWith({
            fetch: fetchFrom({ [`${ORIGIN}/sitemap.xml`]: index(['/1.xml', '/2.xml', '/3.xml', '/4.xml']) }),
            maxSitemaps: 3,
        });
        await capped.reader.read([`${ORIGIN}/sitemap.xml`]);
        assert.deepEqual(capped.stats.sitemaps.reasons, { 'http-404': 2, 'too-many-sitemaps': 2 });
        assert.equal(
            capped.records.filter((r) => r.reason === 'too-many-sitemaps').length,
            1,
            'one warning for all the sitemaps past the cap',
        );
    });

    it('counts and logs a malformed sitemap, or one that is no sitemap, and reads the others', async () => {
        const fetch = fetchFrom({
            [`${ORIGIN}/cut.xml`]: urlset([entry('/products/1'), entry('/products/2')]).slice(0, -40),
            [`${ORIGIN}/page.html`]: '<!DOCTYPE html><html><body><a href="/products/9">9</a></body></html>',
            [`${ORIGIN}/empty.xml`]: '',
            [`${ORIGIN}/good.xml`]: urlset([entry('/products/3')]),
        });
        const { reader, stats, urls, records } = readerWith({ fetch });
        await reader.read([
            `${ORIGIN}/cut.xml`,
            `${ORIGIN}/page.html`,
            `${ORIGIN}/empty.xml`,
            `${ORIGIN}/missing.xml`,
            'http://[bad',
            `${ORIGIN}/good.xml`,
        ]);
        // The cut sitemap's first entry was whole, so it went on; its failure is that the document is not.
        assert.deepEqual(urls(), ['/products/1', '/products/3']);
        assert.deepEqual(stats.sitemaps, {
            read: 1,
            failed: 5,
            skipped: 0,
            urls: 2,
            queued: 2,
            reasons: { malformed: 1, 'not-a-sitemap': 2, 'http-404': 1, 'invalid-url': 1 },
        });
        const warned = records.filter((r) => r.level === 40);
        assert.deepEqual(warned.map((r) => r.reason).sort(), [
            'http-404',
            'invalid-url',
            'malformed',
            'not-a-sitemap',
            'not-a-sitemap',
        ]);
        assert.match(
            warned.find((r) => r.reason === 'malformed')!.msg,
            /sitemap not read: malformed XML: Unclosed root tag/,
        );
        assert.match(warned.find((r) => r.sitemap === `${ORIGIN}/page.html`)!.msg, /root element is <html>/);
    });

    it('retries a transient failure after a backoff, handing on only what the failed attempt did not', async () => {
        const entries = Array.from({ length: 10 }, (_, i) => entry(`/products/${i + 1}`));
        const sitemap = urlset(entries);
        const fetch = fetchFrom({
            [`${ORIGIN}/flaky.xml`]: (attempt) =>
                (async function* () {
                    const bytes = Buffer.from(sitemap);
                    // The first attempt breaks off after six entries, the second before a byte; the third reads it all.
                    if (attempt === 1) yield bytes.subarray(0, sitemap.indexOf(entries[6]!));
                    if (attempt < 3) throw new FetchFailure('transient', 'read ECONNRESET', undefined, 'econnreset');
                    yield bytes;
                })(),
        });
        const { reader, stats, batches, records } = readerWith({ fetch, batchSize: 4, retryBaseSecs: 0.05 });
        const started = Date.now();
        await reader.read([`${ORIGIN}/flaky.xml`]);
        assert.ok(Date.now() - started >= 0.05 * 1000 + 0.1 * 1000 - 20, 'waited 0.05 s, then 0.1 s');
        // The first attempt handed on a batch of four, then the two whole
        // entries it had when it broke off; the last skips those six.
        assert.deepEqual(
            batches.map((batch) => batch.map((link) => new URL(link.url).pathname.slice(10))),
            [
                ['1', '2', '3', '4'],
                ['5', '6'],
                ['7', '8', '9', '10'],
            ],
        );
        assert.deepEqual(stats.sitemaps, { read: 1, failed: 0, skipped: 0, urls: 10, queued: 10, reasons: {} });
        assert.equal(records.filter((r) => /trying again/.test(r.msg)).length, 2);
    });

    it('gives up on a sitemap after its retries, and at once on a permanent failure', async () => {
        let attempts = 0;
        const unavailable: SitemapFetch = async (url) => {
            attempts += 1;
            throw url.endsWith('gone.xml')
                ? new FetchFailure('permanent', 'the sitemap answered 410', 410)
                : new FetchFailure('transient', 'the sitemap answered 503', 503);
        };
        const { reader, stats } = readerWith({ fetch: unavailable, retries: 2 });
        await reader.read([`${ORIGIN}/down.xml`, `${ORIGIN}/gone.xml`]);
        assert.equal(attempts, 3 + 1);
        assert.deepEqual(stats.sitemaps.reasons, { 'http-503': 1, 'http-410': 1 });
    });

    it('parses no further while a batch is being queued: the body waits in its stream', async () => {
        const CHUNK_ENTRIES = 50;
        let chunksPulled = 0;
        /** A sitemap of 100,000 entries, made only as it is pulled. */
        const lazyFetch: SitemapFetch = async () =>
            (async function* () {
                yield Buffer.from('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">');
                for (let chunk = 0; chunk < 2000; chunk++) {
                    chunksPulled += 1;
                    yield Buffer.from(
                        Array.from({ length: CHUNK_ENTRIES }, (_, i) =>
                            entry(`/products/${chunk * CHUNK_ENTRIES + i}`),
                        ).join(''),
                    );
                }
                yield Buffer.from('</urlset>');
            })();
        let release!: () => void;
        const released = new Promise<void>((resolve) => (release = resolve));
        let held = 0;
        let mostHeld = 0;
        const controller = new AbortController();
        const { reader, stats } = readerWith({
            fetch: lazyFetch,
            batchSize: 1000,
            signal: controller.signal,
            enqueue: async (links) => {
                held += links.length;
                mostHeld = Math.max(mostHeld, held);
                if (stats.sitemaps.urls === 0) await released;
                if (stats.sitemaps.urls >= 9000) controller.abort();
                held -= links.length;
                return links.length;
            },
        });
        const reading = reader.read([`${ORIGIN}/big.xml`]);
        for (let i = 0; i < 20; i++) await tick();
        // The first batch of 1,000 is 20 chunks; the parser may be one chunk into the next batch, no further.
        assert.ok(
            chunksPulled <= 1000 / CHUNK_ENTRIES + 1,
            `pulled ${chunksPulled} chunks while the first batch waited`,
        );
        release();
        await reading;
        assert.equal(mostHeld, 1000, 'one batch at a time');
        assert.equal(stats.sitemaps.urls, 10_000, 'the abort in the tenth batch ended the reading');
        assert.ok(chunksPulled <= 10_000 / CHUNK_ENTRIES + 1, `pulled ${chunksPulled} chunks for ten batches`);
        assert.equal(stats.sitemaps.read, 0, 'a sitemap stopped part-way is not counted read');
    });

    it('stops reading when the request budget is spent', async () => {
        const fetch = fetchFrom({
            [`${ORIGIN}/a.xml`]: urlset(Array.from({ length: 30 }, (_, i) => entry(`/products/${i}`))),
            [`${ORIGIN}/b.xml`]: urlset([entry('/products/b')]),
        });
        let admitted = 0;
        const { reader, stats } = readerWith({
            fetch,
            batchSize: 10,
            isFull: () => admitted >= 10,
            enqueue: async (links) => (admitted += links.length),
        });
        await reader.read([`${ORIGIN}/a.xml`, `${ORIGIN}/b.xml`]);
        assert.equal(stats.sitemaps.urls, 10);
    });

    it('finds the sitemaps of each origin in its robots.txt, retrying one that is unreachable', async () => {
        const answers: Record<string, { status: number; body: string }[]> = {
            'http://a.test/robots.txt': [
                {
                    status: 200,
                    body:
                        'User-agent: *\nDisallow: /admin/\nSitemap: http://a.test/sitemap.xml\n' +
                        'sitemap: http://a.test/news.xml.gz\n',
                },
            ],
            'http://b.test/robots.txt': [{ status: 404, body: '' }],
            'http://c.test/robots.txt': [
                { status: 503, body: '' },
                { status: 200, body: 'Sitemap: http://c.test/s.xml' },
            ],
            'http://d.test/robots.txt': [{ status: 500, body: '' }],
        };
        const asked: string[] = [];
        const robotsFetch = async (url: string) => {
            asked.push(url);
            const list = answers[url]!;
            return list.length > 1 ? list.shift()! : list[0]!;
        };
        const { reader, stats, records } = readerWith({ fetch: fetchFrom({}), retries: 1 });
        const listed = await reader.listedInRobotsTxt(
            ['http://a.test', 'http://b.test', 'http://a.test', 'http://c.test', 'http://d.test'],
            robotsFetch,
        );
        assert.deepEqual(listed, ['http://a.test/sitemap.xml', 'http://a.test/news.xml.gz', 'http://c.test/s.xml']);
        assert.equal(asked.filter((url) => url === 'http://a.test/robots.txt').length, 1);
        assert.equal(asked.filter((url) => url === 'http://d.test/robots.txt').length, 2);
        assert.deepEqual(stats.sitemaps.reasons, { 'robots-txt-unreachable': 1 });
        assert.ok(
            records.some((r) => r.level === 40 && /robots.txt lists no sitemaps/.test(r.msg)),
            'b.test: no sitemaps, said so',
        );
    });

    it('checks its options', () => {
        const fetch = fetchFrom({});
        assert.throws(() => readerWith({ fetch, batchSize: 0 }), /batchSize must be a whole number >= 1/);
        assert.throws(() => readerWith({ fetch, maxDepth: -1 }), /maxDepth must be a whole number >= 0/);
        assert.throws(() => readerWith({ fetch, retryBaseSecs: Number.NaN }), /retryBaseSecs must be >= 0/);
    });
});
