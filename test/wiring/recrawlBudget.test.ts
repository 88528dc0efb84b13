/**
 * The revisit policy under a budget: in a shop where the same 10% of products change between every
 * two runs, a recrawl allowed 20% of the site's pages spends them on the listings and the pages the
 * history says change, and so finds most changes. The naive order (the history's own, as when no
 * page has a change rate) is measured beside it, on a copy of the same storage dir.
 */
import assert from 'node:assert/strict';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import siteDefinition from '../../routes/demo-shop.js';
import { type CatalogChanges, type Shop, startShop } from '../../src/demo/shop.js';
import { createLogger } from '../../src/monitor/logger.js';
import { crawl } from '../../src/run.js';
import { openDatabase, releaseDatabase } from '../../src/store/sqlite/database.js';
import type { StoredItem } from '../../src/store/records.js';
import { readDataset } from '../helpers/stores.js';
import { CHANGING_SHOP } from '../helpers/recrawlWorld.js';

const SAME_TENTH = { priceChangeRate: 0.1, newRate: 0, removedRate: 0, movedRate: 0, changeSet: 'fixed' } as const;
/** A page is due again a second after it was looked at at most, so every page is due and the order decides. */
const REVISIT_MAX_MS = 1000;

describe('a recrawl with a budget of 20% of the pages', () => {
    let shop: Shop;
    let storageDir: string;
    let naiveDir: string;
    let changes: CatalogChanges;
    let found: number;
    let foundNaively: number;
    const crawlInto = (dir: string, maxRequests?: number) =>
        crawl({
            site: siteDefinition,
            startUrls: [`${shop.url}/`],
            storageDir: dir,
            maxRequests,
            revisit: { revisitMax: REVISIT_MAX_MS },
            progressIntervalSecs: 3600,
            log: createLogger({ level: 'silent' }),
            chromiumPath: undefined,
        });
    const changedFound = async (dir: string) => {
        const items = await readDataset<StoredItem & { _change?: string }>(dir, siteDefinition.name);
        const changed = new Set(changes.changed.map((change) => `${shop.url}${change.path}`));
        return items.filter((item) => item._change === 'changed' && changed.has(item._url)).length;
    };

    before(async () => {
        shop = await startShop(CHANGING_SHOP);
        storageDir = await mkdtemp(join(tmpdir(), 'dragnet-recrawl-budget-'));
        naiveDir = await mkdtemp(join(tmpdir(), 'dragnet-recrawl-naive-'));
        await crawlInto(storageDir);
        shop.advance(SAME_TENTH);
        await crawlInto(storageDir); // the run that learns which pages change
        changes = shop.advance(SAME_TENTH);
        await sleep(REVISIT_MAX_MS);
        await cp(storageDir, naiveDir, { recursive: true });
        forgetChangeRates(naiveDir);
        const pages = 1 + shop.listingPaths.length + shop.products.length;
        const budget = Math.floor(pages * 0.2);
        await crawlInto(storageDir, budget);
        await crawlInto(naiveDir, budget);
        found = await changedFound(storageDir);
        foundNaively = await changedFound(naiveDir);
    });
    after(async () => {
        await shop?.close();
        for (const dir of [storageDir, naiveDir]) if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('finds at least 80% of the changed products', (t) => {
        t.diagnostic(
            `changed products found: ${found} of ${changes.changed.length} by the revisit policy, ` +
                `${foundNaively} in the naive order`,
        );
        assert.ok(found >= 0.8 * changes.changed.length, `${found} of ${changes.changed.length}`);
        assert.ok(found > foundNaively, `${found} against ${foundNaively} in the naive order`);
    });
});

/** The history as if no page had been seen to change or not: every page due, in the order first stored. */
function forgetChangeRates(dir: string): void {
    const db = openDatabase(dir);
    try {
        db.prepare('UPDATE page_history SET rate = NULL').run();
    } finally {
        releaseDatabase(dir);
    }
}

describe('a recrawl after a first run its budget cut short', () => {
    let shop: Shop;
    let storageDir: string;
    let items: StoredItem[];
    let listingsAnswered304: number;

    before(async () => {
        shop = await startShop(CHANGING_SHOP);
        storageDir = await mkdtemp(join(tmpdir(), 'dragnet-recrawl-cut-'));
        const crawlOnce = (maxRequests?: number) =>
            crawl({
                site: siteDefinition,
                startUrls: [`${shop.url}/`],
                storageDir,
                maxRequests,
                progressIntervalSecs: 3600,
                log: createLogger({ level: 'silent' }),
                chromiumPath: undefined,
            });
        await crawlOnce(120);
        shop.resetStats();
        await crawlOnce();
        items = await readDataset<StoredItem>(storageDir, siteDefinition.name);
        const served = shop.stats().byPath;
        listingsAnswered304 = Object.entries(served)
            .filter(([path]) => path.startsWith('/category/'))
            .reduce((sum, [, counts]) => sum + (counts['304'] ?? 0), 0);
    });
    after(async () => {
        await shop?.close();
        if (storageDir) await rm(storageDir, { recursive: true, force: true });
    });

    it("finds the rest of the shop through the unchanged listings' links, without parsing them again", () => {
        assert.ok(listingsAnswered304 > 0, 'some listings were answered 304');
        assert.deepEqual(
            items.map((item) => item._url).sort(),
            shop.products.map((product) => `${shop.url}${product.path}`).sort(),
        );
    });
});
