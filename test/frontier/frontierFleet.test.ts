/**
 * The frontier of the distributed mode: workers sharing one seen-set and one BullMQ queue in the
 * machine's real Redis (a key prefix of each test's own, removed after). A URL a worker found is
 * queued once for the fleet, and never marked seen without being queued, so a worker that dies
 * between the two loses nothing.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { Frontier } from '../../src/frontier/frontier.js';
import { urlKey } from '../../src/frontier/normalize.js';
import { JobQueue } from '../../src/frontier/redis/jobQueue.js';
import { queueCounts } from '../../src/frontier/redis/queueCounts.js';
import { RedisRequestBudget } from '../../src/frontier/redis/redisRequestBudget.js';
import { RedisBloomSeenSet } from '../../src/frontier/redisBloomSeenSet.js';
import { RedisSeenSet } from '../../src/frontier/redisSeenSet.js';
import type { SeenSet } from '../../src/frontier/seenSet.js';
import { createLogger } from '../../src/monitor/logger.js';
import { RunStats } from '../../src/monitor/stats.js';
import { defineSite } from '../../src/site/site.js';
import type { FrontierQueue } from '../../src/vocabulary/queue.js';
import { REDIS_URL } from '../helpers/fleetWorld.js';

const ORIGIN = 'http://127.0.0.1:9';
const site = defineSite({
    name: 'fleet-frontier-test',
    startUrls: [`${ORIGIN}/`],
    routes: { product: { match: /\/products\//, extract: () => ({}) } },
});
const products = (count: number) => Array.from({ length: count }, (_, i) => ({ url: `${ORIGIN}/products/${i}` }));

let prefix: string;
const connections: Redis[] = [];
const queues: JobQueue[] = [];

beforeEach(() => {
    prefix = `dragnet-test-${randomUUID().slice(0, 8)}`;
});

afterEach(async () => {
    for (const queue of queues.splice(0)) await queue.close();
    const redis = connections[0]!;
    for await (const keys of redis.scanStream({ match: `${prefix}:*`, count: 1000 }))
        if ((keys as string[]).length) await redis.unlink(...(keys as string[]));
    for (const connection of connections.splice(0)) connection.disconnect();
});

const seenSets = {
    exact: (redis: Redis) => RedisSeenSet.open(redis, { key: `${prefix}:seen`, expectedUrls: 10_000 }),
    bloom: (redis: Redis) => RedisBloomSeenSet.open(redis, { key: `${prefix}:seen`, expectedUrls: 10_000 }),
};

/** One worker's frontier: its own connection, the fleet's seen-set and queue. */
async function openWorker(
    openSeenSet: (redis: Redis) => Promise<SeenSet>,
    wrapQueue = (queue: FrontierQueue) => queue,
    maxRequests?: number,
) {
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    connections.push(redis);
    const queue = new JobQueue({ redis, prefix, name: 'shop-http' });
    queues.push(queue);
    const stats = new RunStats();
    const frontier = new Frontier({
        site,
        seenSet: await openSeenSet(redis),
        httpQueue: wrapQueue(queue),
        browserQueue: queue,
        stats,
        log: createLogger({ level: 'silent' }),
        budget: maxRequests === undefined ? undefined : new RedisRequestBudget(redis, `${prefix}:budget`, maxRequests),
    });
    return { frontier, stats, queue, redis };
}

/**
 * A worker's queue whose adds stop: for a worker killed before its add reaches Redis, one killed
 * right after it, or one held until `release()`, then added. `reached` settles when an add has
 * come to its stop.
 */
function stoppedAdds(stop: 'killed-before-add' | 'killed-after-add' | 'until-released') {
    let reach!: () => void;
    let release!: () => void;
    const reached = new Promise<void>((resolve) => (reach = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    const wrap = (queue: FrontierQueue): FrontierQueue =>
        Object.assign(Object.create(queue) as FrontierQueue, {
            addRequests: async (...args: Parameters<FrontierQueue['addRequests']>) => {
                if (stop === 'killed-after-add') await queue.addRequests(...args);
                reach();
                await released; // never, for a killed worker
                return queue.addRequests(...args);
            },
        });
    return { wrap, reached, release };
}

async function waiting(queue: JobQueue): Promise<number> {
    const { waiting: count } = await queueCounts(queue.queue);
    return count;
}

for (const [kind, openSeenSet] of Object.entries(seenSets)) {
    describe(`the fleet's frontier (${kind} seen-set)`, () => {
        it(`loses no link when a worker dies between finding it \
and queuing it: the page, taken back, queues it`, async () => {
            const killed = stoppedAdds('killed-before-add');
            const dying = await openWorker(openSeenSet, killed.wrap);
            void dying.frontier.enqueue(products(20));
            await killed.reached;

            const survivor = await openWorker(openSeenSet);
            assert.equal(await survivor.frontier.enqueue(products(20)), 20);
            assert.equal(await waiting(survivor.queue), 20);
        });

        it(`keeps a page's canonical claim when another worker \
takes the page back, and refuses it to other pages`, async () => {
            const [first, second] = await Promise.all([openWorker(openSeenSet), openWorker(openSeenSet)]);
            const claim = { key: urlKey(`${ORIGIN}/products/1`) };
            assert.deepEqual(
                await first.frontier.claimCanonical(`${ORIGIN}/products/1`, `${ORIGIN}/products/1?color=red`),
                claim,
            );
            assert.deepEqual(
                await second.frontier.claimCanonical(`${ORIGIN}/products/1`, `${ORIGIN}/products/1?color=red`),
                claim,
            );
            assert.equal(
                await second.frontier.claimCanonical(`${ORIGIN}/products/1`, `${ORIGIN}/products/1?color=blue`),
                'taken',
            );
            assert.equal(
                await second.frontier.enqueue([{ url: `${ORIGIN}/products/1` }]),
                0,
                'the claimed URL is not queued',
            );
            await second.frontier.enqueue([{ url: `${ORIGIN}/products/2` }]);
            assert.equal(
                await first.frontier.claimCanonical(`${ORIGIN}/products/2`, `${ORIGIN}/products/2?color=red`),
                'taken',
                'nor is a URL already queued claimed',
            );
        });

        it(`loses no link and queues none twice when a worker \
dies after queuing, before marking them seen`, async () => {
            const killed = stoppedAdds('killed-after-add');
            const dying = await openWorker(openSeenSet, killed.wrap);
            void dying.frontier.enqueue(products(20));
            await killed.reached;
            assert.equal(await waiting(dying.queue), 20);

            const survivor = await openWorker(openSeenSet);
            assert.equal(await survivor.frontier.enqueue(products(20)), 20);
            assert.equal(await waiting(survivor.queue), 20, 'the jobs the dead worker added are not added again');
        });

        it('lets the worker that marks a link first count it when two queue it at once', async () => {
            const held = stoppedAdds('until-released');
            const late = await openWorker(openSeenSet, held.wrap);
            const early = await openWorker(openSeenSet);
            const lateAnswer = late.frontier.enqueue(products(20));
            await held.reached; // it has looked the links up: unseen
            assert.equal(await early.frontier.enqueue(products(20)), 20);
            held.release();
            assert.equal(await lateAnswer, 0, 'its mark found them marked');
            assert.deepEqual([late.stats.admitted, late.stats.linksSkipped.seen], [0, 20]);
            assert.equal(await waiting(early.queue), 20, 'one job each');
        });

        it('queues a link two workers find at once once, and one of them counts it', async () => {
            const workers = await Promise.all([openWorker(openSeenSet), openWorker(openSeenSet)]);
            const links = products(300);
            const orders = [links, [...links].reverse()];
            await Promise.all(
                workers.map(async ({ frontier }, w) => {
                    for (let from = 0; from < links.length; from += 20)
                        await frontier.enqueue(orders[w]!.slice(from, from + 20));
                }),
            );
            assert.equal(await waiting(workers[0]!.queue), 300, 'each URL is one job');
            assert.equal(
                workers[0]!.stats.admitted + workers[1]!.stats.admitted,
                300,
                'each URL is admitted by one worker',
            );
            assert.equal(workers[0]!.stats.linksSkipped.seen + workers[1]!.stats.linksSkipped.seen, 300);
        });

        it("admits the fleet's budget in all, not each worker's, and gives back what another worker admitted", async () => {
            const workers = await Promise.all([0, 1, 2].map(() => openWorker(openSeenSet, undefined, 50)));
            const links = products(120);
            // Overlapping pages: each worker's batches share links with the others', so some are admitted elsewhere.
            await Promise.all(
                workers.map(async ({ frontier }, w) => {
                    for (let from = w * 10; from < links.length; from += 15)
                        await frontier.enqueue(links.slice(from, from + 25));
                }),
            );
            const admitted = workers.reduce((sum, { stats }) => sum + stats.admitted, 0);
            assert.equal(admitted, 50);
            assert.equal(await waiting(workers[0]!.queue), 50, 'one job per URL admitted');
            assert.equal(Number(await workers[0]!.redis.get(`${prefix}:budget`)), 50, 'the count is what was admitted');
            assert.ok(workers.every(({ frontier }) => frontier.budgetSpent));
            const overBudget = workers.reduce((sum, { stats }) => sum + stats.linksSkipped.overBudget, 0);
            assert.ok(overBudget > 0, 'the rest were counted over budget');
        });
    });
}
