/**
 * Reparse in distributed mode: the same algorithm (src/parse/reparse.ts) over PostgreSQL's raw
 * pages and results (src/store/postgres/results.ts). A crawl of the demo shop whose product page
 * was redesigned part-way (test/helpers/storedShop.ts) is stored in both backends; after the
 * extractor is fixed, reparse must move the quarantined items to the items in PostgreSQL exactly as
 * it does in the embedded stores, keep the version before as `<site>-previous`, and leave other
 * sites and the raw pages alone. Against the real PostgreSQL, each test in a schema of its own
 * (test/helpers/pgSchema.ts).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import demoSite from '../../routes/demo-shop.js';
import { reparse, reparseSite } from '../../src/parse/reparse.js';
import { textOf } from '../../src/site/site.js';
import { openStorage, storeNames } from '../../src/store/datasets.js';
import type { PgDatabase } from '../../src/store/postgres/database.js';
import { pgResults, type PgResultsOptions } from '../../src/store/postgres/results.js';
import { PgSink } from '../../src/store/postgres/sink.js';
import type { RawPages } from '../../src/store/rawPages.js';
import type { StoredItem } from '../../src/store/records.js';
import type { DeadLetterEntry } from '../../src/vocabulary/failure.js';
import { storedRows, testDatabase } from '../helpers/pgSchema.js';
import { readDataset } from '../helpers/stores.js';
import { storeInDir, storeInPostgres, storedShop } from '../helpers/storedShop.js';
import { tempDir } from '../helpers/tempDir.js';
import { withExtractor } from '../helpers/withExtractor.js';

const SITE = demoSite.name;
/** The fix a contributor would make after the redesign: read the title from either layout. */
const fixed = withExtractor(demoSite, 'product', (broken) => ($, page) => ({
    ...(broken($, page) as object),
    title: textOf($, 'h1.product-title, h1.product-name'),
}));
const SHOP = { products: 12, redesignedFrom: 7, stoppedLast: true };

const byUrl = <T extends { _url: string }>(items: T[]) => [...items].sort((a, b) => a._url.localeCompare(b._url));

async function reparsePg(db: PgDatabase, raw: RawPages, options: PgResultsOptions = {}) {
    return reparseSite({ site: fixed, raw, results: await pgResults(db, SITE, options) });
}

describe('reparse in PostgreSQL', () => {
    it(`moves the quarantined items to the items after an extractor fix, as in \
the embedded stores, keeping the version before as <site>-previous`, async (t) => {
        const shop = storedShop(demoSite, SHOP);
        const crawled = shop.outcomes.flatMap((outcome) => outcome.items ?? []);
        assert.deepEqual(
            [
                crawled.length,
                shop.outcomes.flatMap((outcome) => outcome.quarantine ?? []).length,
                shop.outcomes.filter((outcome) => outcome.deadLetter).length,
            ],
            [7, 4, 2],
            'the crawl: 7 items, 4 redesigned pages quarantined, 1 stopped and 1 missing page dead-lettered',
        );
        const { db } = await testDatabase(t);
        const raw = await storeInPostgres(db, SITE, shop, await tempDir(t, 'reparse-pg-raw'));
        const other = { ...crawled[0]!, _url: 'http://other.test/1' };
        await new PgSink(db).commit('other-shop', [{ requestKey: other._url, items: [other] }]);
        const storageDir = await mkdtemp(join(tmpdir(), 'dragnet-reparse-pg-'));
        t.after(() => rm(storageDir, { recursive: true, force: true }));
        await storeInDir(storageDir, SITE, shop);

        const result = await reparsePg(db, raw);
        const { config, storage } = openStorage(storageDir);
        const embedded = await reparse({ site: fixed, storageDir, config }).finally(() => storage.close());

        assert.deepEqual(result, embedded, 'the same result in both backends');
        assert.deepEqual(
            {
                pages: result.pages,
                needBrowser: result.needBrowser,
                unparsable: result.unparsable,
                items: result.items,
                quarantined: result.quarantined,
                title: result.changedByField.title,
            },
            {
                pages: 12,
                needBrowser: 0,
                unparsable: 0,
                items: { before: 7, after: 12 },
                quarantined: { before: 4, after: 0 },
                title: 5,
            },
        );
        const items = await storedRows<StoredItem>(db, SITE);
        assert.deepEqual(
            byUrl(items),
            byUrl(await readDataset<StoredItem>(storageDir, storeNames(SITE).items)),
            'the same items in both backends',
        );
        const titles = new Map(shop.products.map((product) => [`http://127.0.0.1:8080${product.path}`, product.title]));
        assert.deepEqual(
            new Map(items.map((item) => [item._url, item.title])),
            titles,
            'every product once, with its title',
        );
        assert.deepEqual(await storedRows(db, SITE, 'quarantine'), []);
        // The stopped page was judged now, so it left dead-letter; the page never fetched stays.
        assert.deepEqual(
            (await storedRows<DeadLetterEntry>(db, SITE, 'deadLetter')).map((entry) => entry.reason),
            ['http-404'],
        );

        assert.deepEqual(
            byUrl(await storedRows<StoredItem>(db, `${SITE}-previous`)),
            byUrl(crawled),
            'the version before is kept',
        );
        const sink = new PgSink(db);
        const previous = await sink.counts(`${SITE}-previous`);
        assert.deepEqual([previous.quarantine, previous.deadLetter], [4, 2]);
        assert.deepEqual(
            await sink.counts(`${SITE}-reparsed`),
            { items: 0, quarantine: 0, deadLetter: 0, rawPages: 0 },
            'nothing left under -reparsed',
        );
        assert.equal((await sink.counts(SITE)).rawPages, shop.pages.length, 'raw pages are not versioned');
        assert.deepEqual(await storedRows(db, 'other-shop'), [other], 'another site in the same tables is left alone');
    });

    it(`run again with the same extractors, changes nothing and stores \
no row twice; the version before the last is dropped`, async (t) => {
        const { db } = await testDatabase(t);
        const raw = await storeInPostgres(db, SITE, storedShop(demoSite, SHOP), await tempDir(t, 'reparse-pg-raw'));
        await reparsePg(db, raw);
        const first = await storedRows<StoredItem>(db, SITE);

        const again = await reparsePg(db, raw);
        assert.deepEqual(
            { items: again.items, changed: again.changedByField },
            { items: { before: 12, after: 12 }, changed: {} },
        );
        assert.deepEqual(await storedRows(db, SITE), first, 'the same items, in the same order');
        assert.deepEqual(await storedRows(db, `${SITE}-previous`), first, '-previous is now the first reparse');
        const { rows } = await db.query(
            `SELECT request_key, ordinal FROM ${db.table('items')} WHERE site = $1 GROUP BY 1, 2 HAVING count(*) > 1`,
            [SITE],
        );
        assert.deepEqual(rows, []);
    });

    it(`leaves the current version as it was when it fails \
part-way, and the next reparse drops what it left`, async (t) => {
        const { db } = await testDatabase(t);
        const shop = storedShop(demoSite, SHOP);
        const pages = await storeInPostgres(db, SITE, shop, await tempDir(t, 'reparse-pg-raw'));
        // The second pass over the pages (the one that parses) breaks after three.
        let passes = 0;
        const failing: RawPages = {
            put: (page) => pages.put(page),
            putRedirect: (redirect) => pages.putRedirect(redirect),
            putRevisit: (revisit) => pages.putRevisit(revisit),
            flush: () => pages.flush(),
            get: (key) => pages.get(key),
            pages: async function* () {
                passes += 1;
                let yielded = 0;
                for await (const page of pages.pages()) {
                    if (passes === 2 && yielded++ === 3) throw new Error('the connection broke for good');
                    yield page;
                }
            },
        };
        // Each row written as it is pushed, so what the failed reparse
        // parsed is in the database, as a killed one leaves it.
        await assert.rejects(reparsePg(db, failing, { writeBatchSize: 1 }), /broke for good/);
        assert.ok((await new PgSink(db).counts(`${SITE}-reparsed`)).items > 0, 'it left part of the next version');
        const crawled = shop.outcomes.flatMap((outcome) => outcome.items ?? []);
        assert.deepEqual(
            byUrl(await storedRows<StoredItem>(db, SITE)),
            byUrl(crawled),
            'the current version is untouched',
        );
        assert.equal((await new PgSink(db).counts(`${SITE}-previous`)).items, 0, 'nothing was promoted');

        // And one a reparse of a page since gone left: its key is none the next reparse writes.
        const gone = { ...crawled[0]!, _url: 'http://127.0.0.1:8080/products/since-removed' };
        await new PgSink(db).commit(`${SITE}-reparsed`, [{ requestKey: gone._url, items: [gone] }]);

        const result = await reparsePg(db, pages);
        assert.deepEqual(result.items, { before: 7, after: 12 }, 'the leftovers of the failed reparse are not counted');
        assert.ok(!(await storedRows<StoredItem>(db, SITE)).some((item) => item._url === gone._url), 'nor promoted');
        assert.equal((await new PgSink(db).counts(`${SITE}-reparsed`)).items, 0);
    });
});
