import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LiveStatus, RunningStages, type Load } from '../../src/monitor/live.js';
import { RunStats } from '../../src/monitor/stats.js';

/** A clock the test moves by hand, in seconds after the run started. */
function clockOf(stats: RunStats) {
    let seconds = 0;
    return {
        now: () => stats.startedAt.getTime() + seconds * 1000,
        set: (to: number) => {
            seconds = to;
        },
    };
}

const idle: Load = { http: { inFlight: 0, concurrencyLimit: 0 }, browser: { inFlight: 0, concurrencyLimit: 0 } };

describe('LiveStatus', () => {
    it('measures pages per second over the recent window, not since the start', () => {
        const stats = new RunStats();
        const clock = clockOf(stats);
        const live = new LiveStatus({ stats, rateWindowMs: 5000, now: clock.now });
        stats.admitted = 1000;

        clock.set(5);
        stats.succeeded = 100;
        assert.equal(live.snapshot().pagesPerSec, 20);
        clock.set(10);
        stats.succeeded = 200;
        assert.equal(live.snapshot().pagesPerSec, 20);
        // A stall shows at once: nothing finished in the last window.
        clock.set(15);
        assert.equal(live.snapshot().pagesPerSec, 0);
        assert.equal(live.snapshot().etaSec, null);
        clock.set(20);
        stats.succeeded = 250;
        assert.equal(live.snapshot().pagesPerSec, 10);
    });

    it('keeps its baseline a window back however often it is read', () => {
        const stats = new RunStats();
        const clock = clockOf(stats);
        const live = new LiveStatus({ stats, rateWindowMs: 10_000, now: clock.now });
        for (let second = 1; second <= 30; second += 1) {
            clock.set(second);
            stats.succeeded = second * 4;
            live.snapshot();
        }
        clock.set(30.5);
        stats.succeeded = 122;
        // Baseline: second 20 (80 pages); 42 pages in 10.5 s.
        assert.equal(live.snapshot().pagesPerSec, 4);
    });

    it('estimates the time to drain the frontier at that rate', () => {
        const stats = new RunStats();
        const clock = clockOf(stats);
        const live = new LiveStatus({
            stats,
            load: () => ({ ...idle, http: { inFlight: 10, concurrencyLimit: 10 } }),
            now: clock.now,
        });
        stats.admitted = 600;
        stats.succeeded = 90;
        stats.deadLettered = 10;
        clock.set(10);
        const snapshot = live.snapshot();
        assert.equal(snapshot.pagesPerSec, 10);
        assert.equal(snapshot.inFlight, 10);
        // 500 unfinished, 10 of them in flight.
        assert.equal(snapshot.queued, 490);
        assert.equal(snapshot.etaSec, 50);
        assert.equal(snapshot.elapsedSec, 10);

        stats.succeeded = 590;
        clock.set(20);
        assert.equal(live.snapshot().etaSec, 0);
    });

    it('gives the invalid share of records and leaves in-flight out without a load source', () => {
        const stats = new RunStats();
        const live = new LiveStatus({ stats });
        assert.equal(live.snapshot().invalidShare, 0);
        assert.equal(live.snapshot().inFlight, null);
        stats.itemsStored = 97;
        stats.itemsInvalid = 3;
        assert.equal(live.snapshot().invalidShare, 0.03);
    });
});

describe('RunningStages', () => {
    it('reads the load of the running crawlers and zero for the others', () => {
        const stages = new RunningStages();
        assert.deepEqual(stages.load(), idle);
        const http = stages.watch('http', {
            running: true,
            autoscaledPool: { currentConcurrency: 3, desiredConcurrency: 8 },
        });
        stages.watch('browser', { running: false, autoscaledPool: { currentConcurrency: 2, desiredConcurrency: 4 } });
        assert.deepEqual(stages.load(), {
            http: { inFlight: 3, concurrencyLimit: 8 },
            browser: { inFlight: 0, concurrencyLimit: 0 },
        });
        assert.equal(http.autoscaledPool?.currentConcurrency, 3);
    });
});
