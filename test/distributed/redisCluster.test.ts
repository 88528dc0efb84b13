/**
 * A fleet on a Redis Cluster: three workers given `--redis-cluster` and the URL of one node of a
 * local 3-primary cluster (test/helpers/redisCluster.ts) crawl the fixture shop as they would on one
 * Redis. Every key of the site carries its hash tag, so the site's scripts and transactions run on
 * the one node that serves its slot.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import type { CliResult } from '../helpers/cli.js';
import { assertEveryProductOnce, assertExited, chromiumPath, type Fleet, SHOP, startFleet } from '../helpers/fleet.js';
import { type RedisClusterWorld, startRedisCluster } from '../helpers/redisCluster.js';

describe('three workers on a Redis Cluster', { skip: chromiumPath ? false : 'no Chromium found' }, () => {
    let cluster: RedisClusterWorld;
    let fleet: Fleet;
    let results: CliResult[];

    before(async () => {
        cluster = await startRedisCluster(3);
        fleet = await startFleet(
            3,
            { ...SHOP, products: 300 },
            {
                env: { REDIS_URL: cluster.url, DRAGNET_REDIS_CLUSTER: '1' },
            },
        );
        results = await fleet.results();
    });
    after(async () => {
        await fleet?.close();
        await cluster?.close();
    });

    it('stores every product once, each worker having done part of the work', async () => {
        assertExited(results);
        await assertEveryProductOnce(fleet);
        const summaries = await fleet.summaries();
        assert.ok(
            summaries.filter((summary) => summary.items.stored > 0).length >= 2,
            `items per worker: ${summaries.map((summary) => summary.items.stored)}`,
        );
    });

    it("keeps the site's keys on the one node that serves its hash tag", async () => {
        const tag = `{${fleet.world.prefix}:demo-shop}`;
        const holding: number[] = [];
        for (const port of cluster.ports) {
            const node = new Redis({ port, host: '127.0.0.1' });
            try {
                let found = 0;
                let cursor = '0';
                do {
                    const [next, keys] = await node.scan(cursor, 'MATCH', `${tag}:*`, 'COUNT', 1000);
                    found += keys.length;
                    cursor = next;
                } while (cursor !== '0');
                if (found > 0) holding.push(port);
            } finally {
                node.disconnect();
            }
        }
        assert.equal(holding.length, 1, `nodes holding the site's keys: ${holding}`);
    });
});
