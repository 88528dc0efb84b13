/**
 * The Redis frontier of the distributed mode measured on its own, without a crawl: how fast one
 * process moves requests through a stage's BullMQ queue (src/frontier/redis/jobQueue.ts) and the
 * seen-set, and what a waiting request costs in Redis memory. Each measurement works under a fresh
 * key prefix and deletes its keys afterwards, whatever happened.
 *
 * The requests are what the demo shop's product links become in the frontier (frontier.ts:
 * `{ url, uniqueKey: url, label, userData }`), with product URLs of about 60 characters, so a job
 * holds exactly what JobQueue.addRequests stores for a real page.
 */
import { randomUUID } from 'node:crypto';
import { getRequestId, type RequestOptions } from '@crawlee/core';
import type { Redis } from 'ioredis';
import { JobQueue } from '../../src/frontier/redis/jobQueue.js';
import { RedisBloomSeenSet } from '../../src/frontier/redisBloomSeenSet.js';
import { deleteKeysUnder, RedisSeenSet } from '../../src/frontier/redisSeenSet.js';
import { serviceCpu, type ServiceCpu } from './serviceCpu.js';
import { round } from './stats.js';

/** The HTTP stage's queue of the demo shop, as a worker names it (`<site>-http`). */
const QUEUE_NAME = 'demo-shop-http';

/** The `i`-th product request: a ~60-character URL, the route's label, a small userData. */
export function productRequest(i: number): RequestOptions {
    const url = `https://www.example-shop.com/products/steel-kettle-${String(i).padStart(8, '0')}`;
    return { url, uniqueKey: url, label: 'product', userData: { category: 'kitchen' } };
}

export function productRequests(from: number, count: number): RequestOptions[] {
    return Array.from({ length: count }, (_, i) => productRequest(from + i));
}

/** CPU used by Redis and by this process over a phase, as shares of one core. */
interface PhaseCpu {
    redisCoreShare: number;
    benchCoreShare: number;
}

async function phase<T>(work: () => Promise<T>): Promise<{ value: T; seconds: number; cpu: PhaseCpu }> {
    const before: ServiceCpu = await serviceCpu();
    const ownBefore = process.cpuUsage();
    const started = performance.now();
    const value = await work();
    const seconds = (performance.now() - started) / 1000;
    const own = process.cpuUsage(ownBefore);
    const after = await serviceCpu();
    return {
        value,
        seconds,
        cpu: {
            redisCoreShare: round((after.redisSec - before.redisSec) / seconds, 2),
            benchCoreShare: round((own.user + own.system) / 1e6 / seconds, 2),
        },
    };
}

export interface FrontierOps {
    requests: number;
    /** addRequests of batches of `batch`, one awaited at a time (one worker's enqueue). */
    addsPerSec: number;
    addCpu: PhaseCpu;
    /** fetchNextRequest + markRequestHandled until Redis holds no job of the queue (completion included). */
    takeCompletePerSec: number;
    takeCompleteCpu: PhaseCpu;
    /** Seen-set add() of the same URLs, batches of `batch`, one awaited at a time. */
    seenAddsPerSec: { exact: number; bloom: number };
}

export async function measureFrontierOps(
    redis: Redis,
    { requests, batch, prefetch }: { requests: number; batch: number; prefetch: number },
): Promise<FrontierOps> {
    const prefix = `dragnet-bench-${randomUUID().slice(0, 8)}`;
    const queue = new JobQueue({ redis, prefix, name: QUEUE_NAME, prefetch });
    try {
        const adds = await phase(async () => {
            for (let from = 0; from < requests; from += batch)
                await queue.addRequests(productRequests(from, Math.min(batch, requests - from)));
        });
        const counted = await queue.counts();
        if (counted.waiting !== requests) throw new Error(`${counted.waiting} jobs waiting after adding ${requests}`);

        const takes = await phase(async () => {
            queue.start();
            for (let handled = 0; handled < requests; ) {
                const request = await queue.fetchNextRequest();
                // Nothing taken ahead yet: BullMQ's worker is still fetching; let it run.
                if (!request) {
                    await new Promise((resolve) => setImmediate(resolve));
                    continue;
                }
                await queue.markRequestHandled(request);
                handled += 1;
            }
            // markRequestHandled settles the job's processor; BullMQ completes it in Redis after.
            for (;;) {
                const { waiting, active, delayed } = await queue.counts();
                if (waiting + active + delayed === 0) return;
                await new Promise((resolve) => setTimeout(resolve, 2));
            }
        });

        const seenAdds = async (kind: 'exact' | 'bloom') => {
            const key = `${prefix}:seen-${kind}`;
            const set =
                kind === 'exact'
                    ? await RedisSeenSet.open(redis, { key, expectedUrls: requests })
                    : await RedisBloomSeenSet.open(redis, { key, expectedUrls: requests });
            const { seconds } = await phase(async () => {
                for (let from = 0; from < requests; from += batch)
                    await set.add(
                        productRequests(from, Math.min(batch, requests - from)).map((request) => request.url),
                    );
            });
            return Math.round(requests / seconds);
        };
        return {
            requests,
            addsPerSec: Math.round(requests / adds.seconds),
            addCpu: adds.cpu,
            takeCompletePerSec: Math.round(requests / takes.seconds),
            takeCompleteCpu: takes.cpu,
            seenAddsPerSec: { exact: await seenAdds('exact'), bloom: await seenAdds('bloom') },
        };
    } finally {
        await queue.close();
        await deleteKeysUnder(redis, prefix);
    }
}

export interface QueueMemory {
    jobs: number;
    /** `used_memory` after the fill minus before: the allocator's view (keyspace growth and fragmentation included). */
    usedMemoryDelta: number;
    bytesPerJob: number;
    /** MEMORY USAGE (SAMPLES 0) of `sampled` job hashes, their mean, and their encoding. */
    sampled: number;
    jobHashBytes: number;
    jobHashEncoding: string;
    /** The job hash's fields and their lengths in bytes, for one sampled job. */
    jobHashFields: Record<string, number>;
    /** MEMORY USAGE of the queue's other keys (the prioritized zset, meta, events stream, id counter, …). */
    queueKeysBytes: Record<string, number>;
    /** (mean job hash × jobs + the queue's other keys) / jobs: what the keys themselves say. */
    bytesPerJobByKeys: number;
    /** `hash-max-listpack-value` of this Redis: a hash with a longer field value is a hashtable. */
    hashMaxListpackValue: number;
    fillPerSec: number;
}

/** The queue's keys beside the job hashes that may exist (BullMQ 5/6 key names). */
const QUEUE_KEYS = [
    'prioritized',
    'wait',
    'meta',
    'events',
    'id',
    'pc',
    'marker',
    'stalled-check',
    'active',
    'delayed',
];

/**
 * Fills a fresh queue with `jobs` waiting requests (batches of 1,000, 4 in flight: what is
 * stored per job does not depend on the batch), measures, and deletes it.
 */
export async function measureQueueMemory(
    redis: Redis,
    { jobs, sampled }: { jobs: number; sampled: number },
): Promise<QueueMemory> {
    const prefix = `dragnet-bench-${randomUUID().slice(0, 8)}`;
    const queue = new JobQueue({ redis, prefix, name: QUEUE_NAME });
    const FILL_BATCH = 1_000;
    try {
        await lazyFreeDone(redis);
        const before = await memoryInfo(redis, 'used_memory');
        const started = performance.now();
        let next = 0;
        const fill = async () => {
            while (next < jobs) {
                const from = next;
                next = Math.min(jobs, next + FILL_BATCH);
                await queue.addRequests(productRequests(from, next - from));
            }
        };
        await Promise.all(Array.from({ length: 4 }, fill));
        const fillSec = (performance.now() - started) / 1000;
        const usedMemoryDelta = (await memoryInfo(redis, 'used_memory')) - before;
        const { waiting } = await queue.counts();
        if (waiting !== jobs) throw new Error(`${waiting} jobs waiting after adding ${jobs}`);

        const jobKey = (i: number) => `${prefix}:${QUEUE_NAME}:${getRequestId(productRequest(i).url)}`;
        const step = Math.max(1, Math.floor(jobs / sampled));
        const pipeline = redis.pipeline();
        for (let i = 0; i < sampled; i++) pipeline.memory('USAGE', jobKey(i * step), 'SAMPLES', 0);
        const usages = ((await pipeline.exec()) ?? []).map(([error, usage]) => {
            if (error) throw error;
            return Number(usage);
        });
        const jobHashBytes = Math.round(usages.reduce((sum, usage) => sum + usage, 0) / usages.length);
        const queueKeysBytes: Record<string, number> = {};
        for (const name of QUEUE_KEYS) {
            const usage = await redis.memory('USAGE', `${prefix}:${QUEUE_NAME}:${name}`, 'SAMPLES', 0);
            if (usage !== null) queueKeysBytes[name] = Number(usage);
        }
        const otherBytes = Object.values(queueKeysBytes).reduce((sum, bytes) => sum + bytes, 0);
        const fields = await redis.hgetall(jobKey(0));
        const [, listpackValue] = (await redis.config('GET', 'hash-max-listpack-value')) as [string, string];
        return {
            jobs,
            usedMemoryDelta,
            bytesPerJob: Math.round(usedMemoryDelta / jobs),
            sampled: usages.length,
            jobHashBytes,
            jobHashEncoding: String(await redis.object('ENCODING', jobKey(0))),
            jobHashFields: Object.fromEntries(
                Object.entries(fields).map(([name, value]) => [name, Buffer.byteLength(value)]),
            ),
            queueKeysBytes,
            bytesPerJobByKeys: Math.round(jobHashBytes + otherBytes / jobs),
            hashMaxListpackValue: Number(listpackValue),
            fillPerSec: Math.round(jobs / fillSec),
        };
    } finally {
        await queue.close();
        await deleteKeysUnder(redis, prefix);
        await lazyFreeDone(redis);
    }
}

/** Waits until Redis has freed what earlier UNLINKs handed to its background thread (see seenSetMemory.ts). */
async function lazyFreeDone(redis: Redis): Promise<void> {
    for (let tries = 0; tries < 600 && (await memoryInfo(redis, 'lazyfree_pending_objects')) > 0; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
    }
}

async function memoryInfo(redis: Redis, field: string): Promise<number> {
    const match = new RegExp(`^${field}:(\\d+)`, 'm').exec(await redis.info('memory'));
    if (!match) throw new Error(`INFO memory has no ${field}`);
    return Number(match[1]);
}
