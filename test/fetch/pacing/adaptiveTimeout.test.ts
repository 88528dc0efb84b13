import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { AdaptiveTimeout } from '../../../src/fetch/pacing/adaptiveTimeout.js';

const A = 'http://a.test/page';
const B = 'http://b.test/page';

/** An AdaptiveTimeout with a 30 s request timeout. */
function timeoutAt(options: { factor?: number; minSecs?: number } = {}) {
    return { timeouts: new AdaptiveTimeout(30_000, options) };
}

/** `count` fetches of `url` answered after `ms` each. */
function answer(timeouts: AdaptiveTimeout, url: string, ms: number, count: number): void {
    for (let i = 0; i < count; i++) timeouts.responded(url, ms);
}

describe('AdaptiveTimeout', () => {
    it('gives the full timeout until the domain has answered 20 times', () => {
        const { timeouts } = timeoutAt({ minSecs: 0.1 });
        answer(timeouts, A, 100, 19);
        assert.equal(timeouts.timeoutFor(A, 1), 30_000);
        answer(timeouts, A, 100, 1);
        assert.equal(timeouts.timeoutFor(A, 1), 500, '5 x the p99 of 100 ms');
    });

    it(`follows the slow tail (p99), not the median, and never \
goes under the minimum or over the request timeout`, () => {
        const { timeouts } = timeoutAt({ minSecs: 0.1 });
        answer(timeouts, A, 100, 180);
        answer(timeouts, A, 400, 20); // the slowest 10%
        assert.equal(timeouts.timeoutFor(A, 1), 2000);

        const floor = timeoutAt(); // default minimum: 0.5 s
        answer(floor.timeouts, A, 10, 50);
        assert.equal(floor.timeouts.timeoutFor(A, 1), 500);

        const ceiling = timeoutAt();
        answer(ceiling.timeouts, A, 7000, 50);
        assert.equal(ceiling.timeouts.timeoutFor(A, 1), 30_000);
    });

    it("learns each wire profile of a domain apart: chrome's slower answers neither stretch fast's timeout nor are cut by it", () => {
        const { timeouts } = timeoutAt({ minSecs: 0.1 });
        answer(timeouts, A, 20, 50);
        assert.equal(timeouts.timeoutFor(A, 1, 'chrome'), 30_000, 'chrome has no times of its own yet');
        for (let i = 0; i < 50; i++) timeouts.responded(A, 400, 'chrome');
        assert.deepEqual([timeouts.timeoutFor(A, 1), timeouts.timeoutFor(A, 1, 'chrome')], [100, 2000]);
    });

    it('gives retries the full timeout, and keeps domains apart', () => {
        const { timeouts } = timeoutAt();
        answer(timeouts, A, 200, 50);
        assert.equal(timeouts.timeoutFor(A, 1), 1000);
        assert.equal(timeouts.timeoutFor(A, 2), 30_000);
        assert.equal(timeouts.timeoutFor(B, 1), 30_000);
    });

    it('learns from recent answers only: a site that slows down gets longer timeouts', () => {
        const { timeouts } = timeoutAt({ minSecs: 0.1 });
        answer(timeouts, A, 100, 200);
        assert.equal(timeouts.timeoutFor(A, 1), 500);
        answer(timeouts, A, 300, 200);
        assert.equal(timeouts.timeoutFor(A, 1), 1500);
    });
});
