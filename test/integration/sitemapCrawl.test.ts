/**
 * Crawls started from sitemaps, end to end against the fixture shop (`sitemaps: true` in its
 * options: a gzip-encoded index naming two gzip files of products, each URL with a lastmod, all
 * named by robots.txt), and the memory that reading a sitemap takes.
 *
 * - A sitemap of 200,000 URLs is read with no more heap than one of 20,000.
 * - 5,000 products found only through the sitemaps (`sitemaps: true`: robots.txt's `Sitemap:`
 *   line) are each fetched once and stored with their lastmod.
 * - Beside the start URLs, sitemaps that are malformed, missing, forbidden or off-site are counted
 *   and logged with their reasons, and the crawl of everything else goes on.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { after, before, describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createGzip } from 'node:zlib';
import { z } from 'zod';
import siteDefinition from '../../routes/demo-shop.js';
import { productLastmod, type Shop, startShop } from '../../src/demo/shop.js';
import { limitHeapGrowth } from '../../src/runtime/heapGrowth.js';
import { Egress } from '../../src/fetch/egress/egress.js';
import { createSitemapFetch } from '../../src/fetch/http/sitemapFetch.js';
import { SitemapReader } from '../../src/frontier/sitemaps.js';
import { createLogger } from '../../src/monitor/logger.js';
import { RunStats } from '../../src/monitor/stats.js';
import { formatSummary } from '../../src/monitor/summary.js';
import { crawl } from '../../src/run.js';
import { defineSite, type Site } from '../../src/site/site.js';
import { storeNames } from '../../src/store/datasets.js';
import type { StoredItem } from '../../src/store/records.js';
import type { RunSummary } from '../../src/vocabulary/report.js';
import { crawlShop, type ShopCrawl } from '../helpers/crawlShop.js';
import { readDataset } from '../helpers/stores.js';

const PRODUCTS = 5_000;

// As the CLI does (main.ts): left to V8's default, the heap of a crawl of thousands of pages
// grows far past what it holds before it is collected.
limitHeapGrowth();
const productRoute = siteDefinition.routes.get('product')!;

/**
 * The demo shop's product route alone, never rendered (the shop has no script-only pages here),
 * following no links, its records carrying the lastmod their sitemap gave: the sitemaps are the
 * crawl's only way in. (A product a related-product link queued first would have no lastmod: the
 * sitemap's entry for it is then a URL already seen.)
 */
const sitemapOnlySite = defineSite({
    name: 'sitemap-shop',
    startUrls: [],
    sitemaps: true,
    routes: {
        product: {
            ...productRoute,
            render: 'never',
            enqueue: [],
            schema: (productRoute.schema as z.ZodObject).extend({ lastmod: z.iso.datetime() }),
            extract: ($, page) => ({ ...(productRoute.extract!($, page) as object), lastmod: page.userData.lastmod }),
        },
    },
});

/** Log records kept in memory, to see what was said about each sitemap. */
function recordingLog() {
    const records: { level: number; msg: string; reason?: string; sitemap?: string }[] = [];
    const destination = new Writable({
        write(chunk, _encoding, done) {
            records.push(JSON.parse(String(chunk)));
            done();
        },
    });
    return { log: createLogger({ level: 'info', destination }), records };
}

// First, while the heap holds no crawl's leftovers.
describe('the memory a sitemap takes to read', () => {
    let server: Server;
    let origin: string;

    before(async () => {
        // A gzip sitemap of `?entries=N` URLs, made as it is sent: the server holds none of it either.
        server = createServer((req, res) => {
            const entries = Number(new URL(req.url!, 'http://x').searchParams.get('entries'));
            res.writeHead(200, { 'content-type': 'application/gzip' });
            pipeline(Readable.from(sitemapOf(entries)), createGzip(), res).catch(() => undefined);
        });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => new Promise((resolve) => server.close(resolve)));

    it('holds one batch at a time: the heap grows no more for 200,000 URLs than for 20,000', async (t) => {
        setFlagsFromString('--expose-gc');
        const gc = runInNewContext('gc') as () => void;
        const egress = new Egress({ startUrls: [`${origin}/`] });
        /**
         * The most the heap grew over its size before the reading, sampled
         * after a full GC at the first batch and four times in the reading.
         */
        const growth = async (entries: number) => {
            const stats = new RunStats();
            const sampleEvery = entries / 1000 / 4;
            let batches = 0;
            let most = 0;
            gc();
            const before = process.memoryUsage().heapUsed;
            const reader = new SitemapReader({
                fetch: createSitemapFetch({ egress, maxBytes: 100 * 1024 * 1024 }),
                enqueue: async (links) => {
                    if (++batches === 1 || batches % sampleEvery === 0) {
                        gc();
                        most = Math.max(most, process.memoryUsage().heapUsed - before);
                    }
                    return links.length;
                },
                counters: stats.sitemaps,
                log: createLogger({ level: 'silent' }),
            });
            await reader.read([`${origin}/sitemap.xml.gz?entries=${entries}`]);
            assert.equal(stats.sitemaps.urls, entries);
            return most;
        };
        const small = await growth(20_000);
        const large = await growth(200_000);
        t.diagnostic(
            `heap growth while reading: ${(small / 1024 / 1024).toFixed(2)} MB ` +
                `for 20,000 URLs, ${(large / 1024 / 1024).toFixed(2)} MB for 200,000`,
        );
        // Held whole, 200,000 URLs would be ~18 MB of XML, or ~30 MB as links; one batch of 1,000 is ~0.2 MB.
        assert.ok(large < 8 * 1024 * 1024, `${large} bytes`);
        assert.ok(large - small < 4 * 1024 * 1024, `${large - small} bytes more for 10x the URLs`);
    });
});

describe(`a crawl started from the sitemaps of a shop of ${PRODUCTS.toLocaleString('en')} products`, () => {
    let run: ShopCrawl;
    let shop: Shop;
    let startedAt: number;

    before(async () => {
        startedAt = Date.now();
        run = await crawlShop(
            {
                seed: 41,
                products: PRODUCTS,
                sitemaps: true,
                scriptOnlyRate: 0,
                transientFailureRate: 0,
                notFoundLinks: 0,
            },
            // Adaptive timeouts off: this test counts fetches exactly, and a stall
            // of the loaded machine past 5x a fast shop's p99 would retry pages.
            { site: sitemapOnlySite, maxConcurrency: 100, adaptiveTimeout: false, chromiumPath: undefined },
        );
        shop = run.shop;
    });
    after(() => run?.close());

    it('reads robots.txt, the index and both gzip sitemaps once each, and counts what they gave', (t) => {
        t.diagnostic(
            `crawl took ${((Date.now() - startedAt) / 1000).toFixed(1)} s, peak RSS of ` +
                `the test process ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`,
        );
        const { byPath } = shop.stats();
        const paths = shop.sitemapPaths!;
        for (const path of [paths.index, ...paths.products]) assert.deepEqual(byPath[path], { 200: 1 }, path);
        assert.ok(byPath['/robots.txt']?.['200']);
        assert.deepEqual(run.summary.sitemaps, {
            read: 3,
            failed: 0,
            skipped: 0,
            urls: PRODUCTS,
            queued: PRODUCTS,
            reasons: {},
        });
        assert.equal(run.summary.requests.total, PRODUCTS);
    });

    it('fetches every listed product once and stores it with its lastmod', () => {
        const { byPath } = shop.stats();
        const byUrl = new Map(run.items.map((item) => [item._url, item]));
        assert.equal(run.items.length, PRODUCTS);
        assert.equal(byUrl.size, PRODUCTS, 'no product stored twice');
        for (const product of shop.products) {
            assert.deepEqual(byPath[product.path], { 200: 1 }, product.path);
            const item = byUrl.get(`${shop.url}${product.path}`);
            assert.equal(item?.sku, product.sku, product.path);
            assert.equal(item.lastmod, new Date(productLastmod(product)).toISOString());
        }
        assert.equal(run.quarantine.length + run.deadLetters.length, 0);
    });
});

describe('sitemaps beside the start URLs: the ones that fail are counted, and the crawl goes on', () => {
    let shop: Shop;
    let elsewhere: Server;
    let connectionsElsewhere = 0;
    let storageDir: string;
    let summary: RunSummary;
    let items: StoredItem[];
    let records: ReturnType<typeof recordingLog>['records'];

    before(async () => {
        shop = await startShop({
            seed: 43,
            products: 200,
            sitemaps: true,
            scriptOnlyRate: 0,
            transientFailureRate: 0,
            notFoundLinks: 0,
        });
        // On the shop's port but another loopback address: only the address is wrong.
        elsewhere = createServer((_req, res) => res.end('<urlset></urlset>'));
        elsewhere.on('connection', () => (connectionsElsewhere += 1));
        await new Promise<void>((resolve) => elsewhere.listen(shop.port, '127.0.0.2', resolve));
        const site: Site = {
            ...siteDefinition,
            sitemaps: [
                `${shop.url}/sitemaps/malformed.xml`,
                `${shop.url}/sitemaps/missing.xml`,
                // In scope (allowed below), refused by the egress: loopback.
                `http://127.0.0.2:${shop.port}/sitemap.xml`,
                `http://127.0.0.3:${shop.port}/sitemap.xml`, // off-site
                `${shop.url}/sitemaps/products-1.xml.gz`,
            ],
        };
        storageDir = await mkdtemp(join(tmpdir(), 'dragnet-sitemaps-'));
        const recorded = recordingLog();
        records = recorded.records;
        ({ summary } = await crawl({
            site,
            startUrls: [`${shop.url}/`],
            allowDomains: ['127.0.0.2'],
            storageDir,
            maxConcurrency: 20,
            adaptiveTimeout: false,
            chromiumPath: undefined,
            progressIntervalSecs: 3600,
            log: recorded.log,
        }));
        items = await readDataset<StoredItem>(storageDir, storeNames(site.name).items);
    });
    after(async () => {
        await shop?.close();
        await new Promise((resolve) => elsewhere?.close(resolve));
        if (storageDir) await rm(storageDir, { recursive: true, force: true });
    });

    it('stores every product, found by the start URL and the good sitemap alike, each fetched once', () => {
        assert.equal(items.length, 200);
        assert.equal(new Set(items.map((item) => item._url)).size, 200);
        const { byPath } = shop.stats();
        for (const product of shop.products) assert.deepEqual(byPath[product.path], { 200: 1 }, product.path);
    });

    it('counts each failed sitemap by its reason and logs it', () => {
        const { queued, ...counted } = summary.sitemaps;
        assert.deepEqual(counted, {
            read: 1,
            failed: 4,
            skipped: 0,
            // The good sitemap's 100, and the entry the malformed one held whole before it was cut off.
            urls: 101,
            reasons: { malformed: 1, 'http-404': 1, 'forbidden-address': 1, offsite: 1 },
        });
        // Queued from the sitemaps: what the start URL's crawl had not queued first.
        assert.ok(queued <= 101);
        const warned = records.filter((record) => record.level === 40 && record.msg.startsWith('sitemap not read'));
        assert.deepEqual(warned.map((record) => record.reason).sort(), [
            'forbidden-address',
            'http-404',
            'malformed',
            'offsite',
        ]);
        assert.match(
            warned.find((record) => record.reason === 'forbidden-address')!.msg,
            /127\.0\.0\.2 is a loopback address/,
        );
        assert.match(warned.find((record) => record.reason === 'malformed')!.msg, /malformed XML/);
        assert.equal(connectionsElsewhere, 0, 'nothing connected to 127.0.0.2');
        assert.match(
            formatSummary(summary),
            new RegExp(
                String.raw`sitemaps {3}1 read, 4 failed, 0 skipped \(1 malformed, 1 http-404, ` +
                    String.raw`1 forbidden-address, 1 offsite\); 101 URLs listed`,
            ),
        );
    });
});

function* sitemapOf(entries: number): Generator<string> {
    yield '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n';
    for (let from = 0; from < entries; from += 100) {
        yield Array.from(
            { length: Math.min(100, entries - from) },
            (_, i) => `<url><loc>http://127.0.0.1/products/item-${from + i}</loc><lastmod>2024-05-01</lastmod></url>\n`,
        ).join('');
    }
    yield '</urlset>\n';
}
