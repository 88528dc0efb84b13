/**
 * Where pages are parsed. A crawl's fetching, queueing and storing run on one Node thread; parsing a
 * page and running its route's extractor is about a fifth of that thread's CPU per page (a profile
 * of the bench's latency suite), and it needs nothing but the HTML. So on a machine with cores to
 * spare it runs in parse workers (parseWorkerPool.ts) — worker threads that load the site module
 * themselves — and the crawling thread keeps its CPU for the requests in flight. A site defined in
 * place rather than loaded from a module (tests) is parsed in the crawling thread, as is everything
 * when `workers` is 0.
 */
import { availableParallelism } from 'node:os';
import type { Route, Site } from '../site/site.js';
import { type PageToParse, type ParsedPage, parsePage, timedOutPage } from './parsePage.js';
import { ParseWorkerPool } from './parseWorkerPool.js';

export interface PageParser {
    parse(route: Route, page: PageToParse): Promise<ParsedPage>;
    /** Stops the workers; pages still being parsed fail. */
    close(): Promise<void>;
}

export interface PageParserOptions {
    /**
     * The longest one page's parse may take (its HTML read, its route's extractor and link rules)
     * before the page is quarantined as `extractor-timeout`, its links not followed. In a parse
     * worker the time starts when the worker takes the page up, and a page past it ends the worker —
     * a synchronous loop cannot be interrupted any other way — which a new one replaces; the pages
     * it had waiting go to another. The crawling thread cannot interrupt a parse: a page there is
     * judged by its time once the parse returns, and one that never returns holds the run.
     * Default: 10 s.
     */
    extractTimeoutSecs?: number;
}

/**
 * 10 s cuts nothing but a hang: a page parses in milliseconds, and even a 10 MB page of links in 3 to
 * 4 s on the 2-core development machine (busy). A hung worker is back in a third of the default
 * request timeout.
 */
export const PARSE_DEFAULTS = { extractTimeoutSecs: 10 };

/**
 * Parse workers by default: one per core beyond two, at most 4. The first two cores are the
 * crawling thread's and everything else's (libuv's threads, SQLite, Chromium, other processes). On
 * a 2-core machine a worker gave ~8% more pages per second on the bench's latency suite (332 against
 * 306) but fewer on its CPU suite, where it took peak memory past 300 MB (313 MB against 267 at
 * 10,000 products), so there are none.
 */
export function defaultParseWorkers(): number {
    return Math.min(4, Math.max(0, availableParallelism() - 2));
}

export function createPageParser(site: Site, workers: number, options: PageParserOptions = {}): PageParser {
    const limitSecs = options.extractTimeoutSecs ?? PARSE_DEFAULTS.extractTimeoutSecs;
    if (!(limitSecs > 0)) throw new RangeError('extractTimeoutSecs must be a number of seconds > 0');
    return workers > 0 && site.moduleUrl
        ? new ParseWorkerPool(site.moduleUrl, workers, limitSecs)
        : inThread(limitSecs);
}

function inThread(limitSecs: number): PageParser {
    return {
        parse: async (route, page) => {
            const started = performance.now();
            const parsed = parsePage(route, page);
            // Judged as a parse worker would have judged it, had it been ended at the limit. Copied, as a
            // worker's answer is: its strings (a link's href, a record's text) are otherwise slices of the
            // page's HTML, and each would keep the whole page alive until the page is settled.
            return performance.now() - started > limitSecs * 1000
                ? timedOutPage(page, limitSecs)
                : structuredClone(parsed);
        },
        close: async () => undefined,
    };
}
