/**
 * The adaptive concurrency of a fleet shares its limits through the machine's real Redis (a key of
 * the test's own, removed after): each worker's controller on its own connection, on one clock the
 * test moves.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { ConcurrencyController } from '../../../src/fetch/pacing/concurrencyController.js';
import type { Outcome } from '../../../src/fetch/pacing/domainState.js';
import { RedisFleetLimits } from '../../../src/fetch/pacing/redisFleetLimits.js';
import { REDIS_URL } from '../../helpers/fleetWorld.js';

const SITE = 'http://shop.test/page';
const DOMAIN = 'shop.test';
const connections: Redis[] = [];
const fleets: RedisFleetLimits[] = [];
const keys: string[] = [];
const clock = { now: 1_000_000 };

after(async () => {
    for (const limits of fleets) limits.close();
    if (keys.length > 0) await connections[0]?.del(...keys);
    for (const redis of connections) redis.disconnect();
});

/** A worker's controller, its limits the fleet's under `key`, on a connection of its own. */
async function worker(key: string, maxConcurrency = 20) {
    const redis = new Redis(REDIS_URL);
    connections.push(redis);
    // Read back only when the test says so: what a worker learns at once is its own proposal's answer.
    const fleet = await RedisFleetLimits.open({ redis, key, syncMillis: 3_600_000 });
    fleets.push(fleet);
    const controller = new ConcurrencyController({ maxConcurrency, now: () => clock.now }, fleet);
    return { controller, fleet, redis };
}

function fleetKey(): string {
    const key = `dragnet-test:${randomUUID()}:concurrency`;
    keys.push(key);
    return key;
}

/** `outcomes.length` fetches in flight at once, then finishing in order with those outcomes. */
function burst(controller: ConcurrencyController, outcomes: Outcome[]): void {
    const requests = outcomes.map(() => ({}));
    for (const request of requests) controller.started(request, SITE);
    for (const [index, outcome] of outcomes.entries()) controller.finished(requests[index]!, outcome);
}

const refusals = (count: number): Outcome[] => Array<Outcome>(count).fill('transient');
const oks = (count: number): Outcome[] => Array<Outcome>(count).fill('ok');

/** Waits until `check` holds, or fails after a second. */
async function eventually(check: () => boolean, what: string): Promise<void> {
    for (const started = Date.now(); !check(); await new Promise((resolve) => setTimeout(resolve, 5)))
        if (Date.now() - started > 1000) assert.fail(`not within a second: ${what}`);
}

describe("a fleet's adaptive concurrency", () => {
    it(`holds one limit per domain: a cut one worker decides slows the \
others at their next read, and a worker that joins starts there, not at the maximum`, async () => {
        const key = fleetKey();
        const [finder, other] = [await worker(key), await worker(key)];
        burst(other.controller, oks(5)); // the other has fetched from the site: it has a limit to move
        burst(finder.controller, refusals(4));
        assert.equal(finder.controller.limit(DOMAIN), 15);
        await eventually(() => finder.fleet.known(DOMAIN) === 15, "the finder's cut reaches Redis");
        assert.equal(other.controller.limit(DOMAIN), 20, 'not before it reads');

        await other.fleet.sync();
        assert.equal(other.controller.limit(DOMAIN), 15);
        assert.equal(other.controller.poolLimit(), 15, "the other's pool shrinks with it");
        const joiner = await worker(key);
        assert.equal(joiner.controller.limit(DOMAIN), 15, 'a worker that joins starts at the fleet limit');
        burst(joiner.controller, oks(5));
        assert.equal(joiner.controller.limit(DOMAIN), 15);
    });

    it(`lets a cut win over a raise judged under the limit before it, \
and the lowest of two cuts win`, async () => {
        const key = fleetKey();
        const [a, b, c] = [await worker(key), await worker(key), await worker(key)];
        // Each worker has the domain at 20; a raise is judged under 19, so first all come down to 19...
        for (const { controller } of [a, b, c]) burst(controller, oks(1));
        await a.redis.hset(key, DOMAIN, '19:1');
        for (const { fleet } of [a, b, c]) await fleet.sync();
        assert.deepEqual(
            [a, b, c].map(({ controller }) => controller.limit(DOMAIN)),
            [19, 19, 19],
        );

        // ...then b cuts to 14 (19 × 0.75), and a raises to 20 from the 19 it still holds.
        burst(b.controller, refusals(4));
        await eventually(() => b.fleet.known(DOMAIN) === 14, "b's cut lands");
        clock.now += 1000;
        burst(a.controller, oks(20));
        await eventually(() => a.controller.limit(DOMAIN) === 14, 'a takes on the cut instead of its raise');
        assert.equal(await a.redis.hget(key, DOMAIN), '14:2', 'the raise changed nothing');

        // c, still at 19, cuts to 14 too: the fleet stays at the lowest.
        burst(c.controller, refusals(4));
        await eventually(() => c.fleet.known(DOMAIN) === 14, "c hears the fleet's limit");
        assert.equal((await a.redis.hget(key, DOMAIN))?.split(':')[0], '14');
    });

    it("keeps each worker within its own maximum, whatever the fleet's limit", async () => {
        const key = fleetKey();
        const small = await worker(key, 5);
        const big = await worker(key, 40);
        burst(big.controller, oks(1));
        await big.redis.hset(key, DOMAIN, '30:1');
        await big.fleet.sync();
        assert.equal(big.controller.limit(DOMAIN), 30);
        await small.fleet.sync();
        burst(small.controller, oks(1));
        assert.equal(small.controller.limit(DOMAIN), 5);
    });
});
