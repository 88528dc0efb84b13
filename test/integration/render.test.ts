/**
 * Rendering only when needed, end to end against the fixture shop: a route whose every page
 * is script-only learns to skip the cheap fetch, and a run without a browser completes and
 * dead-letters exactly the pages that needed one.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { findChromium } from '../../src/fetch/browser/chromium.js';
import { crawlShop } from '../helpers/crawlShop.js';
import { readDataset } from '../helpers/stores.js';
import { startShop } from '../../src/demo/shop.js';

const chromiumPath = findChromium();

describe('render learning', { skip: chromiumPath ? false : 'no Chromium found' }, () => {
    it(`a route whose pages all need the browser stops paying \
for the cheap fetch after the learning window`, async (t) => {
        const maxConcurrency = 4;
        const minSamples = 20;
        const run = await crawlShop(
            { seed: 5, products: 120, scriptOnlyRate: 1, transientFailureRate: 0, notFoundLinks: 0 },
            // Adaptive timeouts off, as in pipeline.test.ts: the counts here are exact.
            {
                maxConcurrency,
                browserConcurrency: 4,
                retry: { maxAttempts: 3 },
                requestTimeoutSecs: 15,
                adaptiveTimeout: false,
                renderLearning: { minSamples },
                chromiumPath,
            },
        );
        t.after(() => run.close());
        const { shop, summary } = run;

        assert.equal(summary.items.stored, shop.products.length, 'every product is still stored');
        // From the shop's side: a page asked twice was fetched cheaply and then rendered; once, rendered directly.
        const requestsPerProduct = shop.products.map((product) =>
            Object.values(shop.stats().byPath[product.path] ?? {}).reduce((sum, count) => sum + count, 0),
        );
        assert.ok(
            requestsPerProduct.every((count) => count === 1 || count === 2),
            JSON.stringify(requestsPerProduct),
        );
        const cheapFetches = requestsPerProduct.filter((count) => count === 2).length;
        // The learning window: the first minSamples cheap fetches, plus those already in flight when the decision fell.
        const window = minSamples + maxConcurrency;
        const afterWindow = shop.products.length - window;
        assert.ok(
            (cheapFetches - window) / afterWindow <= 0.05,
            `${cheapFetches} cheap fetches of ${shop.products.length} pages`,
        );
        assert.equal(summary.render.product?.mode, 'browser-direct');
        assert.equal(summary.browser.direct, shop.products.length - cheapFetches);
        assert.equal(summary.browser.rendered, shop.products.length);
    });
});

describe('no browser available', () => {
    it(`completes the run, dead-letters exactly the script-only pages as \
renderer-unavailable, and exits non-zero with a clear message`, async (t) => {
        const shop = await startShop({
            seed: 9,
            products: 100,
            scriptOnlyRate: 0.2,
            transientFailureRate: 0,
            notFoundLinks: 0,
        });
        const storageDir = await mkdtemp(join(tmpdir(), 'dragnet-nobrowser-'));
        t.after(async () => {
            await shop.close();
            await rm(storageDir, { recursive: true, force: true });
        });
        const failure = await promisify(execFile)(
            process.execPath,
            [
                '--import',
                'tsx',
                'src/main.ts',
                '--site',
                'demo-shop',
                '--start-url',
                `${shop.url}/`,
                '--storage-dir',
                storageDir,
            ],
            { env: { ...process.env, CHROMIUM_PATH: '/nonexistent/chromium', LOG_LEVEL: 'warn' }, timeout: 120_000 },
        ).then(
            () => assert.fail('the run should exit non-zero'),
            (error: { code: number; stdout: string; stderr: string }) => error,
        );
        assert.equal(failure.code, 1);
        assert.match(failure.stderr, /no Chromium found/);
        assert.match(failure.stderr, /apt-get install -y chromium|CHROMIUM_PATH/);
        assert.match(failure.stdout, /items\s+80 stored/);

        const entries = await readDataset<{ url: string; reason: string }>(storageDir, 'demo-shop-dead-letter');
        const scriptOnly = shop.products
            .filter((product) => product.scriptOnly)
            .map((product) => `${shop.url}${product.path}`);
        assert.deepEqual(entries.map((entry) => entry.url).sort(), scriptOnly.sort());
        assert.ok(entries.every((entry) => entry.reason === 'renderer-unavailable'));
    });
});
