import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { RunStats } from '../../src/monitor/stats.js';
import { Timeline } from '../../src/monitor/timeline.js';

/** The time `seconds` after the run started, so tests do not depend on the clock. */
const at = (stats: RunStats, seconds: number) => new Date(stats.startedAt.getTime() + seconds * 1000);

describe('Timeline', () => {
    it('copies the cumulative counters at each sample', () => {
        const stats = new RunStats();
        const timeline = new Timeline(stats);
        timeline.sample(at(stats, 0));

        stats.admitted = 10;
        stats.succeeded = 4;
        stats.deadLettered = 1;
        stats.itemsStored = 3;
        stats.itemsInvalid = 1;
        stats.errorsByClass.transient = 2;
        stats.escalations = 1;
        stats.browserRendered = 1;
        stats.route('product').itemsStored = 3;
        stats.route('product').itemsInvalid = 1;
        stats.countFailingFields('product', ['price', 'price', 'title']);
        timeline.sample(at(stats, 1.5));

        stats.succeeded = 9;
        stats.errorsByClass.blocked = 1;
        stats.countFailingFields('product', ['price']);
        timeline.sample(at(stats, 3));

        const [first, second, third] = timeline.points;
        assert.equal(timeline.points.length, 3);
        assert.deepEqual(
            { t: first!.t, pages: first!.pages, queued: first!.queued, routes: first!.routes },
            { t: 0, pages: 0, queued: 0, routes: {} },
        );
        assert.deepEqual(second, {
            t: 1.5,
            pages: 5,
            itemsStored: 3,
            itemsInvalid: 1,
            errors: { transient: 2, blocked: 0, permanent: 0, invalid: 0, exit: 0 },
            escalations: 1,
            browserRendered: 1,
            deadLettered: 1,
            queued: 5,
            routes: { product: { valid: 3, invalid: 1, failingFields: { price: 2, title: 1 } } },
            gauges: {},
        });
        assert.equal(third!.pages, 10);
        assert.equal(third!.queued, 0);
        assert.deepEqual(third!.errors, { transient: 2, blocked: 1, permanent: 0, invalid: 0, exit: 0 });
        assert.deepEqual(third!.routes.product!.failingFields, { price: 3, title: 1 });
        assert.deepEqual(
            second!.routes.product!.failingFields,
            { price: 2, title: 1 },
            'earlier points are copies, not live views',
        );
    });

    it('records whatever the gauges callback returns, dropping values that are not finite numbers', () => {
        const stats = new RunStats();
        let inFlight = 3;
        const timeline = new Timeline(stats, { gauges: () => ({ inFlight, concurrency: 8, broken: Number.NaN }) });
        timeline.sample(at(stats, 0));
        inFlight = 7;
        timeline.sample(at(stats, 1));
        assert.deepEqual(
            timeline.points.map((point) => point.gauges),
            [
                { inFlight: 3, concurrency: 8 },
                { inFlight: 7, concurrency: 8 },
            ],
        );
    });

    it('samples on its timer between start() and stop(), ending with the final counters', async () => {
        const stats = new RunStats();
        const timeline = new Timeline(stats, { intervalMs: 20 });
        timeline.start();
        for (let step = 0; step < 6; step += 1) {
            stats.admitted += 2;
            stats.succeeded += 1;
            await sleep(20);
        }
        stats.succeeded += 6;
        timeline.stop();
        const points = timeline.points;
        assert.ok(points.length >= 4, `${points.length} points`);
        assert.equal(points[0]!.pages, 0, 'first sample at start()');
        assert.equal(points[points.length - 1]!.pages, 12, 'last sample at stop()');
        for (let index = 1; index < points.length; index += 1) {
            assert.ok(points[index]!.t >= points[index - 1]!.t, 'time never goes back');
            assert.ok(points[index]!.pages >= points[index - 1]!.pages, 'cumulative never goes back');
        }
        const count = points.length;
        await sleep(60);
        assert.equal(timeline.points.length, count, 'no samples after stop()');
    });

    it('keeps at most maxPoints on a long run, evenly spaced, with exact counters and mean gauges', () => {
        const stats = new RunStats();
        let gauge = 0;
        const timeline = new Timeline(stats, { maxPoints: 100, gauges: () => ({ constant: 5, ramp: gauge }) });
        for (let second = 0; second < 10_000; second += 1) {
            gauge = second;
            timeline.sample(at(stats, second));
            stats.admitted += 3;
            stats.succeeded += 2;
            stats.errorsByClass.transient += second % 7 === 0 ? 1 : 0;
            assert.ok(timeline.points.length <= 100, `at ${second}: ${timeline.points.length} points`);
        }
        const points = timeline.points;
        assert.ok(points.length >= 50, `a halving keeps half: ${points.length} points`);

        const last = points[points.length - 1]!;
        assert.equal(last.t, 9_999, 'the newest sample is always there');
        assert.equal(last.pages, 2 * 9_999, 'counters are the latest values, not sums or means');
        assert.equal(last.errors.transient, Math.ceil(9_999 / 7));

        const gaps = points.slice(1).map((point, index) => point.t - points[index]!.t);
        const full = gaps.slice(0, -1);
        assert.ok(
            full.every((gap) => gap === full[0]),
            `evenly spaced: ${[...new Set(full)].join(', ')}`,
        );
        assert.ok(
            points.every((point) => point.gauges.constant === 5),
            'a constant gauge stays constant',
        );
        // A merged point stands for the samples up to its time: the ramp's mean over them is below its time.
        const merged = points[10]!;
        const width = full[0]!;
        assert.equal(merged.gauges.ramp, merged.t - (width - 1) / 2);
    });
});
