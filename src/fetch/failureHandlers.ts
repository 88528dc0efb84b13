/**
 * What a stage does with a failed request, shared by both stages: count it by class, then either
 * retry it after the retry policy's delay (it waits in the queue, holding no slot) or give up and
 * dead-letter it with its reason.
 */
import type { Request } from '@crawlee/core';
import type { Logger } from 'pino';
import { deadLetterOutcome } from '../frontier/deadLetter.js';
import type { Outcomes } from '../store/outcomes.js';
import type { RunEvents } from '../vocabulary/events.js';
import type { DeadLetterEntry } from '../vocabulary/failure.js';
import type { FrontierQueue } from '../vocabulary/queue.js';
import type { RequestData, Stage } from '../vocabulary/request.js';
import type { FailureHook } from './crawlerHooks.js';
import { classifyError } from './failures.js';
import type { RetryPolicy } from './retryPolicy.js';

export interface FailureHandlerOptions {
    stage: Stage;
    /** The stage's queue: a request given up on is marked handled there. */
    queue: FrontierQueue;
    outcomes: Outcomes;
    retryPolicy: RetryPolicy;
    /** Told of every failed attempt and every retry. */
    events: RunEvents;
    log: Logger;
}

/** The stage's `onFailure` hook (crawlerHooks.ts). */
export function failureHook({ stage, queue, outcomes, retryPolicy, events, log }: FailureHandlerOptions): FailureHook {
    return async ({ request, session }, error, crawleeWouldRetry) => {
        const failure = classifyError(error);
        events.emit('attemptFailed', { stage, request, url: request.url, error, failure });
        // A blocked client should not come back with the same identity.
        if (failure.failureClass === 'blocked') session?.retire();
        const attempts = request.retryCount + 1;
        const userData = request.userData as RequestData;
        userData.firstFailedAt ??= new Date().toISOString();
        const decision = crawleeWouldRetry ? retryPolicy.decide(failure, attempts) : ({ retry: false, reason: failure.reason } as const);
        const context = { url: request.url, stage, class: failure.failureClass, reason: failure.reason, attempt: attempts };
        if (decision.retry) {
            userData.retryAt = Date.now() + decision.delayMs;
            events.emit('retryScheduled', { stage, url: request.url, failure, attempt: attempts, delayMs: decision.delayMs });
            log.warn({ ...context, retryInMs: decision.delayMs }, `retrying in ${(decision.delayMs / 1000).toFixed(1)} s: ${failure.message}`);
            return;
        }
        request.noRetry = true;
        await giveUp(queue, outcomes, request, {
            failureClass: failure.failureClass,
            reason: decision.reason,
            error: failure.message,
            status: failure.status,
            attempts,
            stage,
            firstFailedAt: userData.firstFailedAt,
        });
        log.warn({ ...context, reason: decision.reason }, 'dead-lettered');
    };
}

/**
 * A request that will not be fetched in this run because its route's drift breaker tripped:
 * dead-lettered as `route-stopped`, to be re-queued once the extractor is fixed.
 */
export function deadLetterStopped(request: Request, stage: Stage, { queue, outcomes }: { queue: FrontierQueue; outcomes: Outcomes }): Promise<void> {
    return giveUp(queue, outcomes, request, {
        failureClass: 'invalid',
        reason: 'route-stopped',
        error: `the drift breaker stopped route "${request.label}": its pages fail the schema`,
        attempts: 0,
        stage,
    });
}

/** Dead-letters `request` and marks it handled in `queue`, in one transaction; resolves once committed. */
export function giveUp(
    queue: FrontierQueue,
    outcomes: Outcomes,
    request: Request,
    entry: Omit<DeadLetterEntry, 'url' | 'label' | 'deadLetteredAt'>,
): Promise<void> {
    const { redirectedFrom } = request.userData as RequestData;
    return outcomes.settle(queue, request, deadLetterOutcome({ url: request.url, label: request.label, ...(redirectedFrom ? { redirectedFrom } : {}), ...entry }));
}
