import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { ClassifiedFailure } from '../../../src/vocabulary/failure.js';
import { parseRetryAfter, RetryPolicy } from '../../../src/fetch/failures/retryPolicy.js';

const transient: ClassifiedFailure = {
    failureClass: 'transient',
    reason: 'http-503',
    status: 503,
    message: 'HTTP 503',
};

describe('RetryPolicy', () => {
    it('draws each delay uniformly between 0 and the exponential bound (full jitter)', () => {
        const top = new RetryPolicy({ baseDelaySecs: 1, factor: 2, maxDelaySecs: 60, random: () => 0.999999 });
        assert.deepEqual(
            [1, 2, 3, 4].map((retry) => top.backoffMs(retry)),
            [999, 1999, 3999, 7999],
        );
        const bottom = new RetryPolicy({ random: () => 0 });
        assert.equal(bottom.backoffMs(5), 0);

        const sampled = new RetryPolicy({ baseDelaySecs: 1, factor: 2, maxDelaySecs: 60 });
        const delays = Array.from({ length: 2000 }, () => sampled.backoffMs(3));
        assert.ok(delays.every((delay) => delay >= 0 && delay < 4000));
        const mean = delays.reduce((sum, delay) => sum + delay, 0) / delays.length;
        assert.ok(mean > 1700 && mean < 2300, `mean of uniform [0, 4000) is about 2000, got ${mean}`);
    });

    it('caps the bound at maxDelay', () => {
        const policy = new RetryPolicy({ baseDelaySecs: 1, factor: 10, maxDelaySecs: 5, random: () => 0.999999 });
        assert.equal(policy.backoffMs(4), 4999);
    });

    it(`retries transient and blocked failures until maxAttempts \
fetches were made, then gives up with the reason`, () => {
        const policy = new RetryPolicy({ maxAttempts: 3 });
        assert.equal(policy.decide(transient, 1).retry, true);
        assert.equal(policy.decide({ ...transient, failureClass: 'blocked', reason: 'http-403' }, 2).retry, true);
        assert.deepEqual(policy.decide(transient, 3), { retry: false, reason: 'http-503' });
    });

    it('never retries permanent or invalid failures', () => {
        const policy = new RetryPolicy({ maxAttempts: 10 });
        assert.deepEqual(policy.decide({ failureClass: 'permanent', reason: 'http-404', message: '' }, 1), {
            retry: false,
            reason: 'http-404',
        });
        assert.equal(policy.decide({ failureClass: 'invalid', reason: 'schema', message: '' }, 1).retry, false);
    });

    it('waits at least the Retry-After, and gives up on one longer than maxRetryAfter', () => {
        const policy = new RetryPolicy({ baseDelaySecs: 1, maxRetryAfterSecs: 60, random: () => 0.5 });
        assert.deepEqual(policy.decide({ ...transient, retryAfterMs: 2000 }, 1), { retry: true, delayMs: 2000 });
        // The backoff wins when it is longer than the site asked for.
        assert.deepEqual(policy.decide({ ...transient, retryAfterMs: 100 }, 1), { retry: true, delayMs: 500 });
        assert.deepEqual(policy.decide({ ...transient, retryAfterMs: 61_000 }, 1), {
            retry: false,
            reason: 'retry-after-too-long',
        });
    });

    it('rejects options that make no sense', () => {
        assert.throws(() => new RetryPolicy({ maxAttempts: 0 }), RangeError);
        assert.throws(() => new RetryPolicy({ factor: 0.5 }), RangeError);
    });
});

describe('parseRetryAfter', () => {
    it('reads delay-seconds and HTTP dates', () => {
        const now = Date.parse('2026-11-30T10:00:00Z');
        assert.equal(parseRetryAfter('2', now), 2000);
        assert.equal(parseRetryAfter(' 120 ', now), 120_000);
        assert.equal(parseRetryAfter('Mon, 30 Nov 2026 10:00:30 GMT', now), 30_000);
        assert.equal(parseRetryAfter('Mon, 30 Nov 2026 09:00:00 GMT', now), 0);
        assert.equal(parseRetryAfter(['5', '7'], now), 5000);
    });

    it('is undefined when absent or unreadable', () => {
        assert.equal(parseRetryAfter(undefined), undefined);
        assert.equal(parseRetryAfter(''), undefined);
        assert.equal(parseRetryAfter('soon'), undefined);
        assert.equal(parseRetryAfter('-3'), undefined);
    });
});
