/**
 * A fleet-wide limit: three workers with `--fleet-concurrency 4` against a shop that answers 429
 * to a fifth request in progress. Each worker alone would send up to 6 at once (18 together); the
 * limit is BullMQ's global concurrency, so the shop never sees more than 4 of the fleet's pages.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CliResult } from '../helpers/cli.js';
import { assertEveryProductOnce, assertExited, chromiumPath, type Fleet, SHOP, startFleet } from '../helpers/fleet.js';

describe('the fleet-wide concurrency limit', { skip: chromiumPath ? false : 'no Chromium found' }, () => {
    let fleet: Fleet;
    let results: CliResult[];

    before(async () => {
        const shop = {
            ...SHOP,
            products: 300,
            scriptOnlyRate: 0,
            transientFailureRate: 0,
            latencyMs: 40,
            rateLimit: { maxConcurrent: 5, status: 429 as const },
        };
        fleet = await startFleet(3, shop, { args: () => ['--fleet-concurrency', '4'] });
        results = await fleet.results();
    });
    after(() => fleet?.close());

    it('keeps the whole fleet within what the site takes: not one 429', async () => {
        assertExited(results);
        const rejected = Object.values(fleet.shop.stats().byPath).reduce(
            (sum, counts) => sum + (counts['429'] ?? 0),
            0,
        );
        assert.equal(rejected, 0);
        await assertEveryProductOnce(fleet);
    });
});
