/**
 * The distributed mode end to end: three worker processes share one frontier in the machine's real
 * Redis and one sink in its real PostgreSQL, over the fixture shop; what they stored is read back
 * from PostgreSQL and held against the shop's ground truth and its own request counts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertEveryProductOnce, assertExited, chromiumPath, type Fleet, SHOP, startFleet } from '../helpers/fleet.js';
import { type CliResult, runScript } from '../helpers/cli.js';

describe('three workers on one frontier', { skip: chromiumPath ? false : 'no Chromium found' }, () => {
    let fleet: Fleet;
    let results: CliResult[];

    before(async () => {
        // Adaptive timeouts off: this file counts fetches exactly, and on a loaded machine a pause past
        // the shop's fast p99 times out a page the shop answered, and its retry is a second 200 (CI:
        // "retrying in 0.7 s: request timeout: no whole answer within 500 ms").
        // test/fetch/pacing/adaptiveTimeout.test.ts covers them.
        fleet = await startFleet(3, SHOP, { args: () => ['--adaptive-timeout', 'off'] });
        results = await fleet.results();
    });
    after(() => fleet?.close());

    it('all end when the shared frontier is empty, each having done part of the work', async () => {
        assertExited(results);
        const summaries = await fleet.summaries();
        assert.equal(
            summaries.reduce((sum, summary) => sum + summary.items.stored, 0),
            SHOP.products,
        );
        assert.ok(
            summaries.filter((summary) => summary.items.stored > 0).length >= 2,
            `items per worker: ${summaries.map((s) => s.items.stored)}`,
        );
    });

    it('stores the union of their output: exactly the product set, each product once', () =>
        assertEveryProductOnce(fleet));

    it('fetches no product twice, except a retry of a transient failure and the browser render', () => {
        const { byPath } = fleet.shop.stats();
        for (const product of fleet.shop.products) {
            const counts = byPath[product.path] ?? {};
            const total = Object.values(counts).reduce((sum, n) => sum + n, 0);
            assert.equal(
                total,
                1 + (product.scriptOnly ? 1 : 0) + (product.transientFailure ? 1 : 0),
                `${product.path}: ${JSON.stringify(counts)}`,
            );
            assert.equal(counts['200'], 1 + (product.scriptOnly ? 1 : 0), `${product.path} answered 200`);
        }
    });

    it("re-parses the fleet's archive from the shared directory, and exports the results", async () => {
        const shared = ['--site', 'demo-shop', '--database-url', fleet.world.databaseUrl];
        const reparse = await runScript('src/commands/reparse.ts', [...shared, '--archive-dir', fleet.archiveDir]);
        assert.equal(reparse.code, 0, reparse.stderr);
        assert.match(reparse.stdout, new RegExp(`items +${SHOP.products} → ${SHOP.products}\\n`));
        assert.match(reparse.stdout, /changed +nothing/);
        const exported = await runScript('src/commands/export.ts', [...shared, '--format', 'jsonl']);
        assert.equal(exported.code, 0, exported.stderr);
        assert.equal(exported.stdout.trim().split('\n').length, SHOP.products);
    });

    it('leaves no job and no worker behind in Redis', async () => {
        const { redis, prefix } = fleet.world;
        const tag = `{${prefix}:demo-shop}`;
        assert.equal(await redis.zcard(`${tag}:demo-shop-http:prioritized`), 0);
        assert.equal(await redis.llen(`${tag}:demo-shop-http:active`), 0);
        assert.deepEqual(await redis.hkeys(`${tag}:workers`), []);
    });
});
