/**
 * The day after, on one machine: a full first run of a shop, the shop changes (prices on 10% of its
 * products, 3% new, 2% removed, 1% moved by a 301), and the next run of the same storage dir
 * recrawls it. It asks every known page conditionally, parses only what changed, and its change
 * log (`npm run export -- --changes`) is the shop's own account of what it changed.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import siteDefinition from '../../routes/demo-shop.js';
import { type CatalogChanges, type Shop, type ShopStats, startShop } from '../../src/demo/shop.js';
import { validatorKindOf } from '../../src/demo/validators.js';
import { createLogger } from '../../src/monitor/logger.js';
import { crawl } from '../../src/run.js';
import type { StoredItem } from '../../src/store/records.js';
import type { RunSummary } from '../../src/vocabulary/report.js';
import { runScript } from '../helpers/cli.js';
import { readDataset } from '../helpers/stores.js';
import { CHANGING_SHOP, changeLogLines, jsonLines, comparable, expectedChangeLog } from '../helpers/recrawlWorld.js';

type ChangedItem = StoredItem & { _change?: string };

describe('a recrawl of a shop that changed since the first run', () => {
    let shop: Shop;
    let storageDir: string;
    let freshDir: string;
    let changes: CatalogChanges;
    let first: RunSummary;
    let second: RunSummary;
    let served: ShopStats;
    let recrawlStartedAt: number;
    let items: ChangedItem[];
    const crawlInto = async (dir: string) =>
        (
            await crawl({
                site: siteDefinition,
                startUrls: [`${shop.url}/`],
                storageDir: dir,
                progressIntervalSecs: 3600,
                log: createLogger({ level: 'silent' }),
                chromiumPath: undefined,
            })
        ).summary;

    before(async () => {
        shop = await startShop(CHANGING_SHOP);
        storageDir = await mkdtemp(join(tmpdir(), 'dragnet-recrawl-'));
        freshDir = await mkdtemp(join(tmpdir(), 'dragnet-recrawl-fresh-'));
        first = await crawlInto(storageDir);
        changes = shop.advance();
        shop.resetStats();
        recrawlStartedAt = Date.now();
        second = await crawlInto(storageDir);
        served = shop.stats();
        items = await readDataset<ChangedItem>(storageDir, siteDefinition.name);
    });
    after(async () => {
        await shop?.close();
        for (const dir of [storageDir, freshDir]) if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('is a recrawl: the first run is run 1 of the series, the next run 2', () => {
        assert.equal(first.recrawl, undefined);
        assert.equal(second.recrawl?.run, 2);
        assert.ok(changes.changed.length > 0 && changes.added.length > 0);
        assert.ok(changes.removed.length > 0 && changes.moved.length > 0);
    });

    it('has every page served as before answered 304 when it has a validator, and none of them parsed', () => {
        const changedPages = new Set(changes.pages);
        const unchanged = ['/', ...shop.listingPaths, ...shop.products.map((product) => product.path)].filter(
            (path) => !changedPages.has(path),
        );
        const itemByUrl = new Map(items.map((item) => [item._url, item]));
        let withValidator = 0;
        for (const path of unchanged) {
            const pathname = new URL(path, shop.url).pathname;
            const counts = served.byPath[pathname] ?? {};
            const kind = validatorKindOf(pathname);
            if (kind !== 'none') withValidator += 1;
            if (!pathname.startsWith('/products/')) continue;
            assert.deepEqual(counts, kind === 'none' ? { '200': 1 } : { '304': 1 }, path);
            // Carried, not parsed: the item is the first run's, fetched before the recrawl began.
            const item = itemByUrl.get(`${shop.url}${path}`);
            assert.equal(item?._change, 'unchanged', path);
            assert.ok(Date.parse(item._fetchedAt) < recrawlStartedAt, path);
        }
        assert.ok(withValidator > 100, `${withValidator} unchanged pages with a validator`);
        const { unchangedPages } = second.recrawl!;
        assert.equal(unchangedPages.notModified, withValidator);
        assert.equal(unchangedPages.identicalPayload, unchanged.length - withValidator);
    });

    it("writes a change log (export --changes) that is exactly the shop's changes", async () => {
        const run = await runScript('src/commands/export.ts', [
            ...['--changes', '--format', 'jsonl', '--site', siteDefinition.name],
            ...['--storage-dir', storageDir],
        ]);
        assert.equal(run.code, 0, run.stderr);
        assert.deepEqual(changeLogLines(jsonLines(run.stdout)), expectedChangeLog(changes, shop.url));
    });

    it('counts the changes in the summary, per route', () => {
        const product = second.recrawl!.byRoute.product!;
        assert.equal(product.changed, changes.changed.length);
        assert.equal(product.new, changes.added.length + changes.moved.length);
        assert.equal(product.removed, changes.removed.length + changes.moved.length);
        assert.equal(product.unchanged, items.filter((item) => item._change === 'unchanged').length);
    });

    it('stores the items a fresh crawl of the changed shop stores', async () => {
        await crawlInto(freshDir);
        const fresh = await readDataset<StoredItem>(freshDir, siteDefinition.name);
        assert.deepEqual(comparable(items), comparable(fresh));
    });

    it("keeps the first run's items as the -previous dataset", async () => {
        const previous = await readDataset<StoredItem>(storageDir, `${siteDefinition.name}-previous`);
        assert.equal(previous.length, first.items.stored);
    });

    it('re-parses its archive into the same items: no page the recrawl found gone comes back', async () => {
        const run = await runScript('src/commands/reparse.ts', [
            ...['--site', siteDefinition.name, '--storage-dir', storageDir],
        ]);
        assert.equal(run.code, 0, run.stderr);
        const reparsed = await readDataset<StoredItem>(storageDir, siteDefinition.name);
        assert.deepEqual(comparable(reparsed), comparable(items));
    });
});
