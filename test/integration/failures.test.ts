/**
 * Failure as the steady state: a shop where 5% of product pages fail once (503, a reset
 * connection, or no answer until the client's timeout), a few links always fail, some are dead,
 * and some pages ask to be retried later with Retry-After. Every product must end in the dataset,
 * every failing link in dead-letter after exactly the attempts it was due, with nothing fetched
 * more often than that.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { crawlShop, type ShopCrawl } from '../helpers/crawlShop.js';

const MAX_ATTEMPTS = 4;

describe('5% transient failures on 1,000 products, with links that always fail and dead links', () => {
    let run: ShopCrawl;

    before(async () => {
        run = await crawlShop(
            {
                seed: 11,
                products: 1000,
                scriptOnlyRate: 0,
                transientFailureRate: 0.05,
                transientFailureKinds: ['503', 'reset', 'hang'],
                persistentFailures: 3,
                notFoundLinks: 5,
            },
            {
                maxConcurrency: 20,
                requestTimeoutSecs: 2, // a page that never answers fails after this
                retry: { maxAttempts: MAX_ATTEMPTS, baseDelaySecs: 0.1, maxDelaySecs: 1 },
                chromiumPath: undefined,
            },
        );
    });
    after(() => run?.close());

    it("stores every product once, with the shop's values", () => {
        const byUrl = new Map(run.items.map((item) => [item._url, item]));
        assert.equal(run.items.length, 1000);
        assert.equal(byUrl.size, 1000);
        for (const product of run.shop.products) {
            const item = byUrl.get(`${run.shop.url}${product.path}`);
            assert.ok(item, `${product.path} is stored`);
            assert.equal(item.title, product.title);
        }
    });

    it('fetches each product that failed once exactly twice, and every other product once', () => {
        const stats = run.shop.stats();
        const failedOnce = run.shop.products.filter((product) => {
            const outcomes = stats.byPath[product.path] ?? {};
            return Object.keys(outcomes).some((outcome) => outcome !== '200');
        });
        assert.ok(failedOnce.length >= 40 && failedOnce.length <= 60, `about 5% failed once: ${failedOnce.length}`);
        const kinds = new Set(
            failedOnce.flatMap((product) => Object.keys(stats.byPath[product.path]!).filter((o) => o !== '200')),
        );
        assert.deepEqual([...kinds].sort(), ['503', 'hang', 'reset']);
        for (const product of run.shop.products) {
            const outcomes = stats.byPath[product.path] ?? {};
            const requests = Object.values(outcomes).reduce((sum, n) => sum + n, 0);
            assert.equal(outcomes['200'], 1, `${product.path}: one successful fetch`);
            assert.equal(
                requests,
                failedOnce.includes(product) ? 2 : 1,
                `${product.path}: ${JSON.stringify(outcomes)}`,
            );
        }
    });

    it('dead-letters a link that always fails after exactly the maximum attempts', () => {
        const stats = run.shop.stats();
        assert.equal(run.shop.persistentFailurePaths.length, 3);
        for (const path of run.shop.persistentFailurePaths) {
            assert.deepEqual(stats.byPath[path], { '503': MAX_ATTEMPTS }, `${path} asked ${MAX_ATTEMPTS} times`);
            const entry = run.deadLetters.find((e) => e.url === `${run.shop.url}${path}`);
            assert.ok(entry, `${path} is dead-lettered`);
            assert.deepEqual(
                [entry.failureClass, entry.reason, entry.status, entry.attempts],
                ['transient', 'http-503', 503, MAX_ATTEMPTS],
            );
            assert.ok(entry.firstFailedAt && entry.firstFailedAt <= entry.deadLetteredAt);
        }
    });

    it('fetches each dead link once and dead-letters it as permanent', () => {
        const stats = run.shop.stats();
        for (const path of run.shop.notFoundPaths) {
            const outcomes = stats.byPath[path] ?? {};
            assert.equal(
                Object.values(outcomes).reduce((sum, n) => sum + n, 0),
                1,
                `${path}: ${JSON.stringify(outcomes)}`,
            );
            const entry = run.deadLetters.find((e) => e.url === `${run.shop.url}${path}`);
            assert.deepEqual([entry?.failureClass, entry?.attempts], ['permanent', 1]);
        }
        assert.equal(run.deadLetters.length, run.shop.notFoundPaths.length + run.shop.persistentFailurePaths.length);
    });

    it('counts it all in the summary', () => {
        const { summary } = run;
        assert.equal(summary.items.stored, 1000);
        assert.equal(summary.requests.deadLettered, run.deadLetters.length);
        assert.equal(summary.requests.total, summary.requests.succeeded + summary.requests.deadLettered);
        const stats = run.shop.stats();
        const failedOnce = run.shop.products.filter(
            (product) => Object.keys(stats.byPath[product.path] ?? {}).length > 1,
        ).length;
        const persistent = run.shop.persistentFailurePaths.length;
        assert.equal(summary.requests.retried, failedOnce + persistent);
        assert.equal(summary.requests.retries, failedOnce + persistent * (MAX_ATTEMPTS - 1));
    });
});

describe('Retry-After on a 503', () => {
    let run: ShopCrawl;

    before(async () => {
        run = await crawlShop(
            {
                seed: 3,
                products: 200,
                scriptOnlyRate: 0,
                transientFailureRate: 0,
                notFoundLinks: 0,
                latencyMs: 20,
                retryAfter: { rate: 0.02, seconds: 2, status: 503 },
            },
            // Two slots: a page waiting for its retry must not hold one.
            {
                maxConcurrency: 2,
                adaptiveConcurrency: false,
                retry: { maxAttempts: MAX_ATTEMPTS, baseDelaySecs: 0.05 },
                chromiumPath: undefined,
            },
        );
    });
    after(() => run?.close());

    it('a 503 with Retry-After: 2 is not asked again sooner, and the product is stored', () => {
        assert.ok(run.shop.retryAfterPaths.length >= 2, 'some pages answer 429 first');
        for (const path of run.shop.retryAfterPaths) {
            const times = run.shop.requestTimes(path);
            assert.equal(times.length, 2, `${path}: the 503, then the retry`);
            assert.ok(times[1]! - times[0]! >= 2000, `${path}: retried after ${times[1]! - times[0]!} ms`);
            assert.ok(
                run.items.some((item) => item._url === `${run.shop.url}${path}`),
                `${path} is stored`,
            );
        }
    });

    it('other pages are fetched while a retry waits', () => {
        const waits = run.shop.retryAfterPaths.map((path) => run.shop.requestTimes(path) as [number, number]);
        const products = run.shop.products
            .map((p) => p.path)
            .filter((path) => !run.shop.retryAfterPaths.includes(path));
        const fetchedDuring = waits.map(
            ([start, end]) =>
                products.filter((path) => run.shop.requestTimes(path).some((time) => time > start && time < end))
                    .length,
        );
        // With both slots held by waiting pages nothing else could
        // be fetched; at 20 ms a page, two slots do ~150 in 1.5 s.
        assert.ok(Math.max(...fetchedDuring) >= 50, `pages fetched during the waits: ${fetchedDuring.join(', ')}`);
        assert.equal(run.items.length, 200);
    });
});

describe('Retry-After on a 429', () => {
    let run: ShopCrawl;

    before(async () => {
        run = await crawlShop(
            {
                seed: 3,
                products: 120,
                scriptOnlyRate: 0,
                transientFailureRate: 0,
                notFoundLinks: 0,
                latencyMs: 20,
                retryAfter: { rate: 0.02, seconds: 2 },
            },
            {
                maxConcurrency: 4,
                adaptiveConcurrency: false,
                retry: { maxAttempts: MAX_ATTEMPTS, baseDelaySecs: 0.05 },
                chromiumPath: undefined,
            },
        );
    });
    after(() => run?.close());

    it('cools the whole site: nothing is asked of it until the time is up, then every product is stored', () => {
        const paths = [...run.shop.products.map((p) => p.path), ...run.shop.listingPaths];
        const arrivals = paths.flatMap((path) => run.shop.requestTimes(path));
        assert.ok(run.shop.retryAfterPaths.length >= 1, 'some pages answer 429 first');
        for (const path of run.shop.retryAfterPaths) {
            const [limitedAt] = run.shop.requestTimes(path) as [number];
            // What was on its way when the 429 came back (at most the other 3 of the 4 slots) may still
            // arrive, late when the loaded machine stalls this process; nothing sent after it until 2 s
            // later. Not cooled, the 4 slots would ask hundreds of pages at 20 ms each in that time.
            const during = arrivals.filter((time) => time > limitedAt + 100 && time < limitedAt + 1900);
            assert.ok(during.length <= 3, `${path}: ${during.length} requests while the site cooled`);
        }
        assert.equal(run.items.length, 120);
        assert.equal(run.summary.proxies.politeness.coolings, run.shop.retryAfterPaths.length);
    });
});

describe('Retry-After on a 429, past --max-retry-after', () => {
    let run: ShopCrawl;

    before(async () => {
        run = await crawlShop(
            {
                seed: 3,
                products: 120,
                scriptOnlyRate: 0,
                transientFailureRate: 0,
                notFoundLinks: 0,
                latencyMs: 20,
                retryAfter: { rate: 0.02, seconds: 60 },
            },
            {
                maxConcurrency: 4,
                adaptiveConcurrency: false,
                retry: { maxAttempts: MAX_ATTEMPTS, baseDelaySecs: 0.05, maxRetryAfterSecs: 1 },
                chromiumPath: undefined,
            },
        );
    });
    after(() => run?.close());

    it('dead-letters the request, and cools the site for the most it would wait (1 s), not the 60 s asked', () => {
        const paths = [...run.shop.products.map((p) => p.path), ...run.shop.listingPaths];
        const arrivals = paths.flatMap((path) => run.shop.requestTimes(path));
        assert.ok(run.shop.retryAfterPaths.length >= 1, 'some pages answer 429 first');
        for (const path of run.shop.retryAfterPaths) {
            const [limitedAt] = run.shop.requestTimes(path) as [number];
            const after = arrivals.filter((time) => time > limitedAt + 900 && time < limitedAt + 10_000);
            assert.ok(
                after.length > 0 || arrivals.every((time) => time < limitedAt + 900),
                `${path}: the site still cooled 10 s after its 429`,
            );
        }
        const tooLong = run.deadLetters.filter((entry) => entry.reason === 'retry-after-too-long');
        assert.deepEqual(
            tooLong.map((entry) => new URL(entry.url).pathname).sort(),
            [...run.shop.retryAfterPaths].sort(),
        );
        assert.equal(run.items.length, 120 - run.shop.retryAfterPaths.length);
    });
});
