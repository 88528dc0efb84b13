/**
 * The exit breakers of a fleet share their verdicts through the machine's real Redis (a key of the
 * test's own, removed after): three workers' breakers, each on its own connection.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { ExitBreaker } from '../../../src/fetch/egress/exitBreaker.js';
import { RedisExitVerdicts } from '../../../src/fetch/egress/redisExitVerdicts.js';
import { REDIS_URL } from '../../helpers/fleetWorld.js';

const EXIT = 'http://127.0.0.1:1';
const key = `dragnet-test:${randomUUID()}:exits`;
const connections: Redis[] = [];
const followers: RedisExitVerdicts[] = [];

after(async () => {
    await Promise.all(followers.map((verdicts) => verdicts.close()));
    await connections[0]?.del(key);
    for (const redis of connections) redis.disconnect();
});

/** A worker's breaker, following the fleet's verdicts on its own connection. */
async function workerBreaker(now?: () => number): Promise<ExitBreaker> {
    const redis = new Redis(REDIS_URL);
    connections.push(redis);
    const verdicts = new RedisExitVerdicts({ redis, key });
    followers.push(verdicts);
    const breaker = new ExitBreaker({ onVerdict: verdicts.publish, now });
    await verdicts.follow(breaker);
    return breaker;
}

/** Waits until `check` holds, or fails after a second. */
async function eventually(check: () => boolean, what: string): Promise<void> {
    for (const started = Date.now(); !check(); await new Promise((resolve) => setTimeout(resolve, 5)))
        if (Date.now() - started > 1000) assert.fail(`not within a second: ${what}`);
}

describe("a fleet's exit breakers", () => {
    it('rest an exit one worker found broken, let it back once a trial works, and tell a worker that joins', async () => {
        let finderClock = Date.now();
        const [finder, other] = [await workerBreaker(() => finderClock), await workerBreaker()];
        assert.ok(other.allows(EXIT));
        finder.faulted(EXIT);
        await eventually(() => !other.allows(EXIT), 'the other worker holds the exit out');
        assert.equal(other.counts(EXIT).opened, 0, "the opening is counted as the finder's, not the other's");

        const joiner = await workerBreaker();
        assert.equal(joiner.allows(EXIT), false, 'a worker that joins holds it out at once');

        // The time is up for all of them when it is for the finder: its trial works, and lets the exit back in everywhere.
        finderClock += 60_000;
        assert.ok(finder.allows(EXIT), "the finder's trial");
        finder.worked(EXIT);
        await eventually(() => other.allows(EXIT) && joiner.allows(EXIT), 'every worker lets it back in');
        assert.ok(other.allows(EXIT) && other.allows(EXIT), 'not as a trial: in rotation');
    });
});
