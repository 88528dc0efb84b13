/**
 * The options of the table (options/options.ts) of fetching: the memory budget, concurrency (the
 * HTTP stage's, the browser's, the parse workers'), timeouts and the response size cap.
 */
import { z } from 'zod';
import { BROWSER_CONCURRENCY_DEFAULTS } from '../fetch/browser/browserConcurrency.js';
import { ADAPTIVE_TIMEOUT_DEFAULTS } from '../fetch/pacing/adaptiveTimeout.js';
import { MIN_HEAP_MB } from '../runtime/memoryBudget.js';
import { CRAWL_DEFAULTS } from './crawlOptions.js';
import { number, onOff, onOffDefault, wholeAtLeast1 } from './optionSchemas.js';
import { option } from './optionSpec.js';

export const FETCH_OPTIONS = {
    memoryMb: option({
        flag: 'memory-mb',
        env: 'DRAGNET_MEMORY_MB',
        group: 'fetch',
        defaultText:
            "a runner's ACTOR_MEMORY_MBYTES, else none: no V8 heap limit is set, and the pools hold to a quarter of " +
            "the machine's memory",
        doc:
            "the run's memory budget in MB, as a container's limit: half of it is the V8 heap limit, and past 90% " +
            'of it (Chromium included) the pools add no requests',
        schema: wholeAtLeast1().min(MIN_HEAP_MB, `must be at least ${MIN_HEAP_MB}`).optional(),
    }),
    maxConcurrency: option({
        flag: 'max-concurrency',
        env: 'DRAGNET_MAX_CONCURRENCY',
        group: 'fetch',
        defaultText:
            `none: the width is found, from ${CRAWL_DEFAULTS.foundConcurrency.start} up to ` +
            `${CRAWL_DEFAULTS.foundConcurrency.ceiling}, while the site answers cleanly and the machine has room`,
        doc:
            'most HTTP requests in flight, a ceiling: the HTTP stage starts there, and only the concurrency ' +
            'controller or a shortage of memory holds it lower',
        schema: wholeAtLeast1().optional(),
    }),
    adaptiveConcurrency: option({
        flag: 'adaptive-concurrency',
        env: 'DRAGNET_ADAPTIVE_CONCURRENCY',
        group: 'fetch',
        default: onOffDefault(CRAWL_DEFAULTS.adaptiveConcurrency),
        doc:
            'on: lower and raise HTTP concurrency per domain by its error rate, within 1..--max-concurrency, or ' +
            'find the width without one; off: stay at the maximum (without one, at ' +
            `${CRAWL_DEFAULTS.foundConcurrency.start})`,
        schema: onOff(),
    }),
    parseWorkers: option({
        flag: 'parse-workers',
        env: 'DRAGNET_PARSE_WORKERS',
        group: 'fetch',
        default: 'auto',
        doc:
            'worker threads that parse pages and run extractors; auto: one per core beyond two, at most 4 (none on ' +
            '2 cores); 0: parse in the crawling thread',
        schema: z
            .string()
            .regex(/^(auto|\d+)$/, 'must be auto or a whole number >= 0')
            .transform((value) => (value === 'auto' ? undefined : Number(value))),
    }),
    requestTimeoutSecs: option({
        flag: 'request-timeout',
        env: 'DRAGNET_REQUEST_TIMEOUT_SECS',
        group: 'fetch',
        default: CRAWL_DEFAULTS.requestTimeoutSecs,
        doc: 'seconds for one fetch or browser navigation',
        schema: wholeAtLeast1(),
    }),
    maxResponseMb: option({
        flag: 'max-response-mb',
        env: 'DRAGNET_MAX_RESPONSE_MB',
        group: 'fetch',
        default: CRAWL_DEFAULTS.maxResponseMb,
        doc:
            'MiB of a response body read, decompressed; a larger one (by its Content-Length, or as it streams) is ' +
            'dead-lettered as too-large',
        schema: number().positive('must be more than 0'),
    }),
    adaptiveTimeout: option({
        flag: 'adaptive-timeout',
        env: 'DRAGNET_ADAPTIVE_TIMEOUT',
        group: 'fetch',
        default: onOffDefault(CRAWL_DEFAULTS.adaptiveTimeout),
        doc:
            `on: an HTTP fetch's first attempt times out at ${ADAPTIVE_TIMEOUT_DEFAULTS.factor}x the site's recent ` +
            `p99 response time (at least ${ADAPTIVE_TIMEOUT_DEFAULTS.minSecs} s, at most --request-timeout), ` +
            `retries at --request-timeout; off: always --request-timeout`,
        schema: onOff(),
    }),
    browserConcurrency: option({
        flag: 'browser-concurrency',
        env: 'DRAGNET_BROWSER_CONCURRENCY',
        group: 'fetch',
        defaultText:
            `${BROWSER_CONCURRENCY_DEFAULTS.pagesPerCore} per core, as many as the memory budget holds ` +
            `at ${BROWSER_CONCURRENCY_DEFAULTS.pageMb} MB a page`,
        doc:
            'most browser pages rendering at once; the stage starts there and scales down under memory pressure (to ' +
            'one per core under CPU pressure)',
        schema: wholeAtLeast1().optional(),
    }),
    browserWaitSecs: option({
        flag: 'browser-wait',
        env: 'DRAGNET_BROWSER_WAIT_SECS',
        group: 'fetch',
        default: CRAWL_DEFAULTS.browserWaitSecs,
        doc: "seconds a rendered page may wait for its route's waitFor/waitUntil before it is read as it is",
        schema: wholeAtLeast1(),
    }),
};
