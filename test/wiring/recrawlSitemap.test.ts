/**
 * The revisit policy takes a sitemap's word: with `--revisit-min` keeping every product page not due,
 * a recrawl of a shop whose sitemap gives each product's `<lastmod>` fetches exactly the products
 * whose lastmod is after their last check (their price changed), and no other product page.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import siteDefinition from '../../routes/demo-shop.js';
import { type CatalogChanges, type Shop, type ShopStats, startShop } from '../../src/demo/shop.js';
import { createLogger } from '../../src/monitor/logger.js';
import { crawl } from '../../src/run.js';
import type { Site } from '../../src/site/site.js';
import type { StoredItem } from '../../src/store/records.js';
import type { RunSummary } from '../../src/vocabulary/report.js';
import { CHANGING_SHOP } from '../helpers/recrawlWorld.js';
import { readDataset } from '../helpers/stores.js';

const PRICES_ONLY = { priceChangeRate: 0.1, newRate: 0, removedRate: 0, movedRate: 0 } as const;
const withSitemaps: Site = { ...siteDefinition, sitemaps: true };

describe("a recrawl of pages not due, told by the sitemap's lastmod which changed", () => {
    let shop: Shop;
    let storageDir: string;
    let changes: CatalogChanges;
    let served: ShopStats;
    let summary: RunSummary;
    let items: (StoredItem & { _change?: string })[];
    const crawlOnce = async () =>
        (
            await crawl({
                site: withSitemaps,
                startUrls: [`${shop.url}/`],
                storageDir,
                revisit: { revisitMin: 3_600_000 },
                progressIntervalSecs: 3600,
                log: createLogger({ level: 'silent' }),
                chromiumPath: undefined,
            })
        ).summary;

    before(async () => {
        shop = await startShop({ ...CHANGING_SHOP, sitemaps: true });
        storageDir = await mkdtemp(join(tmpdir(), 'dragnet-recrawl-sitemap-'));
        await crawlOnce();
        await crawlOnce(); // every page looked at once more: from here on, an hour apart at least
        await sleep(1000); // a lastmod after the last check, to the second
        changes = shop.advance(PRICES_ONLY);
        shop.resetStats();
        summary = await crawlOnce();
        served = shop.stats();
        items = await readDataset(storageDir, siteDefinition.name);
    });
    after(async () => {
        await shop?.close();
        if (storageDir) await rm(storageDir, { recursive: true, force: true });
    });

    it('fetches the changed products, and only those', () => {
        const fetched = shop.products
            .map((product) => product.path)
            .filter((path) => Object.keys(served.byPath[path] ?? {}).length > 0);
        assert.deepEqual(fetched.sort(), changes.changed.map((change) => change.path).sort());
    });

    it('finds them changed, and keeps every other product as it was', () => {
        const changed = items.filter((item) => item._change === 'changed').map((item) => item._url);
        assert.deepEqual(changed.sort(), changes.changed.map((change) => `${shop.url}${change.path}`).sort());
        assert.equal(items.length, shop.products.length);
        assert.equal(summary.recrawl?.items.unchanged, shop.products.length - changes.changed.length);
    });
});
