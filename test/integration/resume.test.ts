/**
 * Crash-safe resume: the CLI, crawling the fixture shop from another process, is killed with
 * SIGKILL three times at random points and started again on the same storage dir each time; it
 * must end with exactly the shop's products, each stored once with its raw page, and no product
 * page fetched more than twice. After each kill, the archive reads back (warcio's parser) with every
 * page an item was committed from. The same with pages only the browser can read, killed while the
 * browser stage renders. SIGINT must stop it gracefully: pages in flight finish, the summary is
 * printed, and the next run finishes the job without fetching any product page again.
 */
import assert from 'node:assert/strict';
import { createReadStream } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it, type TestContext } from 'node:test';
import { WARCParser } from 'warcio';

import type { RunSummary } from '../../src/vocabulary/report.js';
import { ArchiveStore, archiveDirOf } from '../../src/store/archive/archiveStore.js';
import type { StoredItem } from '../../src/store/records.js';
import { startCli } from '../helpers/cli.js';
import { readDataset } from '../helpers/stores.js';
import { startShop, type Shop, type ShopOptions } from '../../src/demo/shop.js';

const PRODUCTS = 600;
const MAX_CONCURRENCY = 10;

async function setUp(
    t: TestContext,
    shopOptions: ShopOptions = {},
): Promise<{ shop: Shop; storageDir: string; args: string[] }> {
    const shop = await startShop({
        seed: 21,
        products: PRODUCTS,
        scriptOnlyRate: 0,
        transientFailureRate: 0.02,
        notFoundLinks: 2,
        latencyMs: 5,
        ...shopOptions,
    });
    const storageDir = await mkdtemp(join(tmpdir(), 'dragnet-resume-'));
    t.after(async () => {
        await shop.close();
        await rm(storageDir, { recursive: true, force: true });
    });
    const args = [
        '--site',
        'demo-shop',
        '--start-url',
        `${shop.url}/`,
        '--storage-dir',
        storageDir,
        '--max-concurrency',
        String(MAX_CONCURRENCY),
        '--retry-base-delay',
        '0.1',
        '--summary-json',
        join(storageDir, 'summary.json'),
    ];
    return { shop, storageDir, args };
}

/** Successful product page fetches so far. */
function productPagesServed(shop: Shop): number {
    const stats = shop.stats();
    return shop.products.reduce((sum, product) => sum + (stats.byPath[product.path]?.['200'] ?? 0), 0);
}

/** Waits until `count()` has grown by `by` from where it is now; after 60 s, fails with `stalled`. */
async function waitForGrowth(count: () => number, by: number, stalled: string): Promise<void> {
    const target = count() + by;
    const deadline = Date.now() + 60_000;
    while (count() < target) {
        if (Date.now() > deadline) throw new Error(stalled);
        await sleep(5);
    }
}

async function assertEveryProductOnce(shop: Shop, storageDir: string): Promise<StoredItem[]> {
    const items = await readDataset<StoredItem>(storageDir, 'demo-shop');
    const urls = items.map((item) => item._url);
    assert.equal(new Set(urls).size, urls.length, 'no product stored twice');
    assert.deepEqual(
        [...urls].sort(),
        shop.products.map((product) => `${shop.url}${product.path}`).sort(),
        "exactly the shop's products",
    );
    return items;
}

/** An item committed before a kill keeps the raw page it was parsed from, for reparse. */
async function assertEveryItemHasItsRawPage(items: StoredItem[], storageDir: string): Promise<void> {
    const rawKeys = new Set<string>();
    for await (const page of (
        await ArchiveStore.open({ archiveDir: archiveDirOf(storageDir), site: 'demo-shop' })
    ).pages())
        rawKeys.add(page.key);
    const withoutRaw = items.filter((item) => !rawKeys.has(item._rawKey));
    assert.deepEqual(
        withoutRaw.map((item) => item._url),
        [],
        "every item's raw page is stored",
    );
}

/**
 * Right after a kill: every WARC file reads with warcio's own parser, no record in it cut short but
 * its last (the one the kill interrupted), and every item committed so far has its page.
 */
async function assertArchiveSurvivedKill(storageDir: string): Promise<void> {
    const dir = join(archiveDirOf(storageDir), 'demo-shop');
    for (const file of (await readdir(dir)).filter((name) => name.endsWith('.warc.gz'))) {
        const whole: boolean[] = [];
        for await (const record of new WARCParser(createReadStream(join(dir, file)), { parseHttp: false }))
            whole.push((await record.readFully(false)).length === record.warcContentLength);
        assert.ok(!whole.slice(0, -1).includes(false), `${file}: only its last record is cut`);
    }
    await assertEveryItemHasItsRawPage(await readDataset<StoredItem>(storageDir, 'demo-shop'), storageDir);
}

/** Starts the CLI, kills it with SIGKILL once `killAfter` resolves, and checks the archive it leaves. */
async function crawlUntilKilled(args: string[], storageDir: string, killAfter: () => Promise<void>): Promise<void> {
    const { child, result } = startCli(args);
    await killAfter();
    child.kill('SIGKILL');
    const { signal } = await result;
    assert.equal(signal, 'SIGKILL');
    await assertArchiveSurvivedKill(storageDir);
}

describe('crash-safe resume', () => {
    it(`killed with SIGKILL three times at random points and resumed each \
time, ends with every product once, none fetched more than twice`, async (t) => {
        const { shop, storageDir, args } = await setUp(t);
        // Each kill somewhere in the next 30..170 product pages: early, mid-batch, or between pages.
        const someProductPages = () =>
            waitForGrowth(
                () => productPagesServed(shop),
                30 + Math.floor(Math.random() * 140),
                'the crawl made no progress',
            );
        for (let kill = 1; kill <= 3; kill++) await crawlUntilKilled(args, storageDir, someProductPages);
        assert.ok(productPagesServed(shop) < PRODUCTS, 'the kills came before the crawl was done');

        const final = await startCli(args).result;
        assert.equal(final.code, 0, final.stderr);
        await assertEveryItemHasItsRawPage(await assertEveryProductOnce(shop, storageDir), storageDir);

        const stats = shop.stats();
        const fetchedTwice = shop.products.filter((product) => (stats.byPath[product.path]?.['200'] ?? 0) > 1);
        for (const product of shop.products) {
            assert.ok(
                (stats.byPath[product.path]?.['200'] ?? 0) <= 2,
                `${product.path}: ${JSON.stringify(stats.byPath[product.path])}`,
            );
        }
        // Only pages in flight at a kill are fetched again: at most the concurrency per kill.
        assert.ok(fetchedTwice.length <= 3 * MAX_CONCURRENCY, `${fetchedTwice.length} product pages fetched twice`);

        const summary = JSON.parse(await readFile(join(storageDir, 'summary.json'), 'utf8')) as RunSummary;
        assert.equal(summary.resumed?.sessions, 3);
        assert.equal(summary.items.stored, PRODUCTS, 'counters carried over the kills agree with the dataset');
    });

    it(`with pages only the browser can read, killed twice while the browser renders \
and resumed, ends with every product once, each script-only one rendered`, async (t) => {
        const { shop, storageDir, args } = await setUp(t, { products: 120, scriptOnlyRate: 0.1 });
        const scriptOnly = shop.products.filter((product) => product.scriptOnly);
        /** Script-only product pages served a second time: by the browser stage, after the HTTP stage's fetch. */
        const rendered = () =>
            scriptOnly.filter((product) => (shop.stats().byPath[product.path]?.['200'] ?? 0) >= 2).length;
        for (let kill = 1; kill <= 2; kill++)
            await crawlUntilKilled(args, storageDir, () => waitForGrowth(rendered, 2, 'the browser rendered nothing'));
        assert.ok(rendered() < scriptOnly.length, 'the kills came before the browser was done');

        const final = await startCli(args).result;
        assert.equal(final.code, 0, final.stderr);
        const items = await assertEveryProductOnce(shop, storageDir);
        await assertEveryItemHasItsRawPage(items, storageDir);
        const scriptOnlyUrls = new Set(scriptOnly.map((product) => `${shop.url}${product.path}`));
        for (const item of items)
            assert.equal(item._renderer, scriptOnlyUrls.has(item._url) ? 'browser' : 'http', item._url);
    });

    it(`SIGINT stops gracefully with a summary; the next run \
finishes without fetching any product page again`, async (t) => {
        const { shop, storageDir, args } = await setUp(t);
        const { child, result } = startCli(args);
        await waitForGrowth(() => productPagesServed(shop), 150, 'the crawl made no progress');
        child.kill('SIGINT');
        const stopped = await result;
        assert.equal(stopped.code, 130, stopped.stderr);
        assert.match(stopped.stdout, /stopped by SIGINT/);
        assert.match(stopped.stdout, /resume {5}run the same command again/);
        assert.ok(productPagesServed(shop) < PRODUCTS);

        const final = await startCli(args).result;
        assert.equal(final.code, 0, final.stderr);
        assert.match(final.stdout, /session 2/);
        await assertEveryProductOnce(shop, storageDir);
        const stats = shop.stats();
        for (const product of shop.products) assert.equal(stats.byPath[product.path]?.['200'], 1, product.path);
    });
});
