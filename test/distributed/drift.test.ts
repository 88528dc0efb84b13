/**
 * The drift breaker across a fleet: a route stopped in one worker is stopped in all. Worker 0 runs a
 * build of the site whose product extractor lost its title, worker 1 the good one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { StoredItem } from '../../src/store/records.js';
import type { DeadLetterEntry } from '../../src/vocabulary/failure.js';
import type { RunSummary } from '../../src/vocabulary/report.js';
import { assertExited, chromiumPath, type Fleet, SHOP, startFleet } from '../helpers/fleet.js';
import type { CliResult } from '../helpers/cli.js';

const BROKEN_SITE = fileURLToPath(new URL('./fixtures/brokenShop.ts', import.meta.url));

describe('a route stopped by the drift breaker of one worker', {
    skip: chromiumPath ? false : 'no Chromium found',
}, () => {
    let fleet: Fleet;
    let results: CliResult[];
    let summaries: RunSummary[];

    before(async () => {
        // Worker 0 runs a build of the site whose product extractor lost its title; worker 1 the good one, so
        // worker 1 can never trip by itself: if it stops the route, it was told to.
        const drift = ['--drift-window', '40', '--drift-min-pages', '20', '--drift-threshold', '0.5'];
        fleet = await startFleet(
            2,
            { ...SHOP, products: 300, scriptOnlyRate: 0, transientFailureRate: 0, latencyMs: 30 },
            {
                args: (index) => [...drift, '--site', index === 0 ? BROKEN_SITE : 'demo-shop'],
            },
        );
        results = await fleet.results();
        summaries = await fleet.summaries();
    });
    after(() => fleet?.close());

    it('is stopped in every worker, and both end with the drift exit code', () => {
        assertExited(results, 3);
        for (const summary of summaries)
            assert.deepEqual(
                summary.drift.map((trip) => trip.route),
                ['product'],
            );
        assert.equal(summaries[1]!.items.invalid, 0, 'the good worker judged no invalid page itself');
    });

    it('dead-letters the rest of the route as route-stopped, every product accounted for once', async () => {
        const { world, shop } = fleet;
        const stored = await world.stored<StoredItem>('demo-shop');
        const quarantined = await world.stored<{ url: string }>('demo-shop', 'quarantine');
        const dead = await world.stored<DeadLetterEntry>('demo-shop', 'deadLetter');
        assert.ok(dead.length > 0 && dead.every((entry) => entry.reason === 'route-stopped'));
        const places = [
            ...stored.map((item) => item._url),
            ...quarantined.map((entry) => entry.url),
            ...dead.map((entry) => entry.url),
        ];
        assert.equal(new Set(places).size, places.length, 'no URL in two places, nor twice in one');
        // A featured alias (`/p/<n>`, a 301 to the shop's n-th product) is a URL of the frontier's own. Fetched
        // before the trip, it is a redirect and leaves no entry of its own; after it, it is dead-lettered under
        // its own URL, and that entry stands for its product.
        const productUrlOfAlias = new Map(
            shop.products.map((product, index) => [`${shop.url}/p/${index + 1}`, `${shop.url}${product.path}`]),
        );
        const products = new Set(places.map((url) => productUrlOfAlias.get(url) ?? url));
        assert.deepEqual([...products].sort(), shop.products.map((product) => `${shop.url}${product.path}`).sort());
    });
});
