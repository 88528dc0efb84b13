import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyError, FetchFailure } from '../../../src/fetch/failures/failures.js';
import {
    ConcurrencyController,
    type ConcurrencyControllerOptions,
} from '../../../src/fetch/pacing/concurrencyController.js';
import type { Outcome } from '../../../src/fetch/pacing/domainState.js';

const A = 'http://a.test/page';
const B = 'http://b.test/page';

/** A controller on a clock the test moves by hand. */
function controllerAt(options: Partial<ConcurrencyControllerOptions> = {}) {
    const clock = { now: 1_000_000 };
    const controller = new ConcurrencyController({ maxConcurrency: 20, now: () => clock.now, ...options });
    return { controller, clock };
}

/**
 * `outcomes.length` fetches of `url` in flight at once, then finishing in order with those
 * outcomes: as a saturated pool would send them.
 */
function burst(controller: ConcurrencyController, url: string, outcomes: Outcome[]): void {
    const requests = outcomes.map(() => ({}));
    for (const request of requests) controller.started(request, url);
    for (const [index, outcome] of outcomes.entries()) controller.finished(requests[index]!, outcome);
}

/** Like `burst`, with each fetch taking `latencyMs` on the test's clock. */
function timedBurst(
    controller: ConcurrencyController,
    clock: { now: number },
    url: string,
    outcomes: Outcome[],
    latencyMs: number,
): void {
    const requests = outcomes.map(() => ({}));
    for (const request of requests) controller.started(request, url);
    clock.now += latencyMs;
    for (const [index, outcome] of outcomes.entries()) controller.finished(requests[index]!, outcome);
}

const oks = (count: number): Outcome[] => Array<Outcome>(count).fill('ok');
const mixed = (errors: number, total: number, outcome: Outcome = 'transient'): Outcome[] => [
    ...oks(total - errors),
    ...Array<Outcome>(errors).fill(outcome),
];

describe('concurrency controller', () => {
    it('starts every domain at the maximum', () => {
        const { controller } = controllerAt();
        assert.equal(controller.limit('a.test'), 20);
        assert.equal(controller.poolLimit(), 20);
    });

    it('lowers the limit by the factor when the error rate climbs over the high threshold', () => {
        const { controller } = controllerAt();
        burst(controller, A, [...oks(40), 'transient', 'transient', 'transient', 'transient', 'transient']);
        assert.equal(controller.limit('a.test'), 15);
        const [decision] = controller.decisions();
        assert.deepEqual(
            {
                domain: decision!.domain,
                from: decision!.from,
                to: decision!.to,
                errorRate: decision!.errorRate,
                samples: decision!.samples,
            },
            { domain: 'a.test', from: 20, to: 15, errorRate: 0.1111, samples: 45 },
        );
    });

    it(`lowers at once when the errors alone already put the window \
over the threshold, without waiting for more outcomes`, () => {
        const { controller } = controllerAt();
        burst(controller, A, ['transient', 'transient', 'transient', 'transient']);
        assert.equal(controller.limit('a.test'), 15);
        assert.equal(controller.decisions()[0]!.samples, 4);

        const borderline = controllerAt().controller;
        burst(borderline, A, mixed(2, 20)); // 10%: not above the threshold
        assert.equal(borderline.limit('a.test'), 20);
    });

    it('does not lower for a count of errors that chance gives a site failing a few percent at random', () => {
        // 3 of 20 is over 10%, but 1 in 13 windows of 20 has 3 errors when 5% of fetches fail at random.
        const { controller } = controllerAt();
        burst(controller, A, mixed(3, 20));
        assert.equal(controller.limit('a.test'), 20);
        burst(controller, A, mixed(4, 20)); // 7 of 40
        assert.equal(controller.limit('a.test'), 15);
    });

    it('treats blocks like errors, and permanent failures as answers', () => {
        const blocked = controllerAt().controller;
        burst(blocked, A, mixed(3, 20, 'blocked'));
        assert.equal(blocked.limit('a.test'), 15);
        assert.equal(blocked.decisions()[0]!.blockRate, 0.15);

        const notFound = controllerAt().controller;
        burst(notFound, A, mixed(10, 20, 'permanent'));
        assert.equal(notFound.limit('a.test'), 20);
    });

    it('raises the limit by the step after a clean interval in which the limit was used', () => {
        const { controller, clock } = controllerAt();
        burst(controller, A, mixed(5, 20));
        assert.equal(controller.limit('a.test'), 15);
        clock.now += 1000;
        burst(controller, A, oks(20));
        assert.equal(controller.limit('a.test'), 16);
        clock.now += 1000;
        burst(controller, A, oks(20));
        assert.equal(controller.limit('a.test'), 17);
        assert.deepEqual(
            controller.decisions().map((d) => [d.from, d.to]),
            [
                [20, 15],
                [15, 16],
                [16, 17],
            ],
        );
    });

    it('does not raise before the interval is over, nor on a window with too few outcomes', () => {
        const { controller, clock } = controllerAt();
        burst(controller, A, mixed(5, 20));
        clock.now += 500;
        burst(controller, A, oks(20));
        assert.equal(controller.limit('a.test'), 15, 'half an interval');
        const few = controllerAt();
        burst(few.controller, A, mixed(5, 20));
        few.clock.now += 5000;
        burst(few.controller, A, oks(12));
        assert.equal(few.controller.limit('a.test'), 15, 'fewer than minSamples');
        burst(few.controller, A, oks(12));
        assert.equal(few.controller.limit('a.test'), 16, 'the window went on until it had enough');
    });

    it('does not raise a limit that was not used', () => {
        const { controller, clock } = controllerAt();
        burst(controller, A, mixed(5, 20));
        clock.now += 1000;
        for (let i = 0; i < 30; i++) burst(controller, A, oks(2)); // never more than 2 in flight
        assert.equal(controller.limit('a.test'), 15);
    });

    it('does not raise while responses are much slower than the lowest recent ones', () => {
        const { controller, clock } = controllerAt();
        burst(controller, A, mixed(20, 20));
        clock.now += 1000;
        timedBurst(controller, clock, A, oks(20), 100);
        assert.equal(controller.limit('a.test'), 16);
        clock.now += 1000;
        timedBurst(controller, clock, A, oks(20), 300); // three times the 100 ms baseline: queueing
        assert.equal(controller.limit('a.test'), 16);
        clock.now += 1000;
        timedBurst(controller, clock, A, oks(20), 150);
        assert.equal(controller.limit('a.test'), 17);
        assert.deepEqual(
            controller.decisions().map((d) => d.latencyMs),
            [null, 100, 150],
        );
    });

    it('holds the limit while the error rate is between the thresholds', () => {
        const { controller, clock } = controllerAt();
        burst(controller, A, mixed(5, 20));
        clock.now += 1000;
        burst(controller, A, mixed(1, 20)); // 5%
        assert.equal(controller.limit('a.test'), 15);
        assert.equal(controller.decisions().length, 1);
    });

    it('judges a new limit only by fetches started under it', () => {
        const { controller } = controllerAt();
        const old = Array.from({ length: 20 }, () => ({}));
        for (const request of old) controller.started(request, A);
        // The first 20 outcomes lower the limit; the other in-flight fetches were sent under the old one.
        burst(controller, A, mixed(5, 20));
        for (const request of old) controller.finished(request, 'transient');
        assert.equal(controller.limit('a.test'), 15);
    });

    it('stays within [min, max]', () => {
        const { controller, clock } = controllerAt({ maxConcurrency: 4, minConcurrency: 2 });
        for (let i = 0; i < 5; i++) burst(controller, A, mixed(20, 20));
        assert.equal(controller.limit('a.test'), 2);
        for (let i = 0; i < 10; i++) {
            clock.now += 1000;
            burst(controller, A, oks(20));
        }
        assert.equal(controller.limit('a.test'), 4);
        assert.deepEqual(controller.byDomain()['a.test'], {
            limit: 4,
            increases: 2,
            decreases: 2,
            lowest: 2,
            highest: 4,
            heldBack: { latency: 0, cpu: 0, memory: 0 },
        });
    });

    it('keeps domains apart; the pool gets the most constrained active one', () => {
        const { controller, clock } = controllerAt();
        burst(controller, A, mixed(20, 20));
        burst(controller, B, oks(20));
        assert.equal(controller.limit('a.test'), 15);
        assert.equal(controller.limit('b.test'), 20);
        assert.equal(controller.poolLimit(), 15);
        // a.test has not been fetched from for a while: it no longer holds the pool down.
        clock.now += 5000;
        burst(controller, B, oks(20));
        assert.equal(controller.poolLimit(), 20);
    });

    it('tells listeners when the pool limit changes', () => {
        const { controller } = controllerAt();
        const heard: number[] = [];
        const stop = controller.onPoolLimit((limit) => heard.push(limit));
        burst(controller, A, mixed(20, 20));
        burst(controller, A, mixed(20, 20));
        stop();
        burst(controller, A, mixed(20, 20));
        assert.deepEqual(heard, [15, 11]);
    });

    it('keeps a bounded list of decisions', () => {
        const { controller, clock } = controllerAt({ maxDecisions: 3, maxConcurrency: 100 });
        for (let i = 0; i < 5; i++) burst(controller, A, mixed(20, 20));
        for (let i = 0; i < 3; i++) {
            clock.now += 1000;
            burst(controller, A, oks(40));
        }
        const decisions = controller.decisions();
        assert.equal(decisions.length, 3);
        assert.deepEqual(
            decisions.map((d) => d.to),
            [24, 25, 26],
        );
        assert.equal(controller.byDomain()['a.test']!.decreases, 5);
    });

    it('judges responses and errors with the failure classifier, each attempt once', () => {
        const { controller } = controllerAt();
        const requests = Array.from({ length: 20 }, () => ({}));
        for (const request of requests) controller.started(request, A);
        for (const request of requests.slice(0, 15)) controller.responded(request, 200);
        controller.responded(requests[15]!, 404); // an answer, not a sign of load
        controller.responded(requests[16]!, 429);
        controller.responded(requests[17]!, 503);
        // Thrown after the response was judged (as rejectRequest does): not counted again.
        controller.failed(requests[17]!, classifyError(new FetchFailure('transient', 'HTTP 503', 503)).failureClass);
        assert.equal(controller.limit('a.test'), 20, 'two errors in a window of 20: not yet over 10%');
        controller.failed(
            requests[18]!,
            classifyError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })).failureClass,
        );
        controller.failed(
            requests[19]!,
            classifyError(Object.assign(new Error('Timeout awaiting request'), { code: 'ETIMEDOUT' })).failureClass,
        );
        assert.equal(controller.limit('a.test'), 15);
        assert.deepEqual(
            { samples: controller.decisions()[0]!.samples, errorRate: controller.decisions()[0]!.errorRate },
            { samples: 20, errorRate: 0.2 },
        );
    });

    /**
     * `windows` one-second windows in each of which the pool sends twice as many fetches as the
     * limit allows, each failing with the chance `failureRate(limit)` gives; returns the mean limit.
     */
    function simulate(
        controller: ConcurrencyController,
        clock: { now: number },
        windows: number,
        failureRate: (limit: number) => number,
    ): number {
        let seed = 7;
        const random = () => {
            seed = (seed * 48271) % 2147483647;
            return seed / 2147483647;
        };
        let sum = 0;
        for (let w = 0; w < windows; w++) {
            const limit = controller.limit('a.test');
            sum += limit;
            clock.now += 1000;
            burst(
                controller,
                A,
                Array.from({ length: limit * 2 }, (): Outcome => (random() < failureRate(limit) ? 'transient' : 'ok')),
            );
        }
        return sum / windows;
    }

    it('learns that failures which do not fall with the load are ambient, and stays near the maximum', () => {
        const { controller, clock } = controllerAt({ maxConcurrency: 40 });
        const mean = simulate(controller, clock, 300, () => 0.05);
        assert.ok(mean >= 38, `mean limit ${mean} of 40 with 5% of fetches failing whatever the load`);
        assert.ok(controller.limit('a.test') >= 30);
    });

    it('still cuts, and keeps the cut, when failures come from load: they fall below the ceiling', () => {
        // The site refuses what is over its ceiling at once; the first cut from 40 may land just above it.
        for (const ceiling of [24, 28]) {
            const { controller, clock } = controllerAt({ maxConcurrency: 40 });
            const mean = simulate(controller, clock, 300, (limit) => Math.max(0, (limit - ceiling) / limit));
            assert.ok(mean <= ceiling + 2 && mean >= ceiling * 0.6, `mean limit ${mean} under a ceiling of ${ceiling}`);
            assert.ok(controller.limit('a.test') <= ceiling + 2);
        }
    });

    it('undoes a cut made before there was an error rate to compare with, and learns nothing from it', () => {
        const { controller, clock } = controllerAt({ maxConcurrency: 40 });
        burst(controller, A, mixed(4, 20)); // the run's first window
        assert.equal(controller.limit('a.test'), 30);
        // 100 fetches started after the cut fail 5%: there is no rate from before the cut to say whether it helped.
        for (let i = 0; i < 5; i++) {
            clock.now += 1000;
            burst(controller, A, mixed(1, 20));
        }
        assert.equal(controller.limit('a.test'), 40);
        // No ambient rate was learned: 20% errors in the next window cut again at once.
        burst(controller, A, mixed(4, 20));
        assert.equal(controller.limit('a.test'), 30);
    });

    it('rejects options out of range', () => {
        assert.throws(() => new ConcurrencyController({ maxConcurrency: 0 }), RangeError);
        assert.throws(() => new ConcurrencyController({ maxConcurrency: 5, minConcurrency: 6 }), RangeError);
        assert.throws(() => new ConcurrencyController({ maxConcurrency: 5, decreaseFactor: 1 }), RangeError);
        assert.throws(
            () => new ConcurrencyController({ maxConcurrency: 5, lowThreshold: 0.5, highThreshold: 0.1 }),
            RangeError,
        );
        assert.throws(() => new ConcurrencyController({ maxConcurrency: 5, latencyTolerance: 0.5 }), RangeError);
    });
});
