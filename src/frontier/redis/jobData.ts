/**
 * A request as a BullMQ job (jobQueue.ts): its data — the request as Crawlee serializes it, but
 * its id, which is the job's — and its options: the id from the unique key, and the priority that
 * sets its place in the queue.
 */
import { getRequestId, Request } from '@crawlee/core';
import type { Job } from 'bullmq';

/** BullMQ's highest priority number (lowest priority): random order spreads record pages below 1. */
const LOWEST_PRIORITY = 2_097_152;

/** What a job holds: the request as Crawlee serializes it, but its id (the job's). */
export interface JobData {
    url: string;
    uniqueKey: string;
    userData: Record<string, unknown>;
    retryCount: number;
    errorMessages: string[];
}

/**
 * The job of a request. Front requests (navigation) go to BullMQ's `wait` list, which it serves
 * before its prioritized set; the others are prioritized, all at one priority (first in, first
 * out) or, with `randomOrder`, each at a random one.
 */
export function jobOf(request: Request, { forefront, randomOrder }: { forefront: boolean; randomOrder: boolean }) {
    const priority = forefront ? 0 : randomOrder ? 1 + Math.floor(Math.random() * (LOWEST_PRIORITY - 1)) : 1;
    return {
        name: 'page',
        data: dataOf(request),
        opts: { jobId: getRequestId(request.uniqueKey), priority, lifo: forefront },
    };
}

export function dataOf(request: Request): JobData {
    const { url, uniqueKey, userData, retryCount, errorMessages } = request;
    // The last few messages are enough to say why a request failed; a job stays small.
    return {
        url,
        uniqueKey,
        userData: userData as Record<string, unknown>,
        retryCount,
        errorMessages: errorMessages.slice(-3),
    };
}

export function toRequest(job: Job<JobData>): Request {
    return new Request({ ...job.data, id: job.id });
}
