/**
 * The exit breakers of a fleet share their verdicts through the machine's real Redis (a key of the
 * test's own, removed after): three workers' breakers, each on its own connection, on one clock the
 * test moves.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { EXIT_BREAKER_DEFAULTS, ExitBreaker } from '../../../src/fetch/egress/exitBreaker.js';
import { RedisExitVerdicts } from '../../../src/fetch/egress/redisExitVerdicts.js';
import { REDIS_URL } from '../../helpers/fleetWorld.js';

const EXIT = 'http://127.0.0.1:1';
const key = `dragnet-test:${randomUUID()}:exits`;
const connections: Redis[] = [];
const followers: RedisExitVerdicts[] = [];
let clock = Date.now();

after(async () => {
    await Promise.all(followers.map((verdicts) => verdicts.close()));
    await connections[0]?.del(key);
    for (const redis of connections) redis.disconnect();
});

/** A worker's breaker, following the fleet's verdicts on its own connection. */
async function workerBreaker(): Promise<ExitBreaker> {
    const redis = new Redis(REDIS_URL);
    connections.push(redis);
    const verdicts = new RedisExitVerdicts({ redis, key });
    followers.push(verdicts);
    const breaker = new ExitBreaker({ onVerdict: verdicts.publish, now: () => clock });
    await verdicts.follow(breaker);
    return breaker;
}

/** Waits until `check` holds, or fails after a second. */
async function eventually(check: () => boolean, what: string): Promise<void> {
    for (const started = Date.now(); !check(); await new Promise((resolve) => setTimeout(resolve, 5)))
        if (Date.now() - started > 1000) assert.fail(`not within a second: ${what}`);
}

/** How many requests `breaker` lets out by the exit if asked `times` times in a row, none reporting back. */
const letOut = (breaker: ExitBreaker, times = 5) =>
    Array.from({ length: times }, () => breaker.allows(EXIT)).filter(Boolean).length;

describe("a fleet's exit breakers", () => {
    it(`rest an exit one worker found broken in every worker, a worker that joins too; \
once its time is up each sends it one trial, and the first that works lets it back in everywhere`, async () => {
        const [finder, other] = [await workerBreaker(), await workerBreaker()];
        assert.ok(other.allows(EXIT));
        finder.faulted(EXIT);
        await eventually(() => !other.allows(EXIT), 'the other worker holds the exit out');
        assert.equal(other.counts(EXIT).opened, 0, "the opening is counted as the finder's, not the other's");
        const joiner = await workerBreaker();
        assert.equal(letOut(joiner), 0, 'a worker that joins holds it out at once');
        assert.equal(letOut(other), 0);

        clock += EXIT_BREAKER_DEFAULTS.openSecs * 1000;
        assert.deepEqual([letOut(other), letOut(joiner)], [1, 1], 'one trial each once its time is up, no more');
        other.faulted(EXIT); // its trial failed: out again, for longer, everywhere
        await eventually(() => finder.counts(EXIT).open, 'the failed trial holds it out again, in the finder too');
        assert.equal(letOut(finder), 0);

        clock += 2 * EXIT_BREAKER_DEFAULTS.openSecs * 1000;
        assert.equal(letOut(finder), 1, "the finder's trial");
        finder.worked(EXIT);
        await eventually(() => letOut(other) === 5 && letOut(joiner) === 5, 'every worker lets it back in');
    });
});
