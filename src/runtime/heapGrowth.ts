/**
 * V8 heap settings for a crawling process. A crawl allocates fast and keeps little: every page is
 * fetched, parsed, stored and dropped, with many pages in flight, and much of a page's garbage is
 * still in flight at a young-generation collection, so it is promoted to the old generation. V8 lets
 * the old generation grow to 4x its live size before it collects it; a crawl's peak memory then
 * follows that garbage, not what the crawl keeps. At 1.5x the crawl keeps its pages per second at a
 * lower peak (the bench's cpu and latency suites, docs/benchmarks.md, show peak RSS beside pages/s).
 * The young generation is left at V8's default: larger ones were no faster and cost peak memory.
 * Set at run time: V8 reads the flag whenever it sizes the heap after a collection.
 */
import { setFlagsFromString } from 'node:v8';

/** The old generation may grow to (1 + percent/100) times its live size before it is collected. */
export const HEAP_GROWING_PERCENT = 50;

const FLAG = '--heap-growing-percent';

/** Applies HEAP_GROWING_PERCENT, unless the process was started with its own `--heap-growing-percent`. */
export function limitHeapGrowth(percent = HEAP_GROWING_PERCENT): void {
    if (process.execArgv.some((arg) => arg.startsWith(FLAG) || arg.startsWith('--heap_growing_percent'))) return;
    setFlagsFromString(`${FLAG}=${percent}`);
}
