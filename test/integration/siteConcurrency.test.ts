/**
 * A site module's `maxConcurrency` caps the HTTP stage below `--max-concurrency`, and adaptive
 * concurrency (on by default) works under that cap: its first decision must not lift the pool to
 * the run's maximum. The shop serves 2 requests at once and refuses the rest; a few transient
 * failures make the controller decide.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import siteDefinition from '../../routes/demo-shop.js';
import { crawlShop } from '../helpers/crawlShop.js';

describe("a site module's maxConcurrency under adaptive concurrency", () => {
    it('is the ceiling the controller works under: a shop that serves 2 at once refuses nothing', async () => {
        const products = 200;
        const run = await crawlShop(
            {
                seed: 24,
                products,
                scriptOnlyRate: 0,
                transientFailureRate: 0.05,
                notFoundLinks: 0,
                latencyMs: 50,
                rateLimit: { maxConcurrent: 2 },
            },
            { site: { ...siteDefinition, maxConcurrency: 2 }, maxConcurrency: 20, chromiumPath: undefined },
        );
        try {
            const refused = Object.values(run.shop.stats().byPath).reduce(
                (sum, byStatus) => sum + (byStatus['429'] ?? 0),
                0,
            );
            assert.equal(refused, 0, `${refused} requests over the site's 2 at once`);
            assert.equal(run.items.length, products);
        } finally {
            await run.close();
        }
    });
});
