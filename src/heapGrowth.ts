/**
 * V8 heap settings for a crawling process. A crawl allocates fast and keeps little: every page is
 * fetched, parsed, stored and dropped, with ~50 pages in flight. Much of a page's garbage is still
 * in flight at a young-generation collection, so it is promoted and fills the old generation.
 *
 * - Old generation: V8 lets it grow up to 4x its live size before collecting it. A 10,000-product
 *   crawl with ~90 MB live peaked at ~430 MB of heap (~550 MB RSS). At 2x it peaks at ~275 MB RSS
 *   with no fewer pages per second. 1.5x gets ~240 MB, but it costs a fifth of the latency suite's
 *   throughput: with 200 requests in flight the live heap is larger and V8 collects far more often
 *   (latency suite 54% of ideal at 1.5x, 66% at 2x and uncapped). Set at run time by
 *   `limitHeapGrowth()`: V8 reads the flag whenever it sizes the heap after a collection.
 * - Young generation: left at V8's default (2 x 16 MB). Doubling it (`node --max-semi-space-size=32`)
 *   promotes less but was no faster on a quiet machine, in either suite (cpu: 394 vs 393 pages/s;
 *   latency: 293 vs 292), and added ~40 MB of peak RSS, taking the cpu suite over 300 MB.
 *
 * Measured with the bench's cpu suite at 10,000 products and its latency suite (bench/README.md).
 */
import { setFlagsFromString } from 'node:v8';

/** The old generation may grow to (1 + percent/100) times its live size before it is collected. */
export const HEAP_GROWING_PERCENT = 100;

const FLAG = '--heap-growing-percent';

/** Applies HEAP_GROWING_PERCENT, unless the process was started with its own `--heap-growing-percent`. */
export function limitHeapGrowth(percent = HEAP_GROWING_PERCENT): void {
    if (process.execArgv.some((arg) => arg.startsWith(FLAG) || arg.startsWith('--heap_growing_percent'))) return;
    setFlagsFromString(`${FLAG}=${percent}`);
}
