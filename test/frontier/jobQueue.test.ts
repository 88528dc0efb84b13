/**
 * The BullMQ job queue of the distributed mode, against the machine's real Redis (a key prefix of
 * each test's own, removed after): the order it hands out requests in, retries as delayed jobs,
 * the fleet-wide finish check, and what closing gives back.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { Request } from '@crawlee/core';
import type { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { JobQueue, type JobQueueOptions } from '../../src/frontier/redis/jobQueue.js';
import { PgBacklog } from '../../src/store/postgres/backlog.js';
import { REDIS_URL } from '../helpers/fleetWorld.js';
import { testDatabase } from '../helpers/pgSchema.js';

let redis: Redis;
let prefix: string;
const queues: JobQueue[] = [];

function openQueue(options: Partial<JobQueueOptions> = {}): JobQueue {
    const queue = new JobQueue({ redis, prefix, name: 'site-http', finishGraceMillis: 300, ...options });
    queues.push(queue);
    return queue;
}

const url = (path: string) => `http://127.0.0.1:9/${path}`;

/** The next request the queue hands out, waiting for its worker to take one. */
async function next(queue: JobQueue, timeoutMs = 5_000): Promise<Request> {
    const until = Date.now() + timeoutMs;
    for (;;) {
        const request = await queue.fetchNextRequest();
        if (request) return request;
        if (Date.now() > until) throw new Error('no request came');
        await new Promise((resolve) => setTimeout(resolve, 20));
    }
}

/** Takes and completes every request, in the order handed out. */
async function drain(queue: JobQueue, count: number): Promise<string[]> {
    const order: string[] = [];
    for (let i = 0; i < count; i++) {
        const request = await next(queue);
        order.push(request.url);
        await queue.markRequestHandled(request);
    }
    return order;
}

beforeEach(() => {
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    prefix = `dragnet-test-${randomUUID().slice(0, 8)}`;
});

afterEach(async () => {
    for (const queue of queues.splice(0)) await queue.close();
    for await (const keys of redis.scanStream({ match: `${prefix}:*`, count: 1000 }))
        if ((keys as string[]).length) await redis.unlink(...(keys as string[]));
    redis.disconnect();
});

describe('JobQueue', () => {
    it('hands out front requests (navigation) before back ones (records), each first in, first out', async () => {
        const queue = openQueue({ prefetch: 1 });
        await queue.addRequests(['r1', 'r2', 'r3'].map((p) => ({ url: url(p) })));
        await queue.addRequests(
            ['n1'].map((p) => ({ url: url(p) })),
            { forefront: true },
        );
        queue.start();
        assert.deepEqual(await drain(queue, 4), [url('n1'), url('r1'), url('r2'), url('r3')]);
    });

    it('keeps a retry as a delayed job, holding no slot, until its retryAt; then it goes before records', async () => {
        const queue = openQueue({ prefetch: 1 });
        await queue.addRequests(['a', 'b', 'c'].map((p) => ({ url: url(p) })));
        queue.start();
        const a = await next(queue);
        a.userData.retryAt = Date.now() + 600;
        a.retryCount += 1;
        await queue.reclaimRequest(a);
        const b = await next(queue);
        assert.equal(b.url, url('b'), 'the slot went on to the next record');
        assert.equal((await queue.counts()).delayed, 1);
        await new Promise((resolve) => setTimeout(resolve, 800));
        await queue.markRequestHandled(b);
        const again = await next(queue);
        assert.equal(again.url, url('a'), 'the due retry comes before record c');
        assert.equal(again.retryCount, 1);
        assert.equal(typeof again.userData.retryAt, 'number');
        await queue.markRequestHandled(again);
        assert.deepEqual(await drain(queue, 1), [url('c')]);
    });

    it('hands records out in random order with randomOrder', async () => {
        const queue = openQueue({ prefetch: 1, randomOrder: true });
        const paths = Array.from({ length: 40 }, (_, i) => `p${i}`);
        await queue.addRequests(paths.map((p) => ({ url: url(p) })));
        queue.start();
        const order = await drain(queue, paths.length);
        assert.deepEqual([...order].sort(), paths.map(url).sort());
        assert.notDeepEqual(order, paths.map(url));
    });

    it(`is finished only when no job is waiting or in work \
anywhere, and has stayed so for the grace period`, async () => {
        const mine = openQueue({ prefetch: 1 });
        const other = openQueue({ prefetch: 1 });
        await mine.addRequests([{ url: url('x') }]);
        other.start();
        const held = await next(other);
        assert.equal(await mine.isFinished(), false, 'a job another worker holds keeps the queue going');
        await other.markRequestHandled(held);
        await new Promise((resolve) => setTimeout(resolve, 100));
        assert.equal(await mine.isFinished(), false, 'empty, but not yet for the grace period');
        await new Promise((resolve) => setTimeout(resolve, 400));
        assert.equal(await mine.isFinished(), true);
    });

    it('gives back the jobs it took ahead of the crawler when it closes', async () => {
        const queue = openQueue({ prefetch: 5 });
        await queue.addRequests(['a', 'b', 'c'].map((p) => ({ url: url(p) })));
        queue.start();
        await next(queue).then((request) => queue.markRequestHandled(request));
        await new Promise((resolve) => setTimeout(resolve, 200));
        await queues.pop()!.close();
        const successor = openQueue({ prefetch: 5 });
        assert.deepEqual(await successor.counts(), { waiting: 2, delayed: 0, active: 0, spilled: 0 });
        successor.start();
        assert.deepEqual((await drain(successor, 2)).sort(), [url('b'), url('c')]);
    });

    it(`closes, giving the job back, when BullMQ hands it one \
whose fetch was under way as close was called`, async () => {
        const queue = openQueue({ prefetch: 1 });
        await queue.addRequests(['a', 'b', 'c'].map((p) => ({ url: url(p) })));
        queue.start();
        // BullMQ's worker emits `completed` once Redis has completed the job and handed it the next
        // one in the same call: closing then is closing with a fetch under way, every time.
        // biome-ignore lint/plugin/noDoubleCast: the queue's BullMQ worker is private; the test waits on its events
        const worker = (queue as unknown as { worker: Worker }).worker;
        const closed = new Promise<void>((resolve, reject) =>
            worker.once('completed', () => queue.close().then(resolve, reject)),
        );
        await queue.markRequestHandled(await next(queue));
        queues.pop();
        await Promise.race([
            closed,
            new Promise((_, reject) => setTimeout(() => reject(new Error('close() hangs')), 5_000)),
        ]);
        assert.deepEqual(await openQueue().counts(), { waiting: 2, delayed: 0, active: 0, spilled: 0 });
    });

    it('says whether a request of the same unique key is already queued', async () => {
        const queue = openQueue();
        assert.equal((await queue.addRequest({ url: url('a') })).wasAlreadyPresent, false);
        assert.equal((await queue.addRequest({ url: url('a') })).wasAlreadyPresent, true);
        assert.deepEqual(await queue.counts(), { waiting: 1, delayed: 0, active: 0, spilled: 0 });
    });

    it('spills record pages past maxWaiting to the PostgreSQL backlog and feeds them back in order', async (t) => {
        const { db } = await testDatabase(t);
        const queue = openQueue({ prefetch: 1, maxWaiting: 10, backlog: new PgBacklog(db, 'site', 'site-http') });
        const paths = Array.from({ length: 50 }, (_, i) => `p${i}`);
        for (let i = 0; i < paths.length; i += 10)
            await queue.addRequests(paths.slice(i, i + 10).map((p) => ({ url: url(p) })));
        assert.deepEqual(await queue.counts(), { waiting: 10, delayed: 0, active: 0, spilled: 40 });
        assert.equal(await queue.isFinished(), false);
        queue.start();
        assert.deepEqual(await drain(queue, paths.length), paths.map(url));
        assert.equal((await queue.counts()).spilled, 0);
    });

    it('spills a request added twice (two workers queuing one link) once', async (t) => {
        const { db } = await testDatabase(t);
        const queue = openQueue({ prefetch: 1, maxWaiting: 1, backlog: new PgBacklog(db, 'site', 'site-http') });
        await queue.addRequests([{ url: url('first') }]);
        await queue.addRequests(['a', 'b'].map((p) => ({ url: url(p) })));
        await queue.addRequests(['b', 'c', 'a'].map((p) => ({ url: url(p) })));
        assert.deepEqual(await queue.counts(), { waiting: 1, delayed: 0, active: 0, spilled: 3 });
    });
});
