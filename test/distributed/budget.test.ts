/**
 * The request budget of a fleet: three workers, each given `--max-requests 300`, against a shop of
 * 1,000 products. The budget is one count in Redis, so the fleet admits 300 URLs in all, not 300
 * each, and every one of them ends in exactly one store.
 *
 * The shop has 30 categories of 10 products a page and answers in 300 ms, so that the budget is
 * spent over some 30 listing pages, more than one worker holds at once, and over seconds, longer
 * than the workers' start-ups differ: with 5 categories of 20 and no latency, the worker that read
 * the home page could take every listing and admit all 300 itself before the others were up, and
 * the test would show nothing about sharing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { StoredItem } from '../../src/store/records.js';
import type { DeadLetterEntry } from '../../src/vocabulary/failure.js';
import type { CliResult } from '../helpers/cli.js';
import { assertExited, chromiumPath, type Fleet, SHOP, startFleet } from '../helpers/fleet.js';

const MAX_REQUESTS = 300;

describe('three workers with one request budget', { skip: chromiumPath ? false : 'no Chromium found' }, () => {
    let fleet: Fleet;
    let results: CliResult[];

    before(async () => {
        fleet = await startFleet(
            3,
            { ...SHOP, scriptOnlyRate: 0, categories: 30, productsPerPage: 10, latencyMs: 300 },
            { args: () => ['--max-requests', `${MAX_REQUESTS}`] },
        );
        results = await fleet.results();
    });
    after(() => fleet?.close());

    it(`store exactly ${MAX_REQUESTS} requests' outcomes in all, each URL in one store once`, async () => {
        assertExited(results);
        const { world } = fleet;
        const deadLetters = await world.stored<DeadLetterEntry>('demo-shop', 'deadLetter');
        const urls = [
            ...(await world.stored<StoredItem>('demo-shop')).map((item) => item._url),
            ...(await world.stored<{ url: string }>('demo-shop', 'quarantine')).map((entry) => entry.url),
            ...deadLetters.map((entry) => entry.url),
        ];
        const summaries = await fleet.summaries();
        const sum = (count: (summary: (typeof summaries)[number]) => number) =>
            summaries.reduce((total, summary) => total + count(summary), 0);
        assert.equal(
            sum((summary) => summary.requests.total),
            MAX_REQUESTS,
            'URLs admitted by the fleet',
        );
        assert.equal(
            sum((summary) => summary.requests.succeeded + summary.requests.deadLettered),
            MAX_REQUESTS,
            'requests finished by the fleet',
        );
        // Every product page the shop was asked for has its one row; the rest of the 300 are listings,
        // and aliases (/p/N) whose redirect came once the budget was spent: those are dead-lettered.
        const { byPath } = fleet.shop.stats();
        const productsAsked = fleet.shop.products.filter((product) => byPath[product.path]).length;
        const productPaths = new Set(fleet.shop.products.map((product) => product.path));
        const productRows = urls.filter((url) => productPaths.has(new URL(url).pathname));
        assert.equal(productRows.length, productsAsked, 'a row for each product page fetched');
        const otherRows = urls.filter((url) => !productPaths.has(new URL(url).pathname));
        assert.deepEqual(
            otherRows.map((url) => `${url} ${deadLetters.find((entry) => entry.url === url)?.reason}`),
            otherRows.map((url) => `${url} over-budget-redirect`),
        );
        assert.ok(productsAsked < MAX_REQUESTS && productsAsked > MAX_REQUESTS / 2, `${productsAsked} product pages`);
        assert.equal(new Set(urls).size, urls.length, 'no URL in two stores, or twice in one');
        assert.equal(
            deadLetters.length,
            sum((summary) => summary.requests.deadLettered),
        );
        assert.ok(
            summaries.filter((summary) => summary.requests.total > 0).length >= 2,
            `the budget was shared, not taken by one worker (admitted: ${summaries.map((s) => s.requests.total).join('/')})`,
        );
    });
});
