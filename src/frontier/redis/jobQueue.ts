/**
 * A stage's queue in the distributed mode: a BullMQ queue in Redis, shared by every worker of the
 * fleet, handed to Crawlee's crawler as its request manager (vocabulary/queue.ts; `queueOption` in
 * fetch/crawlerHooks.ts).
 *
 * A request is a job (id: Crawlee's request id, from the unique key). A BullMQ worker takes jobs
 * under a lock it renews while the page is worked on; each job's processor waits here until the
 * crawler is done with the request: `markRequestHandled` completes the job (its records are
 * committed before that, by the stage), `reclaimRequest` puts it back — as a delayed job, which
 * holds no slot, until the retry policy's `userData.retryAt`. A worker that dies stops renewing:
 * its locks expire, and the stalled-job check of any other worker returns its jobs to the queue.
 *
 * Order: BullMQ serves its `wait` list before its prioritized set. Navigation pages (added at the
 * front) and due retries go to `wait`; record pages are prioritized, all at one priority (first in,
 * first out) or, with `randomOrder`, each at a random one.
 *
 * Past `maxWaiting` jobs waiting, record pages spill to a backlog (PostgreSQL: a waiting job costs
 * Redis about a kilobyte, a backlog of tens of millions would not fit), and every worker feeds
 * the backlog back in windows as the queue drains below half of it.
 *
 * The queue is finished when no job of it is waiting, delayed, active or spilled anywhere in the
 * fleet, and has stayed so over a grace period: a job another worker holds keeps it going.
 * Completed jobs are removed (BullMQ's guidance: keep Redis small); the seen-set, not the job id,
 * says whether a URL was ever queued.
 */
import { getRequestId, Request, type RequestOptions, type RequestQueueOperationInfo } from '@crawlee/core';
import type { RequestSchema } from '@crawlee/types';
import { DelayedError, type Job, Queue, WaitingError, Worker } from 'bullmq';
import type { RedisClient } from './connection.js';
import type { FrontierQueue, JobBacklog, OutcomeFence, SpilledJob } from '../../vocabulary/queue.js';
import { dataOf, type JobData, jobOf, toRequest } from './jobData.js';
import { type QueueCounts, queueCounts } from './queueCounts.js';

export interface JobQueueOptions {
    /** The connection; BullMQ's worker opens one more of its own for blocking reads. */
    redis: RedisClient;
    /** BullMQ's key prefix: every key of the queue starts with it. */
    prefix: string;
    /** The queue's name, e.g. `shop-http`. */
    name: string;
    /** How long a job stays locked to its worker without a renewal (renewed every half of it). Default: 30,000 ms. */
    lockMillis?: number;
    /** Jobs taken ahead of the crawler, locked to this worker while they wait for a slot. Default: 10. */
    prefetch?: number;
    /** Record pages in random order instead of first in, first out. Default: false. */
    randomOrder?: boolean;
    /** How long the fleet-wide queue must stay empty before it counts as finished. Default: 5,000 ms. */
    finishGraceMillis?: number;
    /** Where record pages go past `maxWaiting` jobs waiting. Default: none (all stay in Redis). */
    backlog?: JobBacklog;
    /** Jobs waiting in Redis past which record pages spill to the backlog. Default: 200,000. */
    maxWaiting?: number;
    /** Told of a job BullMQ gave up on without the crawler (its worker died too often holding it). */
    onLost?: (request: Request, reason: string) => void;
    /** Told of a job this worker's stalled-job check took back from a worker that stopped renewing its lock. */
    onTakenBack?: (jobId: string) => void;
}

export const JOB_QUEUE_DEFAULTS = { lockMillis: 30_000, prefetch: 10, finishGraceMillis: 5_000, maxWaiting: 200_000 };

/** Most jobs fed from the backlog in one go, and how often the queue looks whether to. */
const FEED_WINDOW = 10_000;
const FEED_MILLIS = 1_000;
/** Times a job may be taken back from a dead worker before BullMQ fails it (BullMQ's default: 1). */
const MAX_STALLED = 5;

/** The crawler's answer for one job: done, or back into the queue at `until` (ms since the epoch). */
type Settlement =
    | { done: true }
    | { done: false; data: JobData; retry: false }
    | { done: false; data: JobData; retry: true; until: number };

/** A job given back untouched: to the front of its place in the queue, for the next worker. */
const givenBack = (job: Job<JobData>): Settlement => ({ done: false, data: job.data, retry: false });

interface Taken {
    job: Job<JobData>;
    settle: (settlement: Settlement) => void;
}

export class JobQueue implements FrontierQueue {
    readonly queue: Queue<JobData>;
    private readonly worker: Worker<JobData>;
    private readonly randomOrder: boolean;
    private readonly finishGraceMillis: number;
    /** Jobs taken from Redis, not yet handed to the crawler. */
    private readonly ready: Taken[] = [];
    /** Jobs handed to the crawler, by request id. */
    private readonly inWork = new Map<string, Taken>();
    private emptySince: number | undefined;
    private readonly backlog: JobBacklog | undefined;
    private readonly maxWaiting: number;
    /**
     * The fleet's waiting jobs and whether any are spilled, as last
     * looked at (at most FEED_MILLIS ago), for the spill decision.
     */
    private fill = { waiting: 0, spilled: false, at: 0 };
    private feeder: NodeJS.Timeout | undefined;
    private handled = 0;
    private running: Promise<void> | undefined;
    private closing = false;

    /** The queue's name (a stage's store name, `<site>-http`). */
    readonly name: string;

    constructor(options: JobQueueOptions) {
        const { redis, prefix, name } = options;
        this.name = name;
        this.randomOrder = options.randomOrder ?? false;
        this.finishGraceMillis = options.finishGraceMillis ?? JOB_QUEUE_DEFAULTS.finishGraceMillis;
        this.backlog = options.backlog;
        this.maxWaiting = options.maxWaiting ?? JOB_QUEUE_DEFAULTS.maxWaiting;
        this.queue = new Queue<JobData>(name, {
            connection: redis,
            prefix,
            defaultJobOptions: {
                removeOnComplete: true,
                removeOnFail: { count: 10_000 },
                attempts: 5,
                backoff: { type: 'exponential', delay: 1_000 },
            },
            streams: { events: { maxLen: 1_000 } },
        });
        this.worker = new Worker<JobData>(name, (job, token) => this.process(job, token), {
            connection: redis,
            prefix,
            autorun: false,
            concurrency: options.prefetch ?? JOB_QUEUE_DEFAULTS.prefetch,
            lockDuration: options.lockMillis ?? JOB_QUEUE_DEFAULTS.lockMillis,
            stalledInterval: Math.max(1_000, (options.lockMillis ?? JOB_QUEUE_DEFAULTS.lockMillis) / 2),
            maxStalledCount: MAX_STALLED,
            drainDelay: 1,
        });
        // A lost connection is reported here and retried by ioredis; it must not end the process.
        this.worker.on('error', () => {});
        this.queue.on('error', () => {});
        this.worker.on('stalled', (jobId) => options.onTakenBack?.(jobId));
        this.worker.on('failed', (job, error) => {
            // Every failed attempt is reported; only a job BullMQ moved to `failed` is lost.
            if (job)
                void job.isFailed().then(
                    (failed) => failed && options.onLost?.(toRequest(job), error.message),
                    () => {},
                );
        });
    }

    /** Starts taking jobs. */
    start(): void {
        this.running ??= this.worker.run().catch(() => {});
        if (this.backlog) this.feeder ??= setInterval(() => void this.feedBacklog().catch(() => {}), FEED_MILLIS);
    }

    async addRequests(requests: RequestOptions[], options: { forefront?: boolean } = {}): Promise<void> {
        if (requests.length === 0) return;
        const forefront = options.forefront ?? false;
        const jobs = requests.map((request) =>
            jobOf(new Request(request), { forefront, randomOrder: this.randomOrder }),
        );
        if (this.backlog && !forefront && (await this.spilling())) {
            await this.backlog.push(
                jobs.map(({ data, opts }) => ({ jobId: opts.jobId, priority: opts.priority, data: { ...data } })),
            );
            this.fill.spilled = true;
            return;
        }
        await this.queue.addBulk(jobs);
        this.fill.waiting += jobs.length;
    }

    /**
     * Makes the requests pending again (`npm run dead-letter -- requeue` on a fleet): each one whose
     * job is gone, or finished (a failed job is kept a while, under the same id), is added as new;
     * one whose job is still waiting, delayed or in work is left as it is, and counted.
     */
    async requeue(requests: RequestOptions[]): Promise<{ added: number; alreadyPending: number }> {
        const toAdd: RequestOptions[] = [];
        for (const request of requests) {
            const jobId = getRequestId(request.uniqueKey ?? request.url);
            const state = await this.queue.getJobState(jobId);
            if (state === 'completed' || state === 'failed') await this.queue.remove(jobId);
            else if (state !== 'unknown') continue;
            toAdd.push(request);
        }
        await this.addRequests(toAdd);
        return { added: toAdd.length, alreadyPending: requests.length - toAdd.length };
    }

    async addRequest(
        request: RequestOptions,
        options: { forefront?: boolean } = {},
    ): Promise<RequestQueueOperationInfo> {
        const forefront = options.forefront ?? false;
        const job = jobOf(new Request(request), { forefront, randomOrder: this.randomOrder });
        const wasAlreadyPresent = (await this.queue.getJobState(job.opts.jobId)) !== 'unknown';
        if (!wasAlreadyPresent) await this.queue.add(job.name, job.data, job.opts);
        return {
            requestId: job.opts.jobId,
            uniqueKey: job.data.uniqueKey,
            wasAlreadyPresent,
            wasAlreadyHandled: false,
            forefront,
        };
    }

    async addRequestsBatched(requests: Parameters<FrontierQueue['addRequestsBatched']>[0]) {
        const added: RequestOptions[] = [];
        for await (const request of requests as AsyncIterable<RequestOptions | string>)
            added.push(typeof request === 'string' ? { url: request } : request);
        await this.addRequests(added);
        const addedRequests = added.map((request) => ({
            requestId: getRequestId(request.uniqueKey ?? request.url),
            uniqueKey: request.uniqueKey ?? request.url,
            wasAlreadyPresent: false,
            wasAlreadyHandled: false,
        }));
        return { addedRequests, waitForAllRequestsToBeAdded: Promise.resolve([]) };
    }

    async fetchNextRequest<T extends Record<string, unknown>>(): Promise<Request<T> | null> {
        const taken = this.ready.shift();
        if (!taken) return null;
        const request = toRequest(taken.job) as Request<T>;
        if (request.id === undefined) throw new Error(`the job of ${request.url} has no id`);
        this.inWork.set(request.id, taken);
        return request;
    }

    /** Which take of its job a request in work is (see OutcomeFence): the job's creation time and take count. */
    fenceOf(request: RequestSchema): OutcomeFence | undefined {
        const job = request.id === undefined ? undefined : this.inWork.get(request.id)?.job;
        return job && { jobCreatedAt: job.timestamp, take: job.attemptsStarted };
    }

    async markRequestHandled(request: Request): Promise<null> {
        this.release(request)?.({ done: true });
        this.handled += 1;
        return null;
    }

    /** Back into the queue: as a delayed job until `userData.retryAt` (a retry), else at once, at the front. */
    async reclaimRequest(request: Request): Promise<null> {
        const retryAt = (request.userData as { retryAt?: number }).retryAt;
        const data = dataOf(request);
        this.release(request)?.(
            retryAt === undefined
                ? { done: false, data, retry: false }
                : { done: false, data, retry: true, until: retryAt },
        );
        return null;
    }

    async isEmpty(): Promise<boolean> {
        return this.ready.length === 0;
    }

    /** No job of the queue waiting, delayed, in work or spilled anywhere in the fleet, for the grace period. */
    async isFinished(): Promise<boolean> {
        if (this.ready.length > 0 || this.inWork.size > 0) {
            this.emptySince = undefined;
            return false;
        }
        const { waiting, delayed, active, spilled } = await this.look();
        if (waiting + delayed + active > 0 || spilled) {
            this.emptySince = undefined;
            return false;
        }
        this.emptySince ??= Date.now();
        return Date.now() - this.emptySince >= this.finishGraceMillis;
    }

    /**
     * The fleet-wide queue (queueCounts) and the jobs spilled to the
     * backlog; counting those scans the backlog, so this is for a status.
     */
    async counts(): Promise<QueueCounts & { spilled: number }> {
        const [counts, spilled] = await Promise.all([queueCounts(this.queue), this.backlog?.count() ?? 0]);
        return { ...counts, spilled };
    }

    /** The fleet-wide queue and whether any job is spilled: what the frequent looks need. */
    private async look(): Promise<QueueCounts & { spilled: boolean }> {
        const [counts, empty] = await Promise.all([queueCounts(this.queue), this.backlog?.isEmpty() ?? true]);
        this.fill = { waiting: counts.waiting, spilled: !empty, at: Date.now() };
        return { ...counts, spilled: !empty };
    }

    async handledCount(): Promise<number> {
        return this.handled;
    }

    getTotalCount(): number {
        return this.handled + this.ready.length + this.inWork.size;
    }

    getPendingCount(): number {
        return this.ready.length + this.inWork.size;
    }

    async *[Symbol.asyncIterator](): AsyncGenerator<Request> {
        for (let request = await this.fetchNextRequest(); request; request = await this.fetchNextRequest())
            yield request;
    }

    /**
     * Stops taking jobs, gives back the ones not done (the crawler is stopped first, so these are the
     * ones taken ahead of it) and lets go of the queue. The connection stays open.
     */
    async close(): Promise<void> {
        this.closing = true;
        clearInterval(this.feeder);
        const closing = this.worker.close();
        const left = [...this.ready.splice(0), ...this.inWork.values()];
        this.inWork.clear();
        for (const taken of left) taken.settle(givenBack(taken.job));
        await closing;
        await this.running;
        await this.queue.close();
    }

    /** Takes up to `jobs` jobs at once from now on: the crawler's slots and the few ahead of them. */
    setPrefetch(jobs: number): void {
        this.worker.concurrency = Math.max(1, jobs);
    }

    /** Empties the queue in Redis (refused by BullMQ while a job is active). */
    async clear(): Promise<void> {
        await this.queue.obliterate();
        await this.backlog?.clear();
    }

    /**
     * Whether new record pages go to the backlog: Redis holds
     * `maxWaiting` already, or older ones wait there (they go first).
     */
    private async spilling(): Promise<boolean> {
        if (Date.now() - this.fill.at > FEED_MILLIS) await this.look();
        return this.fill.spilled || this.fill.waiting >= this.maxWaiting;
    }

    /** Tops Redis up from the backlog once it has drained below half of `maxWaiting`. */
    private async feedBacklog(): Promise<void> {
        const { waiting, spilled } = await this.look();
        const { backlog } = this;
        if (!backlog || !spilled || waiting >= this.maxWaiting / 2) return;
        await backlog.feed(Math.min(FEED_WINDOW, this.maxWaiting - waiting), async (jobs: SpilledJob[]) => {
            // The backlog gives back, as a plain record, the JobData that addRequests spilled to it.
            await this.queue.addBulk(
                jobs.map(({ jobId, priority, data }) => ({
                    name: 'page',
                    // biome-ignore lint/plugin/noDoubleCast: the backlog gives spilled JobData back as a record
                    data: data as unknown as JobData,
                    opts: { jobId, priority },
                })),
            );
        });
    }

    /** A job's processor: hands it to the crawler and waits for the crawler's answer. */
    private async process(job: Job<JobData>, token: string | undefined): Promise<void> {
        // BullMQ still hands over a job whose fetch was under way when close() was called, and waits for it.
        const settlement = this.closing
            ? givenBack(job)
            : await new Promise<Settlement>((settle) => {
                  this.ready.push({ job, settle });
                  this.emptySince = undefined;
              });
        if (settlement.done) return;
        await job.updateData(settlement.data);
        if (!settlement.retry) {
            // Back at the front of its place in the queue, for the next worker to take.
            await job.moveToWait(token);
            throw new WaitingError();
        }
        await job.changePriority({ priority: 0 });
        await job.moveToDelayed(settlement.until, token);
        throw new DelayedError();
    }

    private release(request: Request): Taken['settle'] | undefined {
        if (request.id === undefined) return undefined;
        const taken = this.inWork.get(request.id);
        this.inWork.delete(request.id);
        return taken?.settle;
    }
}
