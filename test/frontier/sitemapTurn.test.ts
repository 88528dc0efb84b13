/**
 * The sitemaps' turn of a fleet (src/frontier/redis/sitemapTurn.ts) in the machine's real Redis (a
 * key of the test's own, removed after): three workers, each on its own connection.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { RedisSitemapTurn } from '../../src/frontier/redis/sitemapTurn.js';
import { REDIS_URL } from '../helpers/fleetWorld.js';

const connections: Redis[] = [];
after(async () => {
    for (const redis of connections) redis.disconnect();
});

/** A worker's turn on `key`, with a lease short enough for the test to see it run out. */
function workerTurn(key: string, holder: string): { turn: RedisSitemapTurn; redis: Redis } {
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    redis.on('error', () => {});
    connections.push(redis);
    return { turn: new RedisSitemapTurn({ redis, key, holder, leaseMillis: 600 }), redis };
}

const settled = <T>(promise: Promise<T>) =>
    Promise.race([promise, new Promise<'pending'>((resolve) => setTimeout(() => resolve('pending'), 300))]);

describe("a fleet's turn to read the sitemaps", () => {
    it("is one worker's at a time; once read, nobody else reads them", async (t) => {
        const key = `dragnet-test:${randomUUID()}:sitemaps`;
        t.after(() => connections[0]?.del(key));
        const [first, second, late] = ['a', 'b', 'c'].map((holder) => workerTurn(key, holder).turn) as [
            RedisSitemapTurn,
            RedisSitemapTurn,
            RedisSitemapTurn,
        ];
        const never = new AbortController().signal;
        assert.equal(await first.take(never), true);
        const waiting = second.take(never);
        await new Promise((resolve) => setTimeout(resolve, 1000)); // past the lease: the renewal holds it
        assert.equal(await settled(waiting), 'pending', 'the second waits while the first reads');
        await first.done();
        await first.release();
        assert.equal(await waiting, false);
        assert.equal(await late.take(never), false, 'a worker that joins later does not read them either');
    });

    it('goes to another worker when its reader dies or lets go before it is done', async (t) => {
        const key = `dragnet-test:${randomUUID()}:sitemaps`;
        t.after(() => connections[0]?.del(key));
        const dying = workerTurn(key, 'a');
        const other = workerTurn(key, 'b').turn;
        const never = new AbortController().signal;
        assert.equal(await dying.turn.take(never), true);
        const waiting = other.take(never);
        dying.redis.disconnect(); // no more renewals: the lease runs out
        assert.equal(await waiting, true, 'taken over once the lease ran out');
        await other.release();
        const third = workerTurn(key, 'c').turn;
        assert.equal(await third.take(never), true, 'let go before it was done: the next one takes it');
        await third.release();
    });
});
