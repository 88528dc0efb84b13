/**
 * What a stage does with a failed request, shared by both stages: count it by class, then either
 * retry it after the retry policy's delay (it waits in the queue, holding no slot) or give up and
 * dead-letter it with its reason.
 *
 * Two failures are not the site's: an exit fault (the proxy failed) and no exit being available
 * (every proxy on its breaker). Those retry at once on another exit without an attempt charged,
 * up to MAX_EXIT_RETRIES, then dead-letter as `exits-failing`. A block moves the request one
 * proxy tier up; blocked on the last of several tiers, it is dead-lettered as `blocked-all-tiers`.
 */
import type { Request } from '@crawlee/core';
import type { Logger } from 'pino';
import { deadLetterOutcome } from '../frontier/deadLetter.js';
import type { Outcomes } from '../store/outcomes.js';
import { failedRecord } from '../parse/pageRecords.js';
import type { RunEvents } from '../vocabulary/events.js';
import type { DeadLetterEntry } from '../vocabulary/failure.js';
import type { FrontierQueue } from '../vocabulary/queue.js';
import type { RequestData, Stage } from '../vocabulary/request.js';
import type { FailureHook } from './crawlerHooks.js';
import { classifyError } from './failures/failures.js';
import { NoExitAvailable, type ProxyRouting, TurnDeferred } from './egress/proxyRouting.js';
import type { RetryPolicy } from './failures/retryPolicy.js';

/** Uncharged retries of one request after exit faults, before it is given up on as `exits-failing`. */
export const MAX_EXIT_RETRIES = 10;
/** How long a request waits when no exit was available, for the breakers to let one through. */
const NO_EXIT_WAIT_MILLIS = 2000;

export interface FailureHandlerOptions {
    stage: Stage;
    /** The stage's queue: a request given up on is marked handled there. */
    queue: FrontierQueue;
    outcomes: Outcomes;
    retryPolicy: RetryPolicy;
    /** Told of every failed attempt and every retry. */
    events: RunEvents;
    log: Logger;
    /** Hears how each attempt's exit and session fared, and says how the request leaves next. */
    routing: ProxyRouting;
}

/** The stage's `onFailure` hook (crawlerHooks.ts). */
export function failureHook({
    stage,
    queue,
    outcomes,
    retryPolicy,
    events,
    log,
    routing,
}: FailureHandlerOptions): FailureHook {
    return async ({ request }, error, crawleeWouldRetry) => {
        const userData = request.userData as RequestData;
        if (error instanceof TurnDeferred) {
            // Nothing was sent: back to the queue, uncharged, for when the turn is nearer.
            request.retryCount -= 1;
            userData.retryAt = Date.now() + error.delayMs / 2;
            return;
        }
        const attempt = routing.attemptOf(request);
        const failure = classifyError(error, { viaProxy: attempt?.exit.proxyUrl !== undefined });
        // The session, the exit's breaker and the tier controller learn their share; a blocked session retires.
        routing.end(request, { ok: false, failure });
        if (attempt) events.emit('attemptFailed', { stage, request, url: request.url, error, failure });
        delete userData.session;
        if (failure.failureClass === 'exit' || error instanceof NoExitAvailable) {
            userData.exitRetries = (userData.exitRetries ?? 0) + 1;
            if (userData.exitRetries <= MAX_EXIT_RETRIES) {
                // Crawlee counts every failure as an attempt; the site saw none of this one.
                request.retryCount -= 1;
                const delayMs = error instanceof NoExitAvailable ? NO_EXIT_WAIT_MILLIS : 0;
                userData.retryAt = Date.now() + delayMs;
                events.emit('retryScheduled', {
                    stage,
                    url: request.url,
                    failure,
                    attempt: request.retryCount + 2,
                    delayMs,
                });
                log.debug(
                    { url: request.url, stage, reason: failure.reason },
                    `going out by another exit: ${failure.message}`,
                );
                return;
            }
        }
        let reason: string | undefined;
        if (failure.failureClass === 'blocked' && attempt && routing.tiered) {
            if (attempt.tier + 1 < routing.tiers.length) userData.tierFloor = attempt.tier + 1;
            else reason = 'blocked-all-tiers';
        }
        if (userData.exitRetries !== undefined && userData.exitRetries > MAX_EXIT_RETRIES) reason = 'exits-failing';
        const attempts = request.retryCount + 1;
        userData.firstFailedAt ??= new Date().toISOString();
        const decision =
            crawleeWouldRetry && reason === undefined
                ? retryPolicy.decide(failure, attempts)
                : ({ retry: false, reason: reason ?? failure.reason } as const);
        const context = {
            url: request.url,
            stage,
            class: failure.failureClass,
            reason: failure.reason,
            attempt: attempts,
        };
        if (decision.retry) {
            userData.retryAt = Date.now() + decision.delayMs;
            events.emit('retryScheduled', {
                stage,
                url: request.url,
                failure,
                attempt: attempts,
                delayMs: decision.delayMs,
            });
            // Counted, and summed up by reason every few seconds (monitor/retrySummary.ts): at a 1% failure
            // rate a large run would print thousands of these.
            log.debug(
                { ...context, retryInMs: decision.delayMs },
                `retrying in ${(decision.delayMs / 1000).toFixed(1)} s: ${failure.message}`,
            );
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
export function deadLetterStopped(
    request: Request,
    stage: Stage,
    { queue, outcomes }: { queue: FrontierQueue; outcomes: Outcomes },
): Promise<void> {
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
    const { redirectedFrom, known } = request.userData as RequestData;
    const outcome = deadLetterOutcome({
        url: request.url,
        label: request.label,
        ...(redirectedFrom ? { redirectedFrom } : {}),
        ...entry,
    });
    if (!known) return outcomes.settle(queue, request, outcome);
    const page = failedRecord(known, entry.status);
    return outcomes.settle(queue, request, {
        ...outcome,
        page,
        count: (stats) => {
            outcome.count?.(stats);
            if (page.kind === 'removed') stats.countChange(request.label ?? '(none)', 'removed', known.items);
        },
    });
}
