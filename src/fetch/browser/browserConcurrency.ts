/**
 * How many pages the browser stage renders at once: what the machine holds, not a fixed number.
 * Crawlee's autoscaled pool then moves between `min` and `max` by its memory, CPU and event-loop
 * signals (memory against the run's budget, runtime/memoryBudget.ts, Chromium's processes included).
 *
 * - `max`: the fewer of `pagesPerCore` per core and what the memory budget holds at `pageMb` a
 *   page after `baseMb`; `--browser-concurrency` caps it further.
 * - `start`: `max`. The pool would otherwise start at one page and add one every 10 s: a 200-page
 *   render queue spent its first minute and a half below four pages (issue 21's profile).
 * - `min`: one page per core. A render waits on Chromium's processes as much as it computes, so
 *   a pool that Chromium keeps "CPU-overloaded" must not sink below what keeps the cores busy.
 */
import { availableParallelism, totalmem } from 'node:os';

export const BROWSER_CONCURRENCY_DEFAULTS = {
    /**
     * Pages per core. On 2 cores the all-script shop rendered 200 products at ~11-12/s with 3 pages
     * and with 4 (10-12/s with 6, ~10/s with 8), 3 taking ~60 MB less than 4: past a page and a half
     * per core, Chromium's processes only queue for the cores.
     */
    pagesPerCore: 1.5,
    /**
     * What an open page adds, Chromium's renderer and Node's
     * share (PSS; real-weight pages are heavier than the shop's).
     */
    pageMb: 150,
    /** Node and Chromium before their first page. */
    baseMb: 400,
    /** Crawlee's memory ceiling without a budget: a quarter of the machine's memory (its `availableMemoryRatio`). */
    machineMemoryShare: 0.25,
};

export interface BrowserPages {
    min: number;
    start: number;
    max: number;
}

export interface BrowserConcurrencyOptions {
    /** The most pages at once (`--browser-concurrency`). Default: what the machine holds. */
    limit?: number;
    /** The run's memory budget in MB (runtime/memoryBudget.ts). Default: a quarter of the machine's memory. */
    memoryMb?: number;
    /** Cores. Default: `os.availableParallelism()`. */
    cores?: number;
}

export function browserPages(options: BrowserConcurrencyOptions = {}): BrowserPages {
    const { pagesPerCore, pageMb, baseMb, machineMemoryShare } = BROWSER_CONCURRENCY_DEFAULTS;
    const cores = options.cores ?? availableParallelism();
    const memoryMb = options.memoryMb ?? (totalmem() / 2 ** 20) * machineMemoryShare;
    const byMemory = Math.floor((memoryMb - baseMb) / pageMb);
    const max = Math.max(1, Math.min(Math.round(cores * pagesPerCore), byMemory, options.limit ?? Infinity));
    return { min: Math.min(cores, max), start: max, max };
}
