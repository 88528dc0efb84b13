/**
 * Drives Crawlee's autoscaled pool from the concurrency controller. Both of the pool's limits
 * can be set while it runs (node_modules/@crawlee/core/autoscaling/autoscaled_pool.js): the
 * controller's limit becomes the pool's maximum, so nothing in Crawlee takes it above, and its
 * desired concurrency, so the pool runs at it.
 */
import type { ConcurrencyController } from './concurrencyController.js';

/** The part of Crawlee's AutoscaledPool the controller drives; both are settable while it runs. */
export interface ConcurrencyPool {
    maxConcurrency: number;
    desiredConcurrency: number;
}

/**
 * Puts a running pool at `limit`. The pool's maximum becomes the limit, so Crawlee's own
 * autoscaling (which creeps the desired concurrency up toward the maximum while the machine is
 * idle) cannot take it above. Its desired concurrency follows the limit, unless Crawlee had
 * lowered it because this machine is overloaded: then it stays as low as it was.
 */
export function applyPoolLimit(pool: ConcurrencyPool, limit: number): void {
    const heldBackByCrawlee = pool.desiredConcurrency < pool.maxConcurrency;
    pool.maxConcurrency = limit;
    pool.desiredConcurrency = heldBackByCrawlee ? Math.max(1, Math.min(pool.desiredConcurrency, limit)) : limit;
}

/**
 * Runs a crawler with its pool kept at the controller's pool limit while the run lasts (the pool
 * exists only then); without a controller, just runs it.
 */
export async function runAtControlledConcurrency(
    crawler: { run(): Promise<unknown>; autoscaledPool?: ConcurrencyPool },
    controller: ConcurrencyController | undefined,
): Promise<void> {
    const stop = controller?.onPoolLimit((limit) => {
        if (crawler.autoscaledPool) applyPoolLimit(crawler.autoscaledPool, limit);
    });
    try {
        await crawler.run();
    } finally {
        stop?.();
    }
}
