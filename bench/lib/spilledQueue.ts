/**
 * The frontier's backlog at scale: the same 1M waiting requests as the queue-memory case, added
 * through a JobQueue that spills past `maxWaiting` to PostgreSQL (store/postgres/backlog.ts).
 * Measures what Redis holds then (its window), what PostgreSQL holds per spilled request, how fast
 * requests are added, and how fast windows are fed back to BullMQ.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { JobQueue } from '../../src/frontier/redis/jobQueue.js';
import { deleteKeysUnder } from '../../src/frontier/redisSeenSet.js';
import { PgBacklog } from '../../src/store/postgres/backlog.js';
import { openPostgres } from '../../src/store/postgres/database.js';
import { productRequests } from './redisFrontier.js';

export interface SpilledQueue {
    jobs: number;
    maxWaiting: number;
    /** Jobs in Redis and in the backlog after the fill. */
    inRedis: number;
    spilled: number;
    /** Redis `used_memory` after the fill minus before, in all and per job added. */
    redisBytes: number;
    redisBytesPerJob: number;
    /** The backlog table's size (heap, TOAST and index) per spilled job. */
    postgresBytesPerSpilledJob: number;
    fillPerSec: number;
    /** Jobs moved from the backlog to BullMQ per second, a window of 10,000 at a time. */
    feedPerSec: number;
}

export async function measureSpilledQueue(
    redis: Redis,
    postgresUrl: string,
    { jobs, maxWaiting }: { jobs: number; maxWaiting: number },
): Promise<SpilledQueue> {
    const id = randomUUID().slice(0, 8);
    const prefix = `dragnet-bench-${id}`;
    const schema = `dragnet_bench_${id}`;
    const separator = postgresUrl.includes('?') ? '&' : '?';
    const db = await openPostgres(
        `${postgresUrl}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    );
    const backlog = new PgBacklog(db, 'demo-shop', 'demo-shop-http');
    const queue = new JobQueue({ redis, prefix, name: 'demo-shop-http', backlog, maxWaiting });
    try {
        const before = await usedMemory(redis);
        const started = performance.now();
        for (let from = 0; from < jobs; from += 1_000)
            await queue.addRequests(productRequests(from, Math.min(1_000, jobs - from)));
        const fillSec = (performance.now() - started) / 1000;
        const redisBytes = (await usedMemory(redis)) - before;
        const { waiting, spilled } = await queue.counts();
        const { rows } = await db.query<{ bytes: string }>(
            `SELECT pg_total_relation_size('${schema}.backlog') AS bytes`,
        );

        // Feeding, timed on its own: windows go to BullMQ as a worker's feeder sends them.
        await deleteKeysUnder(redis, prefix);
        const feedStarted = performance.now();
        let fed = 0;
        while (fed < Math.min(spilled, 100_000)) {
            fed += await backlog.feed(10_000, async (window) => {
                await queue.queue.addBulk(
                    window.map(({ jobId, priority, data }) => ({
                        name: 'page',
                        data: data as never,
                        opts: { jobId, priority },
                    })),
                );
            });
        }
        const feedSec = (performance.now() - feedStarted) / 1000;
        return {
            jobs,
            maxWaiting,
            inRedis: waiting,
            spilled,
            redisBytes,
            redisBytesPerJob: Math.round(redisBytes / jobs),
            postgresBytesPerSpilledJob: Math.round(Number(rows[0]!.bytes) / spilled),
            fillPerSec: Math.round(jobs / fillSec),
            feedPerSec: Math.round(fed / feedSec),
        };
    } finally {
        await queue.close();
        await deleteKeysUnder(redis, prefix);
        await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await db.close();
    }
}

async function usedMemory(redis: Redis): Promise<number> {
    return Number(/^used_memory:(\d+)/m.exec(await redis.info('memory'))![1]);
}
