// SitePoliteness over its real stores: rate-limiter-flexible in memory, and the real Redis on
// 127.0.0.1:6379, where each test writes under its own key prefix and deletes it afterwards.
// Times are measured as the callers see them; intervals are small (50-150 ms) to keep it fast.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import {
    PolitenessClosedError,
    SitePoliteness,
    type SitePolitenessOptions,
} from '../../../src/fetch/pacing/politeness.js';
import { deleteKeysUnder } from '../../../src/frontier/redisSeenSet.js';

const PAGE = new URL('http://127.0.0.1:9/products/1');
/** Timers fire on whole ms and the clock reads whole ms: a gap may read up to this much short. */
const TOLERANCE_MS = 2;
/**
 * "Not absurdly slow": waiting twice the spacing would take
 * 2x; a loaded machine's late timers stay well under 1.6x.
 */
const SLOW = 1.6;

const admin = new Redis({ host: '127.0.0.1', port: 6379, lazyConnect: true });
after(() => admin.quit());

/** A politeness closed when the test ends. */
function politeness(t: TestContext, options: SitePolitenessOptions = {}): SitePoliteness {
    const site = new SitePoliteness(options);
    t.after(() => site.close());
    return site;
}

/** A worker's own Redis connection and a key prefix unique to the test, all cleaned up after it. */
function redisStore(t: TestContext, keyPrefix = `dragnet-test-${randomUUID()}`): { redis: Redis; keyPrefix: string } {
    const redis = new Redis({ host: '127.0.0.1', port: 6379, lazyConnect: true });
    t.after(async () => {
        await deleteKeysUnder(admin, keyPrefix);
        await redis.quit();
    });
    return { redis, keyPrefix };
}

/**
 * `callers` concurrent loops acquiring from `sites` in turn until `total` acquires were granted; the
 * times they were. The first is one acquire alone, free at once, timed when it was asked: its turn
 * was given no earlier, and a stall before its caller runs again cannot read as a short first gap.
 */
async function grantTimes(sites: SitePoliteness[], total: number, callers: number): Promise<number[]> {
    const times = [performance.now()];
    await sites[0]!.acquire(PAGE);
    let asked = 1;
    await Promise.all(
        Array.from({ length: callers }, async (_, caller) => {
            while (asked < total) {
                asked += 1;
                await sites[caller % sites.length]!.acquire(PAGE);
                times.push(performance.now());
            }
        }),
    );
    return times.sort((a, b) => a - b);
}

/** Settles after the event loop went round once: anything waiting on a timer or a socket comes later. */
const nextTurnOfTheLoop = () => new Promise<string>((resolve) => setImmediate(() => resolve('a turn of the loop')));
const gapsOf = (times: number[]) => times.slice(1).map((time, i) => time - times[i]!);
const round = (values: number[]) => values.map((value) => Math.round(value));

/**
 * Every gap is at least `spacingMs`, give or take the timer precision, and the function returns how
 * many gaps read short only because grants were seen late. A turn is seen when the caller runs
 * again, which on a loaded machine (through Redis: when the reply arrives) can be some ms after it
 * was given; a stall of the process delays the few turns seen during it. Then the gaps before read
 * long by as much as the ones after read short: counted from a grant before the stall (up to three
 * back), the turns still span a spacing each. Turns given early would not. (Timed on both sides of
 * each Redis call, the server's own gaps never came under 50.6 ms of a 50 ms spacing.)
 */
function assertSpaced(times: number[], spacingMs: number): number {
    const gaps = gapsOf(times);
    let seenLate = 0;
    gaps.forEach((gap, i) => {
        if (gap >= spacingMs - TOLERANCE_MS) return;
        const back = [1, 2, 3].filter((j) => i - j >= 0);
        const spans = back.some((j) => times[i + 1]! - times[i - j]! >= (j + 1) * spacingMs - TOLERANCE_MS);
        assert.ok(spans, `gap ${i} is ${gap.toFixed(1)} ms of ${spacingMs}: gaps ${round(gaps)}`);
        seenLate += 1;
    });
    return seenLate;
}

describe('SitePoliteness', { timeout: 30_000 }, () => {
    it(`spaces 20 acquires from 5 concurrent callers at least \
1 / maxRate apart, and no slower than needed`, async (t) => {
        const site = politeness(t, { maxRate: 20, jitter: 0 });
        const times = await grantTimes([site], 20, 5);
        const gaps = gapsOf(times);
        const seenLate = assertSpaced(times, 50);
        const total = times.at(-1)! - times[0]!;
        assert.ok(total < SLOW * 19 * 50, `20 acquires took ${Math.round(total)} ms`);
        t.diagnostic(
            `memory, 50 ms: min gap ${Math.min(...gaps).toFixed(1)} ms, ` +
                `max ${Math.max(...gaps).toFixed(1)} ms, total ${Math.round(total)} ms, seen late ${seenLate}`,
        );
        const report = site.report();
        assert.equal(report.acquired, 20);
        assert.ok(report.spaced >= 18 && report.waitedMs > 0, JSON.stringify(report));
    });

    it(`keeps the spacing of two workers on two Redis connections \
sharing one key: the rate of one, not twice it`, async (t) => {
        const { keyPrefix } = redisStore(t);
        const workers = [0, 1].map(() => politeness(t, { maxRate: 20, jitter: 0, store: redisStore(t, keyPrefix) }));
        // Connected and the script loaded first: the first turn seen is then as punctual as the others.
        for (const worker of workers) await worker.acquire(PAGE);
        await sleep(60);
        const times = await grantTimes(workers, 20, 6);
        const gaps = gapsOf(times);
        const seenLate = assertSpaced(times, 50);
        const total = times.at(-1)! - times[0]!;
        assert.ok(total < SLOW * 19 * 50, `20 acquires took ${Math.round(total)} ms`);
        const split = workers.map((worker) => worker.report().acquired - 1);
        assert.ok(
            split.every((turns) => turns >= 3),
            `turns per worker ${split}`,
        );
        t.diagnostic(
            `redis, two workers (${split}), 50 ms: min gap ${Math.min(...gaps).toFixed(1)} ms, ` +
                `max ${Math.max(...gaps).toFixed(1)} ms, total ${Math.round(total)} ms, seen late ${seenLate}`,
        );
        assert.deepEqual(await admin.keys(`${keyPrefix}*`), [`${keyPrefix}:politeness`], 'one key for the site');
    });

    it(`spaces by the robots.txt Crawl-delay, capped at \
maxCrawlDelaySecs, the larger of it and the rate's`, async (t) => {
        const delayed = politeness(t, { crawlDelaySecs: () => 0.1, jitter: 0 });
        assert.equal(delayed.spacingMs(PAGE), 100);
        const times = await grantTimes([delayed], 5, 3);
        assertSpaced(times, 100);
        assert.ok(times.at(-1)! - times[0]! < SLOW * 4 * 100, `gaps ${round(gapsOf(times))}`);
        const capped = politeness(t, { crawlDelaySecs: () => 30, maxCrawlDelaySecs: 0.06, jitter: 0 });
        assert.equal(capped.spacingMs(PAGE), 60);
        const cappedTimes = await grantTimes([capped], 5, 3);
        assertSpaced(cappedTimes, 60);
        assert.ok(
            cappedTimes.at(-1)! - cappedTimes[0]! < SLOW * 4 * 60,
            `gaps ${round(gapsOf(cappedTimes))}, not 30 s`,
        );
        assert.equal(
            politeness(t, { maxRate: 5, crawlDelaySecs: () => 0.1 }).spacingMs(PAGE),
            200,
            'the rate is the larger',
        );
        assert.equal(politeness(t, { crawlDelaySecs: () => undefined }).spacingMs(PAGE), 0, 'no Crawl-delay: none');
    });

    it('ignores the Crawl-delay with crawlDelay: false', async (t) => {
        const site = politeness(t, { crawlDelay: false, crawlDelaySecs: () => 5 });
        assert.equal(site.spacingMs(PAGE), 0);
        const first = await Promise.race([grantTimes([site], 10, 10).then(() => 'acquired'), nextTurnOfTheLoop()]);
        assert.equal(first, 'acquired', 'ten acquires at once');
    });

    it('resolves at once with no limit: no timer, no store round-trip', async (t) => {
        const memory = politeness(t);
        const shared = politeness(t, { store: redisStore(t) });
        await shared.acquire(PAGE); // its first acquire asks Redis whether another worker cooled the site
        for (const site of [memory, shared]) {
            const first = await Promise.race([site.acquire(PAGE).then(() => 'acquired'), nextTurnOfTheLoop()]);
            assert.equal(first, 'acquired');
        }
        const started = performance.now();
        for (let i = 0; i < 10_000; i += 1) await memory.acquire(PAGE);
        t.diagnostic(`10,000 unlimited acquires: ${(performance.now() - started).toFixed(1)} ms`);
        assert.deepEqual(memory.report(), { acquired: 10_001, spaced: 0, waitedMs: 0, coolings: 0, cooledMs: 0 });
    });

    it(`spreads the gaps with jitter: each between the spacing \
and spacing × (1 + jitter), not all equal`, async (t) => {
        const site = politeness(t, { maxRate: 20, jitter: 0.5 });
        const times = await grantTimes([site], 16, 4);
        const gaps = gapsOf(times);
        assertSpaced(times, 50);
        const median = [...gaps].sort((a, b) => a - b)[Math.floor(gaps.length / 2)]!;
        assert.ok(median <= 75, `gaps ${round(gaps)}: most within spacing × 1.5`);
        assert.ok(Math.max(...gaps) - Math.min(...gaps) > 5, `gaps ${round(gaps)} are spread`);
        t.diagnostic(`jitter 0.5 over 50 ms: gaps ${round(gaps)}`);
    });

    it(`cools the whole site in memory: every caller waits, a \
shorter cooling does not cut a longer one short`, async (t) => {
        const site = politeness(t, { maxRate: 50, jitter: 0 });
        await site.acquire(PAGE);
        const cooledAt = performance.now();
        await site.cool(150, 'retry-after');
        await site.cool(50, 'retry-after');
        const waits = await Promise.all(
            [1, 2, 3, 4].map(() => site.acquire(PAGE).then(() => performance.now() - cooledAt)),
        );
        assert.ok(Math.min(...waits) >= 150 - TOLERANCE_MS, `waited ${round(waits)} ms`);
        assert.ok(
            Math.max(...waits) - Math.min(...waits) >= 3 * 20 - TOLERANCE_MS,
            `waited ${round(waits)} ms: spaced again after it`,
        );
        const { coolings, cooledMs } = site.report();
        assert.equal(coolings, 1);
        assert.ok(Math.abs(cooledMs - 150) <= 1, `cooled ${cooledMs} ms`);
        const unlimited = politeness(t);
        await unlimited.cool(100, 'retry-after');
        const started = performance.now();
        await Promise.all([1, 2, 3].map(() => unlimited.acquire(PAGE)));
        assert.ok(performance.now() - started >= 100 - TOLERANCE_MS, 'a site with no limit cools too');
    });

    it(`cools every worker through Redis: one worker's cool(ms) \
holds the other's callers, limited or not`, async (t) => {
        const { keyPrefix } = redisStore(t);
        const [cooling, other] = [0, 1].map(() =>
            politeness(t, { maxRate: 20, jitter: 0, store: redisStore(t, keyPrefix) }),
        );
        const unlimited = politeness(t, { coolCheckSecs: 0.05, store: redisStore(t, keyPrefix) });
        await Promise.all([cooling!.acquire(PAGE), unlimited.acquire(PAGE)]);
        await sleep(60); // the spacing key is gone, and so is the unlimited one's last look at the store
        const cooledAt = performance.now();
        await cooling!.cool(700, 'retry-after'); // Redis holds whole seconds: a cooling of 700 ms lasts 1 s
        const waits = await Promise.all(
            [cooling!, other!, other!, unlimited].map(async (site) => {
                await site.acquire(PAGE);
                return performance.now() - cooledAt;
            }),
        );
        assert.ok(Math.min(...waits) >= 1000 - TOLERANCE_MS, `waited ${round(waits)} ms`);
        assert.ok(Math.max(...waits) < 1000 + 600, `waited ${round(waits)} ms`);
        t.diagnostic(`redis cool(700): callers of three workers waited ${round(waits)} ms`);
        assert.deepEqual(cooling!.report().coolings, 1);
    });

    it(`close() rejects the waiting acquires at once, and \
later ones; an aborted acquire leaves the queue`, async (t) => {
        for (const store of ['memory' as const, redisStore(t)]) {
            const site = politeness(t, { maxRate: 1, store });
            await site.acquire(PAGE);
            const controller = new AbortController();
            const aborted = site.acquire(PAGE, controller.signal);
            const waiting = [1, 2, 3].map(() => site.acquire(PAGE));
            controller.abort();
            await assert.rejects(aborted, PolitenessClosedError);
            await sleep(20);
            const started = performance.now();
            site.close();
            const outcomes = await Promise.allSettled(waiting);
            assert.ok(performance.now() - started < 50, 'released promptly');
            assert.ok(
                outcomes.every(
                    (outcome) => outcome.status === 'rejected' && outcome.reason instanceof PolitenessClosedError,
                ),
            );
            await assert.rejects(site.acquire(PAGE), PolitenessClosedError);
        }
    });

    it(`cools this worker even when the store cannot be written, \
without rejecting (callers leave cool() unawaited)`, async (t) => {
        const unreachable = new Redis({
            host: '127.0.0.1',
            port: 1,
            lazyConnect: true,
            maxRetriesPerRequest: 0,
            retryStrategy: () => null,
        });
        unreachable.on('error', () => {});
        t.after(() => unreachable.disconnect());
        const site = politeness(t, { store: { redis: unreachable, keyPrefix: 'dragnet-test-unreachable' } });
        const cooledAt = performance.now();
        await site.cool(1000, 'retry-after');
        const held = site.acquire(PAGE);
        const first = await Promise.race([
            held.then(
                () => 'acquired',
                () => 'refused',
            ),
            sleep(300).then(() => 'held'),
        ]);
        assert.equal(first, 'held');
        assert.equal(site.report().coolings, 1);
        site.close();
        await assert.rejects(held, PolitenessClosedError);
        assert.ok(performance.now() - cooledAt < 1000);
    });

    it('refuses options that make no sense', () => {
        assert.throws(() => new SitePoliteness({ maxRate: 0 }), RangeError);
        assert.throws(() => new SitePoliteness({ jitter: 2 }), RangeError);
        assert.throws(() => new SitePoliteness({ maxCrawlDelaySecs: -1 }), RangeError);
    });
});
