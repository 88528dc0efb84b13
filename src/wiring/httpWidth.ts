/**
 * How wide the HTTP stage runs: the user's `--max-concurrency` as a ceiling, or a width the
 * concurrency controller finds (fetch/pacing/concurrencyController.ts), and a fleet worker's job
 * queue kept a little ahead of whatever width that is.
 */
import type { ConcurrencyController, ConcurrencyControllerOptions } from '../fetch/pacing/concurrencyController.js';
import { MachineRoom } from '../fetch/pacing/machineRoom.js';
import { JobQueue } from '../frontier/redis/jobQueue.js';
import { CRAWL_DEFAULTS, type RunOptions } from '../options/crawlOptions.js';
import { memoryBudgetMb } from '../runtime/memoryBudget.js';

/** Jobs a fleet's worker takes ahead of its HTTP slots, so a slot that frees finds its next page waiting. */
export const HTTP_JOBS_AHEAD = 2;

/**
 * The HTTP stage's width: the user's `maxConcurrency` as its ceiling, where it starts; without one,
 * a width found from `foundConcurrency.start` up to its ceiling while the machine has room (with
 * adaptive concurrency off, fixed at the start). The site's own `maxConcurrency` caps either.
 */
export function httpWidth(
    options: Pick<RunOptions, 'maxConcurrency' | 'memoryMb'>,
    siteMax: number | undefined,
    adaptive: boolean,
): Pick<ConcurrencyControllerOptions, 'maxConcurrency' | 'startConcurrency' | 'machineShortage'> {
    const { start, ceiling } = CRAWL_DEFAULTS.foundConcurrency;
    const capped = (width: number) => Math.min(width, siteMax ?? width);
    if (options.maxConcurrency !== undefined || !adaptive)
        return { maxConcurrency: capped(options.maxConcurrency ?? start) };
    const room = new MachineRoom({ memoryMb: memoryBudgetMb(options.memoryMb) });
    return {
        maxConcurrency: capped(ceiling),
        startConcurrency: capped(start),
        machineShortage: () => room.shortage(),
    };
}

/** The first width, before the controller moves it: what a fleet worker's job queue starts ahead of. */
export function startingWidth(options: Pick<RunOptions, 'maxConcurrency'>): number {
    return options.maxConcurrency ?? CRAWL_DEFAULTS.foundConcurrency.start;
}

/** Keeps a fleet worker's HTTP job queue `HTTP_JOBS_AHEAD` jobs ahead of the pool's limit as it moves. */
export function followPoolLimit(queue: unknown, concurrency: ConcurrencyController): void {
    if (queue instanceof JobQueue) concurrency.onPoolLimit((limit) => queue.setPrefetch(limit + HTTP_JOBS_AHEAD));
}
