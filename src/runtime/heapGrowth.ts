/**
 * V8 heap settings for a crawling process. A crawl allocates fast and keeps little: every page is
 * fetched, parsed, stored and dropped, with ~50 pages in flight. Much of a page's garbage is still
 * in flight at a young-generation collection, so it is promoted and fills the old generation.
 *
 * - Old generation: V8 lets it grow up to 4x its live size before collecting it. A 10,000-product
 *   crawl with ~90 MB live peaked at ~430 MB of heap (~550 MB RSS) that way. At 2x it peaked at ~300
 *   to ~380 MB RSS: the live heap is ~60 MB after a collection, but on a busy thread V8's incremental
 *   marking sometimes runs a second late, and the old generation reaches ~180 MB before it ends. At
 *   1.5x it peaks at 264-308 MB with no fewer pages per second (cpu suite, 3 runs each) and slightly
 *   more in the latency suite (200 in flight: 255-264 against 240-251 pages/s, 2 runs each). With
 *   got-scraping's per-request objects the live heap at 200 in flight was larger, and 1.5x then cost
 *   a fifth of the latency suite's throughput; the HTTP client's requests keep far less alive. Set
 *   at run time by `limitHeapGrowth()`: V8 reads the flag whenever it sizes the heap after a collection.
 * - Young generation: left at V8's default (2 x 16 MB). 32 or 64 MB was no faster (cpu suite, 3 runs
 *   each, 2026-12-02: 340-399 and 338-358 against 313-384 pages/s) and added 40-200 MB of peak RSS;
 *   8 MB was no cheaper in memory beyond the noise.
 *
 * Measured with the bench's cpu suite at 10,000 products and its latency suite (bench/README.md).
 * Most of those figures predate the release of each page's DOM after its parse
 * (parse/loadedDocument.ts), which cut what is promoted to about a third. 2x was tried again after
 * it (2026-12-03, 10,000 products, one run each): 367 MB peak RSS against 299 at 1.5x, for
 * about the same pages per second, so 1.5x stays.
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
