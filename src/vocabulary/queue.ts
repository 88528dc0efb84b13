/**
 * What the pipeline asks of a stage's queue, whichever backend holds it: Crawlee's request
 * manager (what a crawler fetches from, marks handled and reclaims to), plus adding requests at
 * the back or the front. The embedded backend is Crawlee's own `RequestQueue` over SQLite
 * (store/sqlite/); the distributed one is a BullMQ queue in Redis (frontier/redis/jobQueue.ts).
 * Crawlee's crawlers take either as their request manager (fetch/crawlerHooks.ts, `queueOption`).
 */
import type { IRequestManager, RequestOptions } from '@crawlee/core';

export interface FrontierQueue extends IRequestManager {
    /**
     * Adds requests at the back, or with `forefront` at the front. (One, `addRequest`,
     * says `wasAlreadyPresent` when a request of its unique key is queued or in work.)
     */
    addRequests(requests: RequestOptions[], options?: { forefront?: boolean }): Promise<unknown>;
}

/**
 * Which take of a request's job an outcome comes from (store/postgres/sink.ts): the job's creation
 * time (a job added again, as `dead-letter requeue` does, is a new job) and BullMQ's count of its
 * takes, which grows with each (a lease that expired and was taken by another worker, a retry).
 * Later is greater, in that order.
 */
export interface OutcomeFence {
    jobCreatedAt: number;
    take: number;
}

/** A job kept out of Redis in the backlog: its id, its priority and its data, as BullMQ would hold them. */
export interface SpilledJob {
    jobId: string;
    priority: number;
    data: Record<string, unknown>;
}

/**
 * Where a distributed queue spills the jobs Redis should not hold (a backlog of millions) and
 * feeds them back from, in windows (store/postgres/backlog.ts).
 */
export interface JobBacklog {
    /** Keeps the jobs, after those already kept. */
    push(jobs: readonly SpilledJob[]): Promise<void>;
    /**
     * Takes up to `count` of the oldest jobs and hands them to `add`; they leave the backlog only
     * once `add` has resolved (if it throws, they stay). Jobs another worker is feeding are skipped.
     * Returns how many were fed.
     */
    feed(count: number, add: (jobs: SpilledJob[]) => Promise<void>): Promise<number>;
    /** How many jobs it keeps (a count: for a status, not for every look). */
    count(): Promise<number>;
    /** Whether it keeps none: cheap, for the queue's frequent looks. */
    isEmpty(): Promise<boolean>;
    clear(): Promise<void>;
}
