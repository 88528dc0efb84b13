/**
 * The option table: every option of `npm start` declared once — its flag, its environment
 * variable, the zod schema that reads its value, its default, one line of doc and its group.
 * Everything else is made from it: the flag parser and `--help` (options/config.ts), the shared flags of
 * the other commands, `.env.example` and the README's option table (options/optionDocs.ts, written by
 * `npm run docs` and checked by a test).
 *
 * A default that a part of the pipeline also needs is owned by that part and read from it here
 * (RETRY_DEFAULTS, DRIFT_DEFAULTS, ...), never written twice.
 */
import { z } from 'zod';
import { OPTION_GROUPS, option } from './optionSpec.js';
import { PROXY_OPTIONS } from './proxyOptions.js';
import { atLeast0, number, onOff, onOffDefault, oneOf, onOrOff, share, wholeAtLeast1 } from './optionSchemas.js';
import { CRAWL_DEFAULTS, DISTRIBUTED_DEFAULTS } from './crawlOptions.js';
import { ADAPTIVE_TIMEOUT_DEFAULTS } from '../fetch/pacing/adaptiveTimeout.js';
import { BROWSER_CONCURRENCY_DEFAULTS } from '../fetch/browser/browserConcurrency.js';
import { RETRY_DEFAULTS } from '../fetch/failures/retryPolicy.js';
import { BLOOM_DEFAULTS } from '../frontier/bloomSeenSet.js';

import { MIN_HEAP_MB } from '../runtime/memoryBudget.js';
import { DEFAULT_LOG_LEVEL } from '../monitor/logger.js';
import { DEFAULT_METRICS_HOST } from '../monitor/statusServer.js';
import { DRIFT_DEFAULTS } from '../quality/driftBreaker.js';

export const OPTIONS = {
    site: option({
        flag: 'site',
        env: 'DRAGNET_SITE',
        group: 'site',
        default: 'demo-shop',
        doc: 'a site in routes/ by name, or a path to a site module',
        schema: z.string().min(1, 'must not be empty'),
    }),
    startUrls: option({
        flag: 'start-url',
        env: 'DRAGNET_START_URLS',
        group: 'site',
        kind: 'list',
        default: [],
        defaultText: "the site's startUrls",
        doc:
            "where to start instead of the site's start URLs; each must match one of its routes (repeatable; the " +
            'variable: space-separated)',
        schema: z.array(z.string()),
    }),
    allowDomains: option({
        flag: 'allow-domain',
        env: 'DRAGNET_ALLOW_DOMAINS',
        group: 'site',
        kind: 'list',
        default: [],
        defaultText: "the start URLs' hosts",
        doc:
            "a domain (with its subdomains) to crawl beside the start URLs' hosts and the site's allowedDomains; " +
            'links elsewhere are skipped (repeatable; the variable: space-separated)',
        schema: z.array(
            z.string().regex(/^[A-Za-z0-9.-]+$|^\[[0-9A-Fa-f:.]+\]$/, 'must be a host name or an IP address'),
        ),
    }),
    allowPrivateNetwork: option({
        flag: 'allow-private-network',
        env: 'DRAGNET_ALLOW_PRIVATE_NETWORK',
        group: 'site',
        kind: 'switch',
        default: false,
        defaultText: 'off',
        doc:
            "also connect to loopback, private, CGNAT and link-local addresses (by default only the start URLs' " +
            'hosts may have one; others are dead-lettered as forbidden-address); the variable: 1 or 0',
        schema: onOrOff(),
    }),
    maxRequests: option({
        flag: 'max-requests',
        env: 'DRAGNET_MAX_REQUESTS',
        group: 'site',
        defaultText: 'no limit',
        doc: 'most URLs admitted to the frontier in a run; further links are counted as overBudget',
        schema: wholeAtLeast1().optional(),
    }),

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
        default: CRAWL_DEFAULTS.maxConcurrency,
        doc:
            'most HTTP requests in flight; the HTTP stage starts there, and only the concurrency controller or a ' +
            'shortage of memory holds it lower',
        schema: wholeAtLeast1(),
    }),
    adaptiveConcurrency: option({
        flag: 'adaptive-concurrency',
        env: 'DRAGNET_ADAPTIVE_CONCURRENCY',
        group: 'fetch',
        default: onOffDefault(CRAWL_DEFAULTS.adaptiveConcurrency),
        doc:
            'on: lower and raise HTTP concurrency per domain by its error rate, within 1..--max-concurrency; off: ' +
            'stay at the maximum',
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

    maxAttempts: option({
        flag: 'max-attempts',
        env: 'DRAGNET_MAX_ATTEMPTS',
        group: 'retry',
        default: RETRY_DEFAULTS.maxAttempts,
        doc: 'fetches of a failing request (transient or blocked), the first included, before dead-letter',
        schema: wholeAtLeast1(),
    }),
    retryBaseDelaySecs: option({
        flag: 'retry-base-delay',
        env: 'DRAGNET_RETRY_BASE_DELAY_SECS',
        group: 'retry',
        default: RETRY_DEFAULTS.baseDelaySecs,
        doc: "seconds: upper bound of the first retry's random delay (full jitter)",
        schema: atLeast0(),
    }),
    retryFactor: option({
        flag: 'retry-factor',
        env: 'DRAGNET_RETRY_FACTOR',
        group: 'retry',
        default: RETRY_DEFAULTS.factor,
        doc: 'how much that bound grows with each further retry',
        schema: number().min(1, 'must be 1 or more'),
    }),
    retryMaxDelaySecs: option({
        flag: 'retry-max-delay',
        env: 'DRAGNET_RETRY_MAX_DELAY_SECS',
        group: 'retry',
        default: RETRY_DEFAULTS.maxDelaySecs,
        doc: 'seconds: the bound never grows past this',
        schema: atLeast0(),
    }),
    maxRetryAfterSecs: option({
        flag: 'max-retry-after',
        env: 'DRAGNET_MAX_RETRY_AFTER_SECS',
        group: 'retry',
        default: RETRY_DEFAULTS.maxRetryAfterSecs,
        doc:
            'seconds: the longest Retry-After waited for; a longer one dead-letters the request as ' +
            'retry-after-too-long',
        schema: atLeast0(),
    }),

    requestOrder: option({
        flag: 'request-order',
        env: 'DRAGNET_REQUEST_ORDER',
        group: 'frontier',
        default: 'fifo',
        doc:
            'fifo, or random: queued requests are taken in shuffled order, so failures of one part of a site spread ' +
            'over the run',
        schema: oneOf(['fifo', 'random']),
    }),
    seenSet: option({
        flag: 'seen-set',
        env: 'DRAGNET_SEEN_SET',
        group: 'frontier',
        default: 'exact',
        doc: 'exact (no URL ever wrongly skipped) or bloom (fixed memory, rare false skips)',
        schema: oneOf(['exact', 'bloom']),
    }),
    expectedUrls: option({
        flag: 'expected-urls',
        env: 'DRAGNET_EXPECTED_URLS',
        group: 'frontier',
        default: BLOOM_DEFAULTS.expectedItems,
        doc: 'bloom: the URLs a run is expected to see; sizes the filter',
        schema: wholeAtLeast1(),
    }),
    bloomErrorRate: option({
        flag: 'bloom-error-rate',
        env: 'DRAGNET_BLOOM_ERROR_RATE',
        group: 'frontier',
        default: BLOOM_DEFAULTS.falsePositiveRate,
        doc: 'bloom: accepted chance that a new URL is taken for a seen one',
        schema: share(false),
    }),

    driftWindow: option({
        flag: 'drift-window',
        env: 'DRAGNET_DRIFT_WINDOW',
        group: 'quality',
        default: DRIFT_DEFAULTS.window,
        doc: 'pages per route the drift breaker looks back on',
        schema: wholeAtLeast1(),
    }),
    driftThreshold: option({
        flag: 'drift-threshold',
        env: 'DRAGNET_DRIFT_THRESHOLD',
        group: 'quality',
        default: DRIFT_DEFAULTS.threshold,
        doc: 'share of invalid pages in that window that stops the route',
        schema: share(true),
    }),
    driftMinPages: option({
        flag: 'drift-min-pages',
        env: 'DRAGNET_DRIFT_MIN_PAGES',
        group: 'quality',
        default: DRIFT_DEFAULTS.minSamples,
        doc: 'pages of a route before the drift breaker can trip',
        schema: wholeAtLeast1(),
    }),
    driftScope: option({
        flag: 'drift-scope',
        env: 'DRAGNET_DRIFT_SCOPE',
        group: 'quality',
        default: DRIFT_DEFAULTS.scope,
        doc: 'what a trip stops: the route, or the whole run',
        schema: oneOf(['route', 'run']),
    }),

    storageDir: option({
        flag: 'storage-dir',
        env: 'DRAGNET_STORAGE_DIR',
        group: 'output',
        default: CRAWL_DEFAULTS.storageDir,
        doc: 'where queues, datasets, raw pages and run reports are written',
        schema: z.string().min(1, 'must not be empty'),
    }),
    fresh: option({
        flag: 'fresh',
        env: 'DRAGNET_FRESH',
        group: 'output',
        kind: 'switch',
        default: false,
        defaultText: 'off',
        doc:
            'start over even when an unfinished run of the site is in the storage dir (by default it is resumed); ' +
            'the variable: 1 or 0',
        schema: onOrOff(),
    }),
    summaryJson: option({
        flag: 'summary-json',
        env: 'DRAGNET_SUMMARY_JSON',
        group: 'output',
        defaultText: 'none',
        doc: 'also write the run summary to this JSON file',
        schema: z.string().optional(),
    }),

    redisUrl: option({
        flag: 'redis-url',
        env: 'REDIS_URL',
        group: 'distributed',
        defaultText: 'none: the embedded SQLite frontier',
        doc:
            'the Redis that holds the shared frontier (BullMQ queues, seen-set, fleet state); with --database-url, ' +
            'switches to distributed mode',
        schema: z.string().min(1, 'must not be empty').optional(),
    }),
    databaseUrl: option({
        flag: 'database-url',
        env: 'DATABASE_URL',
        group: 'distributed',
        defaultText: 'none: the embedded SQLite sink',
        doc:
            'the PostgreSQL that holds items, quarantine, dead-letter and raw pages; a schema: ' +
            '?options=-c%20search_path%3DNAME',
        schema: z.string().min(1, 'must not be empty').optional(),
    }),
    redisPrefix: option({
        flag: 'redis-prefix',
        env: 'DRAGNET_REDIS_PREFIX',
        group: 'distributed',
        default: DISTRIBUTED_DEFAULTS.redisPrefix,
        doc: 'the start of every Redis key dragnet writes, so several fleets can share one Redis',
        schema: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'must be letters, digits, _, . or -'),
    }),
    jobLockSecs: option({
        flag: 'job-lock-secs',
        env: 'DRAGNET_JOB_LOCK_SECS',
        group: 'distributed',
        default: DISTRIBUTED_DEFAULTS.jobLockSecs,
        doc:
            "seconds a page's job stays locked to its worker without a renewal: how soon a dead worker's pages go " +
            'to the others',
        schema: wholeAtLeast1(),
    }),
    finishGraceSecs: option({
        flag: 'finish-grace-secs',
        env: 'DRAGNET_FINISH_GRACE_SECS',
        group: 'distributed',
        default: DISTRIBUTED_DEFAULTS.finishGraceSecs,
        doc: 'seconds the shared frontier must stay empty, with no job locked anywhere, before a worker ends',
        schema: wholeAtLeast1(),
    }),
    fleetConcurrency: option({
        flag: 'fleet-concurrency',
        env: 'DRAGNET_FLEET_CONCURRENCY',
        group: 'distributed',
        defaultText: 'no fleet-wide limit',
        doc:
            "most pages of the site in work at once across all workers (BullMQ's global concurrency), so N workers " +
            'do not send N times what the site takes',
        schema: wholeAtLeast1().optional(),
    }),
    maxWaitingJobs: option({
        flag: 'max-waiting-jobs',
        env: 'DRAGNET_MAX_WAITING_JOBS',
        group: 'distributed',
        default: DISTRIBUTED_DEFAULTS.maxWaitingJobs,
        doc:
            'jobs waiting in Redis per stage past which record pages spill to PostgreSQL and are fed back in ' +
            'windows (a waiting job costs Redis ~0.5 KB)',
        schema: wholeAtLeast1(),
    }),

    metricsPort: option({
        flag: 'metrics-port',
        env: 'DRAGNET_METRICS_PORT',
        group: 'monitor',
        defaultText: 'off',
        doc: 'serve Prometheus /metrics and JSON /status on this port during the run (0: any free port)',
        schema: number()
            .int('must be a whole number')
            .min(0, 'must be between 0 and 65535')
            .max(65535, 'must be between 0 and 65535')
            .optional(),
    }),
    metricsHost: option({
        flag: 'metrics-host',
        env: 'DRAGNET_METRICS_HOST',
        group: 'monitor',
        default: DEFAULT_METRICS_HOST,
        doc: 'the address the metrics server listens on (the Docker image sets 0.0.0.0)',
        schema: z.string().min(1, 'must not be empty'),
    }),
    progressIntervalSecs: option({
        flag: 'progress-interval',
        env: 'DRAGNET_PROGRESS_INTERVAL_SECS',
        group: 'monitor',
        default: CRAWL_DEFAULTS.progressIntervalSecs,
        doc: "seconds between progress lines, and the window their rate (and the live line's) is measured over",
        schema: wholeAtLeast1(),
    }),
    progress: option({
        flag: 'progress',
        env: 'DRAGNET_PROGRESS',
        group: 'monitor',
        default: CRAWL_DEFAULTS.progress,
        doc:
            'auto: on a terminal, a live line below the log, redrawn every second (with a bar once --max-requests ' +
            'URLs are admitted), elsewhere progress lines; plain: progress lines everywhere; off: neither',
        schema: oneOf(['auto', 'plain', 'off']),
    }),
    ...PROXY_OPTIONS,
    logLevel: option({
        flag: 'log-level',
        env: 'LOG_LEVEL',
        group: 'monitor',
        default: DEFAULT_LOG_LEVEL,
        doc: 'how much is logged: trace, debug, info, warn, error, fatal or silent',
        schema: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'], {
            error: 'must be one of trace, debug, info, warn, error, fatal, silent',
        }),
    }),
};

export type OptionName = keyof typeof OPTIONS;

/** Each group with its title and the names of its options, in the table's order: how --help and the docs list them. */
export function optionsByGroup(): { title: string; names: OptionName[] }[] {
    const names = Object.keys(OPTIONS) as OptionName[];
    return Object.entries(OPTION_GROUPS).map(([group, title]) => ({
        title,
        names: names.filter((name) => OPTIONS[name].group === group),
    }));
}

/**
 * Variables that are no option of a run: read where they are needed, from the environment only
 * (so a test's child process keeps the machine's Chromium). Documented with the options.
 */
export const ENVIRONMENT_ONLY = [
    {
        env: 'CHROMIUM_PATH',
        doc: 'the Chromium (or Chrome) binary that renders the pages that need a browser (fetch/browser/chromium.ts)',
        defaultText: "a system Chromium, else Playwright's own",
    },
    {
        env: 'DRAGNET_ACTOR',
        doc:
            "1: run as an actor with Apify's SDK off the platform (its local storage; input from Actor.getInput(), " +
            'items also in its default dataset, aborting and migrating as a graceful stop), as APIFY_IS_AT_HOME does ' +
            'on it',
        defaultText: 'unset',
    },
    {
        env: 'DRAGNET_SYSTEM_CHROMIUM_PATHS',
        doc:
            'where a system Chromium is looked for after CHROMIUM_PATH, a list like PATH (a test points it at an ' +
            'empty place to play a machine without a browser)',
        defaultText: '/usr/bin/chromium, /usr/bin/chromium-browser, Chrome, the snap and macOS locations',
    },
] as const;
