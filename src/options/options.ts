/**
 * The option table: every option of `npm start` declared once — its flag, its environment
 * variable, the zod schema that reads its value, its default, one line of doc and its group.
 * Everything else is made from it: the flag parser and `--help` (options/config.ts), the shared flags of
 * the other commands, `.env.example` and the option table of docs/configuration.md (options/optionDocs.ts,
 * written by `npm run docs` and checked by a test). The fetching, proxy, distributed-mode and monitoring
 * options are declared in files of their own (fetchOptions.ts, proxyOptions.ts, distributedOptions.ts,
 * monitorOptions.ts).
 *
 * A default that a part of the pipeline also needs is owned by that part and read from it here
 * (RETRY_DEFAULTS, DRIFT_DEFAULTS, ...), never written twice.
 */
import { z } from 'zod';
import { OPTION_GROUPS, option } from './optionSpec.js';
import { DISTRIBUTED_OPTIONS } from './distributedOptions.js';
import { FETCH_OPTIONS } from './fetchOptions.js';
import { MONITOR_OPTIONS } from './monitorOptions.js';
import { PROXY_OPTIONS } from './proxyOptions.js';
import { atLeast0, duration, durationText, number, oneOf, onOrOff, share, wholeAtLeast1 } from './optionSchemas.js';
import { CRAWL_DEFAULTS } from './crawlOptions.js';
import { RETRY_DEFAULTS } from '../fetch/failures/retryPolicy.js';
import { BLOOM_DEFAULTS } from '../frontier/bloomSeenSet.js';
import { DRIFT_DEFAULTS } from '../quality/driftBreaker.js';
import { REVISIT_DEFAULTS } from '../frontier/revisitPolicy.js';

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

    ...FETCH_OPTIONS,
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
    archiveDir: option({
        flag: 'archive-dir',
        env: 'DRAGNET_ARCHIVE_DIR',
        group: 'output',
        doc: 'where raw pages are archived as WARC (default: <storage-dir>/archive); a fleet shares one',
        schema: z.string().min(1, 'must not be empty').optional(),
    }),
    fresh: option({
        flag: 'fresh',
        env: 'DRAGNET_FRESH',
        group: 'output',
        kind: 'switch',
        default: false,
        defaultText: 'off',
        doc:
            "start over, forgetting the site's earlier runs and any unfinished one (by default an unfinished run " +
            'is resumed and a finished one recrawled); the variable: 1 or 0',
        schema: onOrOff(),
    }),
    recrawl: option({
        flag: 'recrawl',
        env: 'DRAGNET_RECRAWL',
        group: 'output',
        kind: 'switch',
        default: false,
        defaultText: 'off',
        doc:
            'recrawl the site even over an unfinished run (by default a site with a finished run is recrawled, an ' +
            'unfinished one resumed, and a site never crawled crawled whole); the variable: 1 or 0',
        schema: onOrOff(),
    }),
    revisitMin: option({
        flag: 'revisit-min',
        env: 'DRAGNET_REVISIT_MIN',
        group: 'frontier',
        default: durationText(REVISIT_DEFAULTS.revisitMin),
        doc: 'a recrawl fetches a known page at most this often, however often it changes (90s, 15m, 6h, 7d)',
        schema: duration(),
    }),
    revisitMax: option({
        flag: 'revisit-max',
        env: 'DRAGNET_REVISIT_MAX',
        group: 'frontier',
        default: durationText(REVISIT_DEFAULTS.revisitMax),
        doc: 'a recrawl fetches a known page at least this often, however rarely it changes',
        schema: duration(),
    }),
    summaryJson: option({
        flag: 'summary-json',
        env: 'DRAGNET_SUMMARY_JSON',
        group: 'output',
        defaultText: 'none',
        doc: 'also write the run summary to this JSON file',
        schema: z.string().optional(),
    }),

    ...DISTRIBUTED_OPTIONS,
    ...MONITOR_OPTIONS,
    ...PROXY_OPTIONS,
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
