/**
 * V8 heap settings for a crawling process. A crawl allocates fast and keeps little: every page is
 * fetched, parsed, stored and dropped, with ~50 pages in flight. Much of a page's garbage is still
 * in flight at a young-generation collection, so it is promoted and fills the old generation.
 *
 * - Old generation: V8 lets it grow up to 4x its live size before collecting it. A 10,000-product
 *   crawl with ~90 MB live peaked at ~430 MB of heap (~550 MB RSS). At 2x it peaks at ~300 MB RSS
 *   with no fewer pages per second. 1.5x gets ~250 MB, but it costs a fifth of the latency suite's
 *   throughput: with 200 requests in flight the live heap is larger and V8 collects far more often
 *   (latency suite 54% of ideal at 1.5x, 66% at 2x and uncapped). Set at run time by
 *   `limitHeapGrowth()`: V8 reads the flag whenever it sizes the heap after a collection.
 * - Young generation: `NODE_FLAGS` doubles it (2 x 32 MB instead of 2 x 16 MB), so fewer objects
 *   are promoted: ~2-3% more pages per second for ~30 MB. V8 sizes it when the process starts, so
 *   this one is a `node` flag: `npm start` (package.json), the Docker image and the bench's crawler
 *   child (bench/lib/runCrawler.ts) pass it.
 *
 * Measured with the bench's cpu suite at 10,000 products and its latency suite (bench/README.md).
 */
import { setFlagsFromString } from 'node:v8';

/** The old generation may grow to (1 + percent/100) times its live size before it is collected. */
export const HEAP_GROWING_PERCENT = 100;

/** Flags a crawling process starts with; they cannot be changed once it runs. */
export const NODE_FLAGS: readonly string[] = ['--max-semi-space-size=32'];

const FLAG = '--heap-growing-percent';

/** Applies HEAP_GROWING_PERCENT, unless the process was started with its own `--heap-growing-percent`. */
export function limitHeapGrowth(percent = HEAP_GROWING_PERCENT): void {
    if (process.execArgv.some((arg) => arg.startsWith(FLAG) || arg.startsWith('--heap_growing_percent'))) return;
    setFlagsFromString(`${FLAG}=${percent}`);
}
