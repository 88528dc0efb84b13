/**
 * When a failed request is tried again, and when it is given up on. The failure classifier
 * (failures.ts) says what a failure is; this says what to do about it.
 *
 * - Permanent and invalid failures are never retried.
 * - Transient and blocked failures are retried until `maxAttempts` fetches were made, each retry
 *   after an exponential backoff with full jitter: a delay drawn uniformly from
 *   [0, min(maxDelay, base × factor^(retry − 1))]. Full jitter spreads the retries of a burst of
 *   failures (a site hiccup fails many requests at once) over the whole window instead of sending
 *   them back together (see AWS's "Exponential Backoff And Jitter").
 * - A `Retry-After` from the site is a floor: the retry never comes sooner. One longer than
 *   `maxRetryAfter` is not waited out in this run: the request goes to dead-letter.
 */
import type { ClassifiedFailure } from '../../vocabulary/failure.js';

export interface RetryPolicyOptions {
    /** Fetches of one request, the first included, before it is dead-lettered. Default: 4. */
    maxAttempts?: number;
    /** Upper bound of the first retry's delay, in seconds. Default: 1. */
    baseDelaySecs?: number;
    /** How much the bound grows with each further retry. Default: 2. */
    factor?: number;
    /** The bound never grows past this, in seconds. Default: 60. */
    maxDelaySecs?: number;
    /** The longest `Retry-After` this run waits for, in seconds. Default: 600. */
    maxRetryAfterSecs?: number;
    /** Uniform in [0, 1); for tests. Default: Math.random. */
    random?: () => number;
}

export const RETRY_DEFAULTS = { maxAttempts: 4, baseDelaySecs: 1, factor: 2, maxDelaySecs: 60, maxRetryAfterSecs: 600 };

/** Retry in `delayMs`, or give up with the reason to record. */
export type RetryDecision = { retry: true; delayMs: number } | { retry: false; reason: string };

export class RetryPolicy {
    readonly maxAttempts: number;
    private readonly baseDelayMs: number;
    private readonly factor: number;
    private readonly maxDelayMs: number;
    private readonly maxRetryAfterMs: number;
    private readonly random: () => number;

    constructor(options: RetryPolicyOptions = {}) {
        this.maxAttempts = options.maxAttempts ?? RETRY_DEFAULTS.maxAttempts;
        this.baseDelayMs = (options.baseDelaySecs ?? RETRY_DEFAULTS.baseDelaySecs) * 1000;
        this.factor = options.factor ?? RETRY_DEFAULTS.factor;
        this.maxDelayMs = (options.maxDelaySecs ?? RETRY_DEFAULTS.maxDelaySecs) * 1000;
        this.maxRetryAfterMs = (options.maxRetryAfterSecs ?? RETRY_DEFAULTS.maxRetryAfterSecs) * 1000;
        this.random = options.random ?? Math.random;
        if (!(Number.isInteger(this.maxAttempts) && this.maxAttempts >= 1))
            throw new RangeError('maxAttempts must be a whole number >= 1');
        if (!(this.factor >= 1)) throw new RangeError('the backoff factor must be >= 1');
    }

    /** What to do after the `attempts`-th fetch of a request failed with `failure`. */
    decide(failure: ClassifiedFailure, attempts: number): RetryDecision {
        if (failure.failureClass === 'permanent' || failure.failureClass === 'invalid')
            return { retry: false, reason: failure.reason };
        if (attempts >= this.maxAttempts) return { retry: false, reason: failure.reason };
        const retryAfterMs = failure.retryAfterMs ?? 0;
        if (retryAfterMs > this.maxRetryAfterMs) return { retry: false, reason: 'retry-after-too-long' };
        return { retry: true, delayMs: Math.max(retryAfterMs, this.backoffMs(attempts)) };
    }

    /** The full-jitter delay before retry number `retry` (1 for the first). */
    backoffMs(retry: number): number {
        const bound = Math.min(this.maxDelayMs, this.baseDelayMs * this.factor ** (retry - 1));
        return Math.floor(this.random() * bound);
    }
}

/**
 * A `Retry-After` header as milliseconds from `now`: delay-seconds or an HTTP date. Undefined
 * when absent or unreadable; a date in the past is 0.
 */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
    const text = (Array.isArray(value) ? value[0] : value)?.trim();
    if (!text) return undefined;
    if (/^\d+$/.test(text)) return Number(text) * 1000;
    if (!/[a-z]/i.test(text)) return undefined; // Date.parse reads "-3" as a year
    const date = Date.parse(text);
    return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
