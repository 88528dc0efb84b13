/**
 * What a stage does with an error, shared by both stages: count it by class, retry what may
 * succeed later, and put what will not into dead-letter with its reason.
 */
import type { Logger } from 'pino';
import type { DeadLetter, DeadLetterEntry } from '../frontier/deadLetter.js';
import type { Metrics } from '../monitor/metrics.js';
import type { RunStats } from '../monitor/stats.js';
import { classifyError, FetchFailure } from './failures.js';

/** The part of a Crawlee crawling context these handlers use. */
interface FailedContext {
    request: { url: string; label?: string; retryCount: number; noRetry: boolean };
    session?: { retire(): void };
}

export interface FailureHandlerOptions {
    stage: 'http' | 'browser';
    deadLetter: DeadLetter;
    stats: RunStats;
    log: Logger;
    /** Counts attempts that got no response; undefined when no metrics are served. */
    metrics?: Metrics;
    /** Told of attempts that got no response, as evidence of the site's load; undefined when concurrency is fixed. */
    concurrency?: { failed(request: object, error: unknown): void };
}

/**
 * Throws `failure` after marking the request so Crawlee does the right thing with it: a
 * permanent failure is not retried, a blocked one gets a fresh session.
 */
export function rejectRequest(context: FailedContext, failure: FetchFailure): never {
    if (failure.failureClass === 'permanent') context.request.noRetry = true;
    if (failure.failureClass === 'blocked') context.session?.retire();
    throw failure;
}

/** Crawlee's `errorHandler` (before a retry) and `failedRequestHandler` (given up) for a stage. */
export function failureHandlers({ stage, deadLetter, stats, log, metrics, concurrency }: FailureHandlerOptions) {
    return {
        errorHandler({ request }: FailedContext, error: Error): void {
            const failure = classifyError(error);
            metrics?.fetchFailed(request, stage);
            concurrency?.failed(request, error);
            stats.errorsByClass[failure.failureClass] += 1;
            stats.retries += 1;
            if (request.retryCount === 0) stats.retriedRequests += 1;
            log.warn(
                { url: request.url, stage, class: failure.failureClass, reason: failure.reason, attempt: request.retryCount + 1 },
                `retrying: ${failure.message}`,
            );
        },
        async failedRequestHandler({ request }: FailedContext, error: Error): Promise<void> {
            const failure = classifyError(error);
            metrics?.fetchFailed(request, stage);
            concurrency?.failed(request, error);
            stats.countDeadLetter(failure.failureClass, failure.reason);
            await deadLetter.add({
                url: request.url,
                label: request.label,
                failureClass: failure.failureClass,
                reason: failure.reason,
                error: failure.message,
                status: failure.status,
                attempts: request.retryCount + 1,
                stage,
            });
            log.warn({ url: request.url, stage, class: failure.failureClass, reason: failure.reason }, 'dead-lettered');
        },
    };
}

/**
 * A request that will not be fetched in this run because its route's drift breaker tripped:
 * dead-lettered as `route-stopped`, to be re-queued once the extractor is fixed.
 */
export async function deadLetterStopped(
    request: { url: string; label?: string },
    stage: 'http' | 'browser',
    { deadLetter, stats }: { deadLetter: DeadLetter; stats: RunStats },
): Promise<void> {
    await deadLetterUnfetched({ deadLetter, stats }, {
        url: request.url,
        label: request.label,
        failureClass: 'invalid',
        reason: 'route-stopped',
        error: `the drift breaker stopped route "${request.label}": its pages fail the schema`,
        stage,
    });
}

/** Dead-letters a request that was given up on before it was fetched (attempts: 0). */
export async function deadLetterUnfetched(
    { deadLetter, stats }: { deadLetter: DeadLetter; stats: RunStats },
    entry: Omit<DeadLetterEntry, 'attempts' | 'deadLetteredAt'>,
): Promise<void> {
    await deadLetter.add({ ...entry, attempts: 0 });
    stats.countDeadLetter(entry.failureClass, entry.reason);
}
