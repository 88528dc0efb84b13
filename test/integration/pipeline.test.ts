/**
 * The whole pipeline against the fixture shop: 50 listing pages x 20 products, 10% of product
 * pages filled in only by script, 3% transient failures, 5 dead links, tracking-parameter and
 * alias duplicates. Everything is asserted from the shop's own request counts and the stores.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import siteDefinition from '../../routes/demo-shop.js';
import { findChromium } from '../../src/fetch/browser/chromium.js';
import type { QuarantineEntry, StoredItem } from '../../src/store/records.js';
import type { DeadLetterEntry } from '../../src/vocabulary/failure.js';
import type { RunSummary } from '../../src/vocabulary/report.js';
import { ArchiveStore, archiveDirOf } from '../../src/store/archive/archiveStore.js';
import type { RawPage } from '../../src/store/archive/rawPage.js';
import { crawlShop, type ShopCrawl } from '../helpers/crawlShop.js';
import type { Shop } from '../../src/demo/shop.js';

const chromiumPath = findChromium();

describe('crawl of the fixture shop (1,000 products)', { skip: chromiumPath ? false : 'no Chromium found' }, () => {
    let run: ShopCrawl;
    let shop: Shop;
    let summary: RunSummary;
    let exitCode: number;
    let items: StoredItem[];
    let quarantine: QuarantineEntry[];
    let deadLetters: DeadLetterEntry[];
    let rawPages: RawPage[];

    const countsFor = (path: string) => shop.stats().byPath[path] ?? {};
    const total = (counts: Record<string, number>) => Object.values(counts).reduce((sum, n) => sum + n, 0);

    before(async () => {
        run = await crawlShop(
            {
                seed: 3,
                products: 1000,
                categories: 5,
                productsPerPage: 20,
                scriptOnlyRate: 0.1,
                transientFailureRate: 0.03,
                notFoundLinks: 5,
            },
            // Adaptive timeouts off: this test counts fetches and retries exactly, and on a loaded machine a pause
            // (Chromium starting) past 5x a fast shop's p99 timed out pages the shop had answered, retrying them (CI:
            // 37 retries, not 30). test/fetch/pacing/adaptiveTimeout.test.ts covers the adaptive timeout.
            {
                maxConcurrency: 20,
                browserConcurrency: 4,
                retry: { maxAttempts: 4 },
                requestTimeoutSecs: 15,
                adaptiveTimeout: false,
                chromiumPath,
            },
        );
        ({ shop, summary, exitCode, items, quarantine, deadLetters } = run);
        rawPages = [];
        const raw = await ArchiveStore.open({ archiveDir: archiveDirOf(run.storageDir), site: siteDefinition.name });
        for await (const page of raw.pages()) rawPages.push(page);
    });

    after(() => run?.close());

    test('the shop has the shape the test is about', () => {
        assert.equal(shop.listingPaths.length, 50);
        assert.equal(shop.products.filter((p) => p.scriptOnly).length, 100);
        assert.equal(shop.products.filter((p) => p.transientFailure).length, 30);
        assert.equal(shop.notFoundPaths.length, 5);
    });

    test("every product is in the dataset once, with the shop's values", () => {
        assert.equal(items.length, shop.products.length);
        const byUrl = new Map(items.map((item) => [item._url, item]));
        assert.equal(byUrl.size, items.length, 'no product stored twice');
        for (const product of shop.products) {
            const item = byUrl.get(`${shop.url}${product.path}`);
            assert.ok(item, `product ${product.path} is in the dataset`);
            assert.equal(item.title, product.title);
            assert.equal(item.price, product.price);
            assert.equal(item.sku, product.sku);
            assert.equal(item.availability, product.availability);
            assert.equal(item._renderer, product.scriptOnly ? 'browser' : 'http');
        }
        assert.equal(quarantine.length, 0);
    });

    test('the browser rendered exactly the script-only product pages', () => {
        const rendered = new Set(
            rawPages.filter((page) => page.renderer === 'browser').map((page) => new URL(page.url).pathname),
        );
        const scriptOnly = new Set(shop.products.filter((p) => p.scriptOnly).map((p) => p.path));
        assert.deepEqual([...rendered].sort(), [...scriptOnly].sort());
        assert.equal(summary.browser.rendered, scriptOnly.size);
    });

    test('no product page is fetched twice, except a retry of a transient failure and the browser render', () => {
        for (const product of shop.products) {
            const counts = countsFor(product.path);
            const expected = 1 + (product.scriptOnly ? 1 : 0) + (product.transientFailure ? 1 : 0);
            assert.equal(total(counts), expected, `${product.path}: ${JSON.stringify(counts)}`);
            assert.equal(counts['200'], 1 + (product.scriptOnly ? 1 : 0), `${product.path} answered 200`);
        }
    });

    test(`aliases redirect once and listing pages are fetched \
once, whatever tracking parameters were on the links`, () => {
        for (const path of shop.listingPaths) {
            const pathname = path.split('?')[0]!;
            const pages = shop.listingPaths.filter((other) => other.split('?')[0] === pathname).length;
            assert.equal(total(countsFor(pathname)), pages, `${pathname}: ${JSON.stringify(countsFor(pathname))}`);
        }
        const aliases = Object.entries(shop.stats().byPath).filter(([path]) => path.startsWith('/p/'));
        assert.ok(aliases.length > 0, 'the home page links aliases');
        for (const [path, counts] of aliases) assert.deepEqual(counts, { '301': 1 }, path);
        assert.equal(countsFor('/admin/')['200'], undefined, 'robots.txt disallows /admin/');
    });

    test('each dead link is fetched once and dead-lettered with its reason', () => {
        for (const path of shop.notFoundPaths) {
            const counts = countsFor(path);
            assert.equal(total(counts), 1, `${path}: ${JSON.stringify(counts)}`);
            const entry = deadLetters.find((dead) => new URL(dead.url).pathname === path);
            assert.ok(entry, `${path} is in dead-letter`);
            const status = Number(Object.keys(counts)[0]);
            assert.equal(entry.reason, `http-${status}`);
            assert.equal(entry.failureClass, 'permanent');
            assert.equal(entry.attempts, 1);
        }
        assert.equal(deadLetters.length, shop.notFoundPaths.length);
    });

    test('the summary agrees with the stores', () => {
        assert.equal(exitCode, 0);
        assert.equal(summary.items.stored, items.length);
        assert.equal(summary.items.invalid, quarantine.length);
        assert.equal(summary.requests.deadLettered, deadLetters.length);
        assert.equal(summary.http.fetched, rawPages.filter((page) => page.renderer === 'http').length);
        assert.equal(summary.browser.rendered, rawPages.filter((page) => page.renderer === 'browser').length);
        assert.equal(summary.requests.total, summary.requests.succeeded + summary.requests.deadLettered);
        assert.equal(summary.requests.retried, shop.products.filter((p) => p.transientFailure).length);
        assert.equal(summary.escalations.total, summary.browser.rendered);
    });

    test('every stored item points to its raw page', () => {
        const keys = new Set(rawPages.map((page) => page.key));
        for (const item of items) assert.ok(keys.has(item._rawKey), `${item._url} → ${item._rawKey}`);
    });
});
