/**
 * What `crawl()` (run.ts) takes and gives back: its options with their defaults, and its result.
 * The command line's option table (options/options.ts) shows and uses the same defaults.
 */
import type { Logger } from 'pino';
import type { AdaptiveTimeoutOptions } from '../fetch/pacing/adaptiveTimeout.js';
import type { ConcurrencyControllerOptions } from '../fetch/pacing/concurrencyController.js';
import type { LookupFunction } from '../fetch/egress/egress.js';
import type { WireChoice } from '../vocabulary/wire.js';
import type { ProxyTierDefinition } from '../fetch/egress/proxyTiers.js';
import type { TierControllerOptions } from '../fetch/egress/tierController.js';
import type { RenderLearningOptions } from '../fetch/browser/renderLearning.js';
import type { RetryPolicyOptions } from '../fetch/failures/retryPolicy.js';
import type { DriftBreakerOptions } from '../quality/driftBreaker.js';
import type { RevisitBounds } from '../frontier/revisitPolicy.js';
import type { Site } from '../site/site.js';
import type { ConcurrencyDecision, RunSummary } from '../vocabulary/report.js';

/** Defaults of the crawl options owned here (the parts' own options have theirs beside them). */
export const CRAWL_DEFAULTS = {
    storageDir: './storage',
    /**
     * With no `maxConcurrency`, the width is found (fetch/pacing/concurrencyController.ts): it starts
     * here and may rise to `ceiling`; with adaptive concurrency off, it stays at the start.
     */
    foundConcurrency: { start: 20, ceiling: 2_000 },
    requestTimeoutSecs: 30,
    maxResponseMb: 10,
    browserWaitSecs: 10,
    progressIntervalSecs: 5,
    progress: 'auto' as ProgressView,
    adaptiveConcurrency: true,
    adaptiveTimeout: true,
};

/**
 * How progress is shown: `auto`, a live line pinned below the log when stderr is a terminal
 * (monitor/liveProgress.ts) and a progress log line every `progressIntervalSecs` elsewhere;
 * `plain`, the log lines everywhere; `off`, neither.
 */
export type ProgressView = 'auto' | 'plain' | 'off';

/**
 * How requests leave: proxy tiers, sessions, politeness
 * (fetch/egress/proxyRouting.ts); the site's own settings where these are unset.
 */
export interface ProxyOptions {
    /** Tiers, cheapest first. Default: the site's `proxyTiers`, else one direct tier. */
    tiers?: ProxyTierDefinition[];
    /** Relative costs by tier name, over the tiers' own. Default: each tier 10x the one before. */
    tierCosts?: Record<string, number>;
    /** Requests of one session before it retires. Default: 100 (SESSION_DEFAULTS). */
    sessionMaxUses?: number;
    /** The wire profile (fetch/wire/wireRungs.ts). Default: the site's `wire`, else `auto`. */
    wire?: WireChoice;
    /**
     * Most requests per second to the site, over every exit and worker. Default: the site's `maxRate`, else no limit.
     */
    maxRate?: number;
    /** Honour robots.txt's Crawl-delay. Default: true. */
    crawlDelay?: boolean;
    /** The longest Crawl-delay honoured, in seconds. Default: 10. */
    maxCrawlDelaySecs?: number;
    /** The tier controller's learning (probes, half-life, ...). Default: TIER_DEFAULTS. */
    tierController?: Omit<TierControllerOptions, 'counts' | 'log'>;
}

/** The distributed mode: the frontier on BullMQ over Redis, the sink in PostgreSQL (wiring/openDistributed.ts). */
export interface DistributedOptions {
    /** The Redis of the shared frontier. */
    redisUrl: string;
    /** The PostgreSQL of the shared sink. */
    databaseUrl: string;
    /** `redisUrl` names one node of a Redis Cluster. Default: false, one Redis. */
    redisCluster?: boolean;
    /** The start of every Redis key. Default: `dragnet`. */
    redisPrefix?: string;
    /** How long a job stays locked to its worker without a renewal. Default: 30 s. */
    jobLockSecs?: number;
    /** How long the shared frontier must stay empty before a worker ends. Default: 5 s. */
    finishGraceSecs?: number;
    /** Most pages of the site in work at once across the fleet. Default: no fleet-wide limit. */
    fleetConcurrency?: number;
    /** Jobs waiting in Redis per queue past which record pages spill to PostgreSQL. Default: 200,000. */
    maxWaitingJobs?: number;
}

export const DISTRIBUTED_DEFAULTS = {
    redisPrefix: 'dragnet',
    jobLockSecs: 30,
    finishGraceSecs: 5,
    maxWaitingJobs: 200_000,
};

export interface CrawlOptions {
    /** The site to crawl: `defineSite({...})`, or `loadSite(name or path)`. */
    site: Site;
    /** Normalized start URLs. Default: the site's own (also when empty). */
    startUrls?: string[];
    /**
     * Domains to crawl beside the start URLs' hosts and the site's
     * `allowedDomains`, each with its subdomains. Default: none.
     */
    allowDomains?: string[];
    /**
     * Also connect to loopback, private, CGNAT and link-local addresses
     * (fetch/egress/egress.ts). Default: false: only the start URLs' hosts may have one.
     */
    allowPrivateNetwork?: boolean;
    /**
     * Resolves host names for every connection, with `dns.lookup`'s
     * signature. Default: `dns.lookup`; tests give a fake DNS.
     */
    dnsLookup?: LookupFunction;
    /**
     * Root of all storage. An unfinished run of the site found there is
     * resumed; else the site's stores are emptied first. Default: `./storage`.
     */
    storageDir?: string;
    /**
     * Where raw pages are archived, as WARC files and their CDXJ indexes in a directory per site
     * (docs/archive.md). A fleet's workers may share one (a mounted volume): each writes its own files.
     * Default: `<storageDir>/archive`.
     */
    archiveDir?: string;
    /**
     * Start over, forgetting the site's earlier runs (its items, archive and page history) and any
     * unfinished run. Default: false: an unfinished run is resumed, a finished one recrawled.
     */
    fresh?: boolean;
    /** Recrawl even over an unfinished run, dropping what it had queued. Default: false (resume it). */
    recrawl?: boolean;
    /** Within what a recrawl's revisit policy sets each page's next due time (frontier/revisitPolicy.ts). */
    revisit?: RevisitBounds;
    /** Take queued requests in random order, so failures spread over the run instead of clustering. Default: false. */
    randomOrder?: boolean;
    /**
     * Most HTTP requests in flight, a ceiling the concurrency controller stays under (the HTTP stage
     * starts there). Default: none, the width is found: from 20, raised while the site answers cleanly
     * at flat response times and the machine has CPU and memory to spare, up to 2,000
     * (`CRAWL_DEFAULTS.foundConcurrency`).
     */
    maxConcurrency?: number;
    /** Most browser pages rendering at once. Default: what the machine holds (fetch/browser/browserConcurrency.ts). */
    browserConcurrency?: number;
    /**
     * Worker threads that parse pages and run their extractors, when the site was loaded from a
     * module (`loadSite`); 0 parses in the crawling thread. Default: one per core beyond two, at
     * most 4 (see parse/pageParser.ts).
     */
    parseWorkers?: number;
    /**
     * The longest one page's parse may take before it is quarantined as `extractor-timeout`;
     * in a parse worker a page past it ends the worker. Default: 10 s (parse/pageParser.ts).
     */
    extractTimeoutSecs?: number;
    /** Most URLs admitted to the frontier. Default: no limit. */
    maxRequests?: number;
    /** Attempts, backoff and Retry-After limits of failed requests. Defaults: see RetryPolicyOptions. */
    retry?: RetryPolicyOptions;
    /** Time for one fetch or browser navigation, and again for reading its body. Default: 30 s. */
    requestTimeoutSecs?: number;
    /** MiB of a response body read, decompressed; a larger one is dead-lettered as `too-large`. Default: 10. */
    maxResponseMb?: number;
    /**
     * Give an HTTP fetch's first attempt a timeout learned from the site's response times (see
     * AdaptiveTimeout), so a hung request does not hold its slot for the whole `requestTimeoutSecs`;
     * `true` with the defaults, or options. Default: true.
     */
    adaptiveTimeout?: boolean | AdaptiveTimeoutOptions;
    /**
     * Browser stage: the longest wait for a route's `waitFor`/`waitUntil`
     * before the page is read as it is. Default: 10 s.
     */
    browserWaitSecs?: number;
    /** Time between progress lines. Default: 5 s. */
    progressIntervalSecs?: number;
    /** Live line on a terminal, log lines, or none (see ProgressView). Default: `auto`. */
    progress?: ProgressView;
    /**
     * The run's memory budget in MB: the autoscaled pools' ceiling (runtime/memoryBudget.ts; the CLI also
     * starts the process with half of it as the V8 heap limit). Default: Crawlee's, a quarter of the machine's memory.
     */
    memoryMb?: number;
    /**
     * The Chromium to render with; `undefined` for none, so pages that need a browser are dead-lettered
     * as `renderer-unavailable`. Default (the key left out): found as `npm start` finds it (fetch/browser/chromium.ts).
     */
    chromiumPath?: string | undefined;
    /** `exact` (default) or `bloom`: a fixed-memory filter sized by `expectedUrls` and `bloomErrorRate`. */
    seenSet?: 'exact' | 'bloom';
    expectedUrls?: number;
    bloomErrorRate?: number;
    /** When an `auto` route learns to skip the cheap fetch. Defaults: see RenderLearningOptions. */
    renderLearning?: RenderLearningOptions;
    /** When a route's invalid share stops it (or the run). Defaults: see DriftBreakerOptions. */
    driftBreaker?: DriftBreakerOptions;
    /**
     * Serve Prometheus `/metrics` and JSON `/status` on this port of
     * 127.0.0.1 while the run lasts (0: any free port). Default: no server.
     */
    metricsPort?: number;
    /** Where the metrics server listens. Default: 127.0.0.1. */
    metricsHost?: string;
    /**
     * Lower and raise the HTTP stage's concurrency per domain by the site's error rate (AIMD,
     * within 1..maxConcurrency, starting at maxConcurrency, or finding the width when there is no
     * maxConcurrency); `true` with the defaults, or options. Default: true.
     */
    adaptiveConcurrency?:
        | boolean
        | Omit<ConcurrencyControllerOptions, 'maxConcurrency' | 'startConcurrency' | 'machineShortage' | 'now'>;
    /** Run on the shared Redis frontier and PostgreSQL sink instead of the embedded SQLite ones. Default: embedded. */
    distributed?: DistributedOptions;
    /** Obey robots.txt. Default: true. */
    respectRobotsTxt?: boolean;
    /** Proxy tiers, sessions and politeness. Default: direct, no rate limit, Crawl-delay honoured. */
    proxies?: ProxyOptions;
    /** Where the run logs. Default: pino at `info`, pretty on a terminal, JSON lines elsewhere, on stderr. */
    log?: Logger;
}

/** The crawl options with the run's surroundings settled (run.ts): what the pipeline is built from. */
export type RunOptions = CrawlOptions &
    Required<Pick<CrawlOptions, 'startUrls' | 'storageDir' | 'log'>> & { chromiumPath: string | undefined };

export interface CrawlResult {
    summary: RunSummary;
    /**
     * 0 when every page could be handled as the site asks; 1 when pages needed a browser that was
     * missing; 3 when the drift breaker stopped a route; 130 (SIGINT) or 143 (SIGTERM) when a signal
     * stopped the run before it was done — run it again to resume.
     */
    exitCode: number;
    /** The concurrency controller's recent decisions, oldest first; empty when adaptive concurrency is off. */
    concurrencyDecisions: ConcurrencyDecision[];
}
