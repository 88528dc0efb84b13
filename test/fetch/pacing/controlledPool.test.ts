import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConcurrencyController } from '../../../src/fetch/pacing/concurrencyController.js';
import { applyPoolLimit, runAtControlledConcurrency } from '../../../src/fetch/pacing/controlledPool.js';

describe('applyPoolLimit', () => {
    it("moves the pool's maximum and desired concurrency to the limit", () => {
        const pool = { maxConcurrency: 60, desiredConcurrency: 60 };
        applyPoolLimit(pool, 45);
        assert.deepEqual(pool, { maxConcurrency: 45, desiredConcurrency: 45 });
        applyPoolLimit(pool, 46);
        assert.deepEqual(pool, { maxConcurrency: 46, desiredConcurrency: 46 });
    });

    it('keeps a desired concurrency Crawlee lowered for an overloaded machine, capped by the limit', () => {
        const pool = { maxConcurrency: 60, desiredConcurrency: 30 };
        applyPoolLimit(pool, 45);
        assert.deepEqual(pool, { maxConcurrency: 45, desiredConcurrency: 30 });
        applyPoolLimit(pool, 20);
        assert.deepEqual(pool, { maxConcurrency: 20, desiredConcurrency: 20 });
    });
});

describe('runAtControlledConcurrency', () => {
    it("keeps the crawler's pool at the controller's limit while it runs, and lets go after", async () => {
        const controller = new ConcurrencyController({ maxConcurrency: 20 });
        const refused = () => {
            const requests = Array.from({ length: 4 }, () => ({}));
            for (const request of requests) controller.started(request, 'http://a.test/');
            for (const request of requests) controller.responded(request, 429);
        };
        const pool = { maxConcurrency: 20, desiredConcurrency: 20 };
        const crawler: { autoscaledPool?: typeof pool; run(): Promise<void> } = {
            async run() {
                this.autoscaledPool = pool; // Crawlee creates the pool when the run starts
                refused();
            },
        };
        await runAtControlledConcurrency(crawler, controller);
        assert.deepEqual(pool, { maxConcurrency: 15, desiredConcurrency: 15 });
        refused();
        assert.equal(controller.poolLimit(), 11);
        assert.deepEqual(pool, { maxConcurrency: 15, desiredConcurrency: 15 }, 'not driven once the run is over');
    });
});
