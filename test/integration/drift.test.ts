/**
 * Layout drift: the fixture shop redesigns its product page part-way through the crawl, so the
 * title selector stops matching. The drift breaker must stop the route within its window, say
 * which route and fields, and the run must end non-zero with every product URL accounted for.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import siteDefinition from '../../routes/demo-shop.js';
import { findChromium } from '../../src/fetch/browser/chromium.js';
import type { QuarantineEntry, StoredItem } from '../../src/store/records.js';
import type { DeadLetterEntry } from '../../src/vocabulary/failure.js';
import type { RunSummary } from '../../src/vocabulary/report.js';
import { textOf } from '../../src/site/site.js';
import { openStorage, storeNames } from '../../src/store/datasets.js';
import { reparse } from '../../src/parse/reparse.js';
import { readDataset } from '../helpers/stores.js';
import { withExtractor } from '../helpers/withExtractor.js';
import { crawlShop, type ShopCrawl } from '../helpers/crawlShop.js';
import type { Shop } from '../../src/demo/shop.js';

const chromiumPath = findChromium();
const REDESIGN_AFTER = 100;
const DRIFT = { window: 100, threshold: 0.5, minSamples: 50 };

describe('drift breaker against a shop that redesigns its product page', {
    skip: chromiumPath ? false : 'no Chromium found',
}, () => {
    let run: ShopCrawl;
    let shop: Shop;
    let storageDir: string;
    let summary: RunSummary;
    let exitCode: number;
    let items: StoredItem[];
    let quarantine: QuarantineEntry[];
    let deadLetters: DeadLetterEntry[];

    before(async () => {
        run = await crawlShop(
            {
                seed: 11,
                products: 600,
                scriptOnlyRate: 0,
                transientFailureRate: 0,
                notFoundLinks: 0,
                redesignAfter: REDESIGN_AFTER,
            },
            // A redesigned page never gets its title, so each one the browser renders waits out the whole
            // browser wait (about 50 of them, 4 at a time); no page here needs a script, so half a second is plenty.
            {
                maxConcurrency: 8,
                browserConcurrency: 4,
                retry: { maxAttempts: 3 },
                requestTimeoutSecs: 15,
                browserWaitSecs: 0.5,
                driftBreaker: DRIFT,
                chromiumPath,
            },
        );
        ({ shop, storageDir, summary, exitCode, items, quarantine, deadLetters } = run);
    });

    after(() => run?.close());

    it('trips within the window, naming the route and the failing field, and the run exits non-zero', () => {
        assert.equal(exitCode, 3);
        assert.equal(summary.drift.length, 1);
        const [trip] = summary.drift;
        assert.equal(trip!.route, 'product');
        assert.deepEqual(Object.keys(trip!.failingFields), ['title']);
        // The breaker needs threshold x window invalid pages among the last `window`; judging is a little out of
        // fetch order under concurrency, so allow the pages in flight on top.
        const invalidPagesBeforeTrip = trip!.pagesJudged - REDESIGN_AFTER;
        assert.ok(
            invalidPagesBeforeTrip >= DRIFT.window * DRIFT.threshold &&
                invalidPagesBeforeTrip <= DRIFT.window * DRIFT.threshold + 12,
            `tripped after ${trip!.pagesJudged} judged pages`,
        );
        assert.ok(
            trip!.samples.length > 0 &&
                trip!.samples.every((sample) => sample.url.includes('/products/') && sample.rawKey),
        );
    });

    it(`stops fetching the route: far fewer product pages asked \
than exist, and every product URL ends in one place`, () => {
        const productRequests = Object.entries(shop.stats().byPath)
            .filter(([path]) => path.startsWith('/products/'))
            .reduce((sum, [, counts]) => sum + Object.values(counts).reduce((a, b) => a + b, 0), 0);
        assert.ok(productRequests < shop.products.length, `${productRequests} product requests`);

        const stopped = deadLetters.filter((entry) => entry.reason === 'route-stopped');
        assert.ok(stopped.length > 0);
        const places = new Map<string, string>();
        const place = (url: string, where: string) => {
            assert.ok(!places.has(url), `${url} is in ${places.get(url)} and ${where}`);
            places.set(url, where);
        };
        for (const item of items) place(item._url, 'dataset');
        for (const entry of quarantine) place(entry.url, 'quarantine');
        for (const entry of stopped) place(entry.url, 'dead-letter');
        for (const product of shop.products)
            assert.ok(places.has(`${shop.url}${product.path}`), `${product.path} ended somewhere`);
        assert.equal(items.length, REDESIGN_AFTER);
    });

    it(`after the extractor is fixed, reparse turns the quarantined \
items into valid ones without a request to the shop`, async () => {
        // The fix a contributor would make: read the title from either layout.
        const fixed = withExtractor(siteDefinition, 'product', (broken) => ($, page) => ({
            ...(broken($, page) as object),
            title: textOf($, 'h1.product-title, h1.product-name'),
        }));
        const requestsBefore = shop.stats().total;
        const { config, storage } = openStorage(storageDir);
        const result = await reparse({ site: fixed, storageDir, config });
        await storage.close();

        assert.equal(shop.stats().total, requestsBefore, 'not a single request to the shop');
        assert.equal(result.quarantined.before, quarantine.length);
        assert.equal(result.quarantined.after, 0);
        assert.ok(result.items.after >= items.length + quarantine.length, JSON.stringify(result));
        assert.ok((result.changedByField.title ?? 0) >= quarantine.length, 'every fixed item gained its title');

        const names = storeNames(siteDefinition.name);
        const reparsed = await readDataset<StoredItem>(storageDir, names.items);
        const deadAfter = await readDataset<DeadLetterEntry>(storageDir, names.deadLetter);
        assert.equal(reparsed.length, result.items.after);
        const byUrl = new Map(shop.products.map((product) => [`${shop.url}${product.path}`, product]));
        for (const item of reparsed) assert.equal(item.title, byUrl.get(item._url)?.title, item._url);
        // Still exactly one place per product: pages fetched before
        // the stop are items now; the rest wait in dead-letter.
        const places = [...reparsed.map((item) => item._url), ...deadAfter.map((entry) => entry.url)];
        assert.equal(new Set(places).size, places.length, 'no product in two places');
        for (const url of byUrl.keys()) assert.ok(places.includes(url), `${url} ended somewhere`);
        assert.equal(
            (await readDataset(storageDir, `${names.items}-previous`)).length,
            items.length,
            'the version before is kept',
        );
    });
});
