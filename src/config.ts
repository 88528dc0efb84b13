/**
 * Run configuration: command-line flags over environment variables (read from `.env`) over
 * defaults. Every option is declared once below, with its flag, variable, default and help.
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { ConfigError } from './configError.js';
import { RETRY_DEFAULTS } from './fetch/retryPolicy.js';
import { CRAWL_DEFAULTS, type CrawlOptions } from './run.js';

const positiveInt = (what: string) =>
    z.coerce.number({ error: `${what} must be a number` }).int(`${what} must be a whole number`).positive(`${what} must be at least 1`);
const nonNegative = (what: string) => z.coerce.number({ error: `${what} must be a number` }).min(0, `${what} must be 0 or more`);
const FLAG_VALUES: Record<string, boolean> = { '1': true, true: true, '0': false, false: false };
/** A flag without a value (`--fresh`), or its environment variable set to 1, 0, true or false. */
const flag = (what: string) =>
    z
        .custom<boolean | string>((value) => typeof value === 'boolean' || (typeof value === 'string' && value in FLAG_VALUES), {
            error: `${what} must be 1, 0, true or false`,
        })
        .transform((value) => (typeof value === 'boolean' ? value : FLAG_VALUES[value]!));

/** Flags, their environment variables, defaults and help lines. */
const OPTIONS = {
    site: { env: 'DRAGNET_SITE', help: 'site name (a file in routes/) or path to a site module', default: 'demo-shop' },
    'start-url': { env: 'DRAGNET_START_URLS', help: 'where to start instead of the site\'s start URLs (repeatable; env: space-separated)', multiple: true },
    'max-concurrency': { env: 'DRAGNET_MAX_CONCURRENCY', help: 'most HTTP requests in flight', default: String(CRAWL_DEFAULTS.maxConcurrency) },
    'adaptive-concurrency': { env: 'DRAGNET_ADAPTIVE_CONCURRENCY', help: 'lower and raise HTTP concurrency per domain by its error rate, within 1..max-concurrency: on or off', default: 'on' },
    'parse-workers': {
        env: 'DRAGNET_PARSE_WORKERS',
        help: 'worker threads that parse pages and run extractors; auto: one per core beyond two, at most 4 (none on 2 cores); 0: parse in the crawling thread',
        default: 'auto',
    },
    'browser-concurrency': { env: 'DRAGNET_BROWSER_CONCURRENCY', help: 'most browser pages open at once', default: String(CRAWL_DEFAULTS.browserConcurrency) },
    'browser-wait': { env: 'DRAGNET_BROWSER_WAIT_SECS', help: 'seconds a browser page may wait for its route\'s waitFor/waitUntil', default: String(CRAWL_DEFAULTS.browserWaitSecs) },
    'max-requests': { env: 'DRAGNET_MAX_REQUESTS', help: 'most URLs admitted to the frontier in a run (default: no limit)' },
    'max-attempts': { env: 'DRAGNET_MAX_ATTEMPTS', help: 'fetches of a failing request (transient or blocked), the first included, before dead-letter', default: String(RETRY_DEFAULTS.maxAttempts) },
    'retry-base-delay': { env: 'DRAGNET_RETRY_BASE_DELAY_SECS', help: 'seconds: upper bound of the first retry\'s random delay (full jitter)', default: String(RETRY_DEFAULTS.baseDelaySecs) },
    'retry-factor': { env: 'DRAGNET_RETRY_FACTOR', help: 'how much that bound grows with each further retry', default: String(RETRY_DEFAULTS.factor) },
    'retry-max-delay': { env: 'DRAGNET_RETRY_MAX_DELAY_SECS', help: 'seconds: the bound never grows past this', default: String(RETRY_DEFAULTS.maxDelaySecs) },
    'max-retry-after': { env: 'DRAGNET_MAX_RETRY_AFTER_SECS', help: 'seconds: the longest Retry-After waited for; longer goes to dead-letter', default: String(RETRY_DEFAULTS.maxRetryAfterSecs) },
    'request-order': { env: 'DRAGNET_REQUEST_ORDER', help: 'fifo, or random: queued requests taken in shuffled order so failures spread over the run', default: 'fifo' },
    fresh: { env: 'DRAGNET_FRESH', help: 'start over even when an unfinished run of the site is in the storage dir (default: resume it)', boolean: true },
    'request-timeout': { env: 'DRAGNET_REQUEST_TIMEOUT_SECS', help: 'seconds for one fetch or navigation', default: String(CRAWL_DEFAULTS.requestTimeoutSecs) },
    'adaptive-timeout': { env: 'DRAGNET_ADAPTIVE_TIMEOUT', help: 'on: an HTTP fetch\'s first attempt times out at 5x the site\'s recent p99 response time (at least 0.5 s), retries at --request-timeout; off: always --request-timeout', default: 'on' },
    'seen-set': { env: 'DRAGNET_SEEN_SET', help: 'exact (no URL ever wrongly skipped) or bloom (fixed memory, rare false skips)', default: 'exact' },
    'expected-urls': { env: 'DRAGNET_EXPECTED_URLS', help: 'bloom: URLs the run is expected to see; sizes the filter', default: '10000000' },
    'bloom-error-rate': { env: 'DRAGNET_BLOOM_ERROR_RATE', help: 'bloom: accepted chance that a new URL is taken for a seen one', default: '0.000001' },
    'drift-window': { env: 'DRAGNET_DRIFT_WINDOW', help: 'pages per route the drift breaker looks back on', default: '100' },
    'drift-threshold': { env: 'DRAGNET_DRIFT_THRESHOLD', help: 'share of invalid pages in that window that stops the route', default: '0.5' },
    'drift-min-pages': { env: 'DRAGNET_DRIFT_MIN_PAGES', help: 'pages of a route before the drift breaker can trip', default: '50' },
    'drift-scope': { env: 'DRAGNET_DRIFT_SCOPE', help: 'what a trip stops: route or run', default: 'route' },
    'storage-dir': { env: 'DRAGNET_STORAGE_DIR', help: 'where datasets, queues and raw pages go', default: './storage' },
    'summary-json': { env: 'DRAGNET_SUMMARY_JSON', help: 'also write the run summary to this JSON file' },
    'metrics-port': { env: 'DRAGNET_METRICS_PORT', help: 'serve Prometheus /metrics and JSON /status on this port during the run (0: any free port; default: off)' },
    'metrics-host': { env: 'DRAGNET_METRICS_HOST', help: 'address the metrics server listens on (0.0.0.0 in a container)', default: '127.0.0.1' },
    'progress-interval': { env: 'DRAGNET_PROGRESS_INTERVAL_SECS', help: 'seconds between progress lines', default: String(CRAWL_DEFAULTS.progressIntervalSecs) },
    'log-level': { env: 'LOG_LEVEL', help: 'trace, debug, info, warn, error', default: 'info' },
    help: { help: 'show this help', boolean: true },
} as const satisfies Record<string, { env?: string; help: string; default?: string; multiple?: boolean; boolean?: boolean }>;

const configSchema = z.object({
    site: z.string().min(1, 'site must not be empty'),
    startUrls: z.array(z.string()),
    maxConcurrency: positiveInt('--max-concurrency'),
    adaptiveConcurrency: z.enum(['on', 'off'], { error: '--adaptive-concurrency must be on or off' }).transform((value) => value === 'on'),
    browserConcurrency: positiveInt('--browser-concurrency'),
    parseWorkers: z
        .string()
        .regex(/^(auto|\d+)$/, '--parse-workers must be auto or a whole number >= 0')
        .transform((value) => (value === 'auto' ? undefined : Number(value))),
    browserWaitSecs: positiveInt('--browser-wait'),
    maxRequests: positiveInt('--max-requests').optional(),
    maxAttempts: positiveInt('--max-attempts'),
    retryBaseDelaySecs: nonNegative('--retry-base-delay'),
    retryFactor: z.coerce.number({ error: '--retry-factor must be a number' }).min(1, '--retry-factor must be 1 or more'),
    retryMaxDelaySecs: nonNegative('--retry-max-delay'),
    maxRetryAfterSecs: nonNegative('--max-retry-after'),
    requestOrder: z.enum(['fifo', 'random'], { error: '--request-order must be fifo or random' }),
    fresh: flag('--fresh').default(false),
    requestTimeoutSecs: positiveInt('--request-timeout'),
    adaptiveTimeout: z.enum(['on', 'off'], { error: '--adaptive-timeout must be on or off' }).transform((value) => value === 'on'),
    seenSet: z.enum(['exact', 'bloom'], { error: '--seen-set must be exact or bloom' }),
    expectedUrls: positiveInt('--expected-urls'),
    bloomErrorRate: z.coerce.number({ error: '--bloom-error-rate must be a number' }).gt(0, '--bloom-error-rate must be between 0 and 1').lt(1, '--bloom-error-rate must be between 0 and 1'),
    driftWindow: positiveInt('--drift-window'),
    driftThreshold: z.coerce
        .number({ error: '--drift-threshold must be a number' })
        .gt(0, '--drift-threshold must be between 0 and 1')
        .max(1, '--drift-threshold must be between 0 and 1'),
    driftMinPages: positiveInt('--drift-min-pages'),
    driftScope: z.enum(['route', 'run'], { error: '--drift-scope must be route or run' }),
    storageDir: z.string().min(1),
    summaryJson: z.string().optional(),
    progressIntervalSecs: positiveInt('--progress-interval'),
    metricsHost: z.string().min(1),
    metricsPort: z.coerce
        .number({ error: '--metrics-port must be a number' })
        .int('--metrics-port must be a whole number')
        .min(0, '--metrics-port must be between 0 and 65535')
        .max(65535, '--metrics-port must be between 0 and 65535')
        .optional(),
    logLevel: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'], {
        error: '--log-level must be one of trace, debug, info, warn, error, fatal, silent',
    }),
});

export type Config = z.infer<typeof configSchema>;

/** The configuration for a run, or `'help'` when help was asked for. Throws ConfigError. */
export function parseConfig(argv: string[], env: NodeJS.ProcessEnv): Config | 'help' {
    let values: Record<string, unknown>;
    try {
        ({ values } = parseArgs({
            args: argv,
            strict: true,
            allowPositionals: false,
            options: Object.fromEntries(
                Object.entries(OPTIONS).map(([name, option]) => [
                    name,
                    { type: 'boolean' in option ? 'boolean' : 'string', multiple: 'multiple' in option && option.multiple },
                ]),
            ),
        }));
    } catch (error) {
        throw new ConfigError(`${(error as Error).message.split('\n')[0]} (see --help)`);
    }
    if (values.help) return 'help';

    const read = (name: Exclude<keyof typeof OPTIONS, 'help'>): unknown => {
        const option = OPTIONS[name];
        const fromEnv = env[option.env];
        return values[name] ?? (fromEnv === '' ? undefined : fromEnv) ?? ('default' in option ? option.default : undefined);
    };
    const startUrls = read('start-url');
    const parsed = configSchema.safeParse({
        site: read('site'),
        startUrls: typeof startUrls === 'string' ? startUrls.split(/\s+/).filter(Boolean) : (startUrls ?? []),
        maxConcurrency: read('max-concurrency'),
        adaptiveConcurrency: read('adaptive-concurrency'),
        browserConcurrency: read('browser-concurrency'),
        parseWorkers: read('parse-workers'),
        browserWaitSecs: read('browser-wait'),
        maxRequests: read('max-requests'),
        maxAttempts: read('max-attempts'),
        retryBaseDelaySecs: read('retry-base-delay'),
        retryFactor: read('retry-factor'),
        retryMaxDelaySecs: read('retry-max-delay'),
        maxRetryAfterSecs: read('max-retry-after'),
        requestOrder: read('request-order'),
        fresh: read('fresh'),
        requestTimeoutSecs: read('request-timeout'),
        adaptiveTimeout: read('adaptive-timeout'),
        seenSet: read('seen-set'),
        expectedUrls: read('expected-urls'),
        bloomErrorRate: read('bloom-error-rate'),
        driftWindow: read('drift-window'),
        driftThreshold: read('drift-threshold'),
        driftMinPages: read('drift-min-pages'),
        driftScope: read('drift-scope'),
        storageDir: read('storage-dir'),
        summaryJson: read('summary-json'),
        progressIntervalSecs: read('progress-interval'),
        metricsPort: read('metrics-port'),
        metricsHost: read('metrics-host'),
        logLevel: read('log-level'),
    });
    if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new ConfigError(issue?.message ?? 'invalid configuration');
    }
    return parsed.data;
}

export function helpText(): string {
    const lines = Object.entries(OPTIONS).map(([name, option]) => {
        const flag = `--${name}${'boolean' in option ? '' : ' <value>'}`.padEnd(30);
        const extras = [
            'default' in option ? `default: ${option.default}` : undefined,
            'env' in option ? `env: ${option.env}` : undefined,
        ].filter(Boolean);
        return `  ${flag} ${option.help}${extras.length ? ` (${extras.join('; ')})` : ''}`;
    });
    return [
        'dragnet — crawl a site through the whole pipeline',
        '',
        'Usage: npm start -- [options]',
        '       npm start                  crawl the built-in demo shop (started in-process, offline)',
        '',
        'Options (flags override environment variables, which may be set in .env):',
        ...lines,
        '',
    ].join('\n');
}

/** The crawl options a configuration asks for; the caller adds the site, start URLs, Chromium and logger. */
export function crawlOptionsOf(config: Config): Omit<CrawlOptions, 'site' | 'startUrls' | 'chromiumPath' | 'log'> {
    return {
        storageDir: config.storageDir,
        fresh: config.fresh,
        randomOrder: config.requestOrder === 'random',
        maxConcurrency: config.maxConcurrency,
        adaptiveConcurrency: config.adaptiveConcurrency,
        browserConcurrency: config.browserConcurrency,
        parseWorkers: config.parseWorkers,
        browserWaitSecs: config.browserWaitSecs,
        maxRequests: config.maxRequests,
        requestTimeoutSecs: config.requestTimeoutSecs,
        adaptiveTimeout: config.adaptiveTimeout,
        retry: {
            maxAttempts: config.maxAttempts,
            baseDelaySecs: config.retryBaseDelaySecs,
            factor: config.retryFactor,
            maxDelaySecs: config.retryMaxDelaySecs,
            maxRetryAfterSecs: config.maxRetryAfterSecs,
        },
        seenSet: config.seenSet,
        expectedUrls: config.expectedUrls,
        bloomErrorRate: config.bloomErrorRate,
        driftBreaker: { window: config.driftWindow, threshold: config.driftThreshold, minSamples: config.driftMinPages, scope: config.driftScope },
        metricsPort: config.metricsPort,
        metricsHost: config.metricsHost,
        progressIntervalSecs: config.progressIntervalSecs,
    };
}
