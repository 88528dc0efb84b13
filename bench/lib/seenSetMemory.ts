/**
 * What a Redis seen-set costs in Redis memory per URL, and how fast a fleet can fill it: a fresh
 * set under its own prefix is filled with `urls` distinct synthetic URL keys, measured, then
 * deleted. The exact set is sized for `urls` (`expectedUrls`), the Bloom filter too, at the
 * default rate (1e-6).
 *
 * Two memory figures, since neither is the whole truth:
 * - `bytes`: the sum of `MEMORY USAGE key SAMPLES 0` over the set's keys: what Redis says each
 *   key holds, its per-key overhead in the keyspace included (SAMPLES 0 reads every field).
 * - `usedMemoryDelta`: `used_memory` from INFO before and after the fill: the allocator's view,
 *   which also sees fragmentation, the keyspace's growth in steps and anything else Redis did
 *   meanwhile, so it is only meaningful on an otherwise idle Redis.
 *
 * `addsPerSec` is URLs per wall-clock second from one connection, `IN_FLIGHT` batches at a time
 * so Redis is kept busy while the next batch is hashed; Redis is single-threaded, so that is
 * about what a whole fleet gets too.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { RedisBloomSeenSet } from '../../src/frontier/redisBloomSeenSet.js';
import { deleteKeysUnder, RedisSeenSet, scanKeysUnder } from '../../src/frontier/redisSeenSet.js';

/** URLs per add() call, as the frontier batches them. */
const BATCH = 10_000;
/** add() calls waiting on Redis at once. */
const IN_FLIGHT = 4;

export interface SeenSetMemory {
    urls: number;
    kind: string;
    /** Sum of MEMORY USAGE over the set's keys. */
    bytes: number;
    bytesPerUrl: number;
    /** used_memory after the fill minus before. */
    usedMemoryDelta: number;
    addsPerSec: number;
    /** URLs the set admitted: `urls` for the exact set, a few fewer for a filter's false positives. */
    admitted: number;
}

export async function measureSeenSetMemory(
    redis: Redis,
    { urls, kind }: { urls: number; kind: 'exact' | 'bloom' },
): Promise<SeenSetMemory> {
    const key = `dragnet-bench:${randomUUID()}`;
    await lazyFreeDone(redis);
    const before = await usedMemory(redis);
    try {
        const seenSet =
            kind === 'exact'
                ? await RedisSeenSet.open(redis, { key, expectedUrls: urls })
                : await RedisBloomSeenSet.open(redis, { key, expectedUrls: urls });
        const started = performance.now();
        let next = 0;
        const fill = async () => {
            while (next < urls) {
                const from = next;
                next = Math.min(urls, next + BATCH);
                await seenSet.add(Array.from({ length: next - from }, (_, i) => `https://shop.example/p/${from + i}`));
            }
        };
        await Promise.all(Array.from({ length: IN_FLIGHT }, fill));
        const seconds = (performance.now() - started) / 1000;
        const usedMemoryDelta = (await usedMemory(redis)) - before;
        const bytes = await memoryUsage(redis, key);
        return {
            urls,
            kind,
            bytes,
            bytesPerUrl: Math.round((bytes / urls) * 100) / 100,
            usedMemoryDelta,
            addsPerSec: Math.round(urls / seconds),
            admitted: seenSet.size,
        };
    } finally {
        await deleteKeysUnder(redis, key);
    }
}

async function memoryUsage(redis: Redis, key: string): Promise<number> {
    let bytes = 0;
    for await (const keys of scanKeysUnder(redis, key)) {
        const pipeline = redis.pipeline();
        for (const k of keys) pipeline.memory('USAGE', k, 'SAMPLES', 0);
        for (const [error, usage] of (await pipeline.exec()) ?? []) {
            if (error) throw error;
            bytes += Number(usage ?? 0);
        }
    }
    return bytes;
}

async function usedMemory(redis: Redis): Promise<number> {
    return memoryInfo(redis, 'used_memory');
}

/**
 * Waits until Redis has freed what earlier UNLINKs handed to its background thread: the previous
 * measurement's 10M-URL set is 160 MB still being freed, which would shrink this one's delta.
 */
async function lazyFreeDone(redis: Redis): Promise<void> {
    for (let tries = 0; tries < 300 && (await memoryInfo(redis, 'lazyfree_pending_objects')) > 0; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
    }
}

async function memoryInfo(redis: Redis, field: string): Promise<number> {
    const match = new RegExp(`^${field}:(\\d+)`, 'm').exec(await redis.info('memory'));
    if (!match) throw new Error(`INFO memory has no ${field}`);
    return Number(match[1]);
}
