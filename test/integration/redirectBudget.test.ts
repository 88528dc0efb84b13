/**
 * A redirect whose target the frontier does not take (over the request budget here; robots.txt and
 * the routes are the other ways) leaves its URL nowhere else, so it is dead-lettered with why:
 * every URL admitted ends in the dataset, quarantine or dead-letter. The shop's `/p/N` aliases
 * answer 301 to their product pages.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { crawlShop, type ShopCrawl } from '../helpers/crawlShop.js';

describe('redirects whose targets are over the request budget', () => {
    let run: ShopCrawl;
    before(async () => {
        run = await crawlShop(
            { seed: 9, products: 60, scriptOnlyRate: 0, transientFailureRate: 0, notFoundLinks: 0, latencyMs: 5 },
            { maxConcurrency: 4, maxRequests: 12, chromiumPath: undefined },
        );
    });
    after(() => run?.close());

    it('are dead-lettered as over-budget-redirect, and every URL admitted is accounted for', () => {
        const overBudget = run.deadLetters.filter((entry) => entry.reason === 'over-budget-redirect');
        assert.ok(
            overBudget.length > 0,
            `dead-letter: ${JSON.stringify(run.deadLetters.map((entry) => entry.reason))}`,
        );
        for (const entry of overBudget) {
            assert.match(new URL(entry.url).pathname, /^\/p\/\d+$/);
            assert.equal(entry.failureClass, 'permanent');
        }
        const { requests } = run.summary;
        assert.equal(requests.total, 12);
        assert.equal(requests.total, requests.succeeded + requests.deadLettered);
        assert.equal(requests.deadLettered, run.deadLetters.length);
    });
});
