/**
 * Route code that fails, end to end: a crawl of a small shop on 127.0.0.1 whose product extractor
 * throws on some pages (test/parse/fixtures/failingSite.ts, loaded by path as `--site` loads it).
 * The run goes on: the failing page is quarantined with the error and its raw page's key, the
 * other products reach the dataset, the exit code is 0 — in the crawling thread and in a parse
 * worker alike. When most pages fail, they trip the drift breaker as invalid pages do.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { CrawlOptions } from '../../src/options/crawlOptions.js';
import { createLogger } from '../../src/monitor/logger.js';
import { crawl } from '../../src/run.js';
import { storeNames } from '../../src/store/datasets.js';
import { ArchiveStore, archiveDirOf } from '../../src/store/archive/archiveStore.js';
import { rawPageKey } from '../../src/store/archive/rawPage.js';
import type { QuarantineEntry, StoredItem } from '../../src/store/records.js';
import { loadSite } from '../../src/site/sites.js';
import type { DeadLetterEntry } from '../../src/vocabulary/failure.js';
import type { RunSummary } from '../../src/vocabulary/report.js';
import { readDataset } from '../helpers/stores.js';

const site = await loadSite(fileURLToPath(new URL('../parse/fixtures/failingSite.ts', import.meta.url)));
const names = storeNames(site.name);

/** A shop on 127.0.0.1 whose home page links to `products` (paths); each product page's title is its path. */
async function serveShop(products: string[]): Promise<{ server: Server; origin: string }> {
    const server = createServer((req, res) => {
        const path = req.url!;
        if (path === '/robots.txt') return void res.writeHead(404).end();
        const body =
            path === '/'
                ? products.map((href) => `<a class="p" href="${href}">p</a>`).join('')
                : `<h1>Product ${path}</h1>`;
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<html><body>${body}</body></html>`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

interface Run {
    summary: RunSummary;
    exitCode: number;
    items: StoredItem[];
    quarantine: QuarantineEntry[];
    deadLetters: DeadLetterEntry[];
    raw: ArchiveStore;
}

async function crawlShop(
    origin: string,
    options: Partial<CrawlOptions>,
    t: { after: (fn: () => Promise<void>) => void },
): Promise<Run> {
    const storageDir = await mkdtemp(join(tmpdir(), 'dragnet-extractor-failures-'));
    t.after(() => rm(storageDir, { recursive: true, force: true }));
    const { summary, exitCode } = await crawl({
        site,
        startUrls: [`${origin}/`],
        storageDir,
        chromiumPath: undefined,
        progressIntervalSecs: 3600,
        log: createLogger({ level: 'silent' }),
        ...options,
    });
    return {
        summary,
        exitCode,
        items: await readDataset<StoredItem>(storageDir, names.items),
        quarantine: await readDataset<QuarantineEntry>(storageDir, names.quarantine),
        deadLetters: await readDataset<DeadLetterEntry>(storageDir, names.deadLetter),
        raw: await ArchiveStore.open({ archiveDir: archiveDirOf(storageDir), site: site.name }),
    };
}

describe('a crawl whose product extractor throws on one page', () => {
    let shop: { server: Server; origin: string };
    const products = ['/products/1', '/products/2', '/products/throws-3', '/products/4', '/products/5'];
    before(async () => {
        shop = await serveShop(products);
    });
    after(() => new Promise((resolve) => shop.server.close(resolve)));

    for (const parseWorkers of [0, 1]) {
        it(`quarantines that page with the error and its raw page key, stores \
the others, and exits 0 (parse workers: ${parseWorkers})`, async (t) => {
            const { summary, exitCode, items, quarantine, deadLetters, raw } = await crawlShop(
                shop.origin,
                { parseWorkers },
                t,
            );
            assert.equal(exitCode, 0);
            assert.deepEqual(items.map((item) => item.title).sort(), [
                'Product /products/1',
                'Product /products/2',
                'Product /products/4',
                'Product /products/5',
            ]);
            assert.deepEqual(deadLetters, []);

            assert.equal(quarantine.length, 1);
            const [entry] = quarantine;
            const url = `${shop.origin}/products/throws-3`;
            assert.equal(entry!.url, url);
            assert.equal(entry!.route, 'product');
            assert.ok(
                entry!.issues[0]!.startsWith('extractor-error: no title block on /products/throws-3 (at '),
                entry!.issues[0],
            );
            assert.deepEqual(entry!.fields, ['(extract)']);
            assert.equal(entry!.rawKey, rawPageKey(url, 'http'));
            assert.match(
                (await raw.get(entry!.rawKey))?.body ?? '',
                /Product \/products\/throws-3/,
                'the raw page is kept for a reparse',
            );

            // Not escalated: the route is `auto` and there is no browser, which would have dead-lettered it.
            assert.equal(summary.escalations.total, 0);
            assert.equal(summary.items.invalid, 1);
            assert.deepEqual(summary.drift, []);
        });
    }
});

describe('a crawl whose product extractor throws on most pages', () => {
    let shop: { server: Server; origin: string };
    before(async () => {
        shop = await serveShop(
            Array.from({ length: 30 }, (_, i) => (i % 5 === 0 ? `/products/${i}` : `/products/throws-${i}`)),
        );
    });
    after(() => new Promise((resolve) => shop.server.close(resolve)));

    it('trips the drift breaker on the route, as invalid records would, and exits 3', async (t) => {
        const driftBreaker = { window: 10, threshold: 0.5, minSamples: 10 };
        const { summary, exitCode, quarantine, deadLetters } = await crawlShop(
            shop.origin,
            { driftBreaker, maxConcurrency: 2, parseWorkers: 0 },
            t,
        );
        assert.equal(exitCode, 3);
        assert.equal(summary.drift.length, 1);
        const [trip] = summary.drift;
        assert.equal(trip!.route, 'product');
        assert.deepEqual(Object.keys(trip!.failingFields), ['(extract)']);
        assert.ok(trip!.invalidShare >= driftBreaker.threshold, String(trip!.invalidShare));
        assert.ok(trip!.samples.length > 0);
        for (const sample of trip!.samples) {
            assert.match(sample.issues[0] ?? '', /^extractor-error: no title block on \/products\/throws-\d+/);
            assert.equal(sample.rawKey, rawPageKey(sample.url, 'http'));
        }
        assert.ok(quarantine.length >= driftBreaker.minSamples * driftBreaker.threshold);
        assert.ok(quarantine.every((entry) => entry.issues[0]!.startsWith('extractor-error: ')));
        assert.ok(
            deadLetters.every((entry) => entry.reason === 'route-stopped'),
            JSON.stringify(deadLetters.map((entry) => entry.reason)),
        );
    });
});
