/**
 * The shapes a run reports in: the run summary (the stable JSON contract of DESIGN's "command line
 * and outputs") and what each part contributes to it. The parts that decide these things produce
 * them; monitor/ only reads them.
 */
import type { WireProfile } from './wire.js';
import type { FailureClass } from './failure.js';

/** One route's counters. */
export interface RouteStats {
    pages: number;
    itemsStored: number;
    itemsInvalid: number;
    escalations: number;
    /** Per schema field, how often it was why a page escalated or an item was quarantined. */
    failingFields: Record<string, number>;
}

/** A recrawl's items by what the check of their page found (store/pageHistory.ts). */
export interface ChangeCounts {
    new: number;
    changed: number;
    unchanged: number;
    removed: number;
}

/** What a recrawl found: items by change, in all and by route, and the known pages that needed no parse. */
export interface RecrawlReport {
    /** The run's place in the site's series: 2 for its first recrawl. */
    run: number;
    items: ChangeCounts;
    byRoute: Record<string, ChangeCounts>;
    /** Known pages found unchanged without a parse: answered 304, or sent the same payload again. */
    unchangedPages: { notModified: number; identicalPayload: number };
}

/** Discovered links that did not enter the frontier, by why. */
export interface LinksSkipped {
    seen: number;
    /** Links to a host outside the site's scope (frontier/scope.ts). */
    offsite: number;
    invalid: number;
    disallowed: number;
    overBudget: number;
    unrouted: number;
    /** Links past the site's `maxLinksPerPage` on one page. */
    overLimit: number;
}

export type ErrorsByClass = Record<FailureClass, number>;

/** What the site's sitemaps gave (frontier/sitemaps.ts); all zero for a site that reads none. */
export interface SitemapReport {
    /** Sitemaps and sitemap indexes read to their end. */
    read: number;
    /** Sitemaps given up on: refused, unreachable after their retries, too large, malformed. */
    failed: number;
    /**
     * Sitemaps named in an index but not read: nested deeper than the depth limit, or past the cap on sitemaps read.
     */
    skipped: number;
    /** URL entries read from the sitemaps, every one handed to the frontier. */
    urls: number;
    /** Of those, the ones the frontier queued; the rest are in `linksSkipped` (seen, offsite, unrouted, …). */
    queued: number;
    /**
     * Failed and skipped sitemaps by reason: `http-404`, `forbidden-address`,
     * `offsite`, `too-large`, `malformed`, `too-deep`, …
     */
    reasons: Record<string, number>;
}

/** What a seen-set says about itself in the run summary. */
export interface SeenSetReport {
    kind: 'exact' | 'bloom';
    urls: number;
    /** Bloom: estimated new URLs wrongly answered "seen", hence skipped. */
    expectedSkipped?: number;
    /** Bloom: the chance of that at the current fill. */
    falsePositiveRate?: number;
    /** Bloom: memory held. */
    bytes?: number;
}

export type RenderMode = 'http-first' | 'browser-direct';

/** A route's render decision and its evidence (fetch/browser/renderLearning.ts). */
export interface RenderDecision {
    mode: RenderMode;
    /** Cheap fetches in the window, and the share of them that needed the browser. */
    samples: number;
    neededBrowserShare: number;
    /** Pages sent to the browser without a cheap fetch, and cheap probes made meanwhile. */
    directToBrowser: number;
    probes: number;
    /** How often the mode changed. */
    switches: number;
}

/** Why the drift breaker stopped a route: enough for a person to see what broke and where (quality/driftBreaker.ts). */
export interface Trip {
    route: string;
    /** Pages of the route judged when it tripped, and the invalid share in the window. */
    pagesJudged: number;
    invalidShare: number;
    /** Fields that failed in the window, most often first, with their counts. */
    failingFields: Record<string, number>;
    /** Some invalid pages of the window: their URLs and raw page keys, kept for inspection and reparse. */
    samples: { url: string; rawKey: string; issues: string[] }[];
    at: string;
}

/** One domain's concurrency limit, how it got there (fetch/pacing/concurrencyController.ts). */
export interface DomainConcurrency {
    limit: number;
    increases: number;
    decreases: number;
    /** The lowest and highest limits it had. */
    lowest: number;
    highest: number;
    /**
     * Clean windows whose limit was used but not raised, by what held it: response times slowing
     * (`latency`), this machine's CPU or memory used up (`cpu`, `memory`; fetch/pacing/machineRoom.ts).
     */
    heldBack: { latency: number; cpu: number; memory: number };
}

/**
 * Why a limit moved: cut for the window's transient failures (`errors`) or blocked responses
 * (`blocks`); raised back because a cut did not lower the errors, so they are the site's ambient
 * rate (`ambient`); raised after a clean window that used the limit while response times held (`clean`).
 */
export type ConcurrencyReason = 'errors' | 'blocks' | 'ambient' | 'clean';

/** One change of a domain's concurrency limit, and the window that decided it. */
export interface ConcurrencyDecision {
    /** When, as epoch milliseconds. */
    at: number;
    domain: string;
    from: number;
    to: number;
    reason: ConcurrencyReason;
    /** Share of the window's outcomes that were transient failures, and blocked ones. */
    errorRate: number;
    blockRate: number;
    /** Outcomes in the window that decided it. */
    samples: number;
    /** Median time from sending to a usable response in that window (ms); null when none was usable. */
    latencyMs: number | null;
}

export interface RunSummary {
    site: string;
    startedAt: string;
    finishedAt: string;
    durationSec: number;
    pagesPerSec: number;
    requests: {
        total: number;
        succeeded: number;
        retried: number;
        deadLettered: number;
        retries: number;
        redirects: number;
        duplicates: number;
    };
    http: { fetched: number };
    browser: { rendered: number; available: boolean; direct: number };
    items: { stored: number; invalid: number };
    escalations: { total: number; byRoute: Record<string, number> };
    /** Per `auto` route: whether it learned to skip the cheap fetch, and the evidence. */
    render: Record<string, RenderDecision>;
    /** Routes the drift breaker stopped, with the failing fields and sample pages. */
    drift: Trip[];
    /**
     * Adaptive concurrency: each domain's limit at the end, its lowest
     * and highest, and how often it changed. Absent when it is off.
     */
    concurrency?: Record<string, DomainConcurrency>;
    /** Every change of a domain's HTTP concurrency limit, oldest first (the last 500); absent with adaptive concurrency off. */
    concurrencyChanges?: ConcurrencyDecision[];
    linksSkipped: LinksSkipped;
    /** What the sitemaps gave: read, failed, URLs (frontier/sitemaps.ts). */
    sitemaps: SitemapReport;
    seenSet: SeenSetReport;
    errorsByClass: ErrorsByClass;
    routes: Record<string, RouteStats>;
    storage: { dir: string; dataset: string; quarantine: string; deadLetter: string; rawPages: string };
    /** Dead-lettered requests by reason (`http-404`, `renderer-unavailable`, …). */
    deadLetterByReason: Record<string, number>;
    /** Retries by the reason of the failure retried (`http-503`, `timeout`, `browser-launch-failed`, …). */
    retriesByReason: Record<string, number>;
    /** Requests by proxy tier and exit, sessions, tier moves and politeness (fetch/egress/proxyRouting.ts). */
    proxies: ProxyReport;
    /** A recrawl's changes; absent in a site's first run. */
    recrawl?: RecrawlReport;
    /** The run report's path, once written. */
    report?: string;
    /** The signal that stopped the run before it was done; absent when it ran to the end. */
    stopped?: NodeJS.Signals;
    /**
     * A resumed run: sessions before this one and when the first began.
     * Counters are the whole run's; duration and pages/s this session's.
     */
    resumed?: { sessions: number; firstStartedAt: string };
}

/** What the run report reads: the run summary, plus fields other parts of dragnet may add to it. */
export interface ReportSummary extends RunSummary {
    /** The run's exit code; non-zero marks the run failed. */
    exitCode?: number;
}

/** What a site's politeness (fetch/pacing/politeness.ts) did over the run. */
export interface PolitenessReport {
    /** Requests that asked for a turn. */
    acquired: number;
    /** Of those, the ones that had to wait for it (the spacing, or a cooling). */
    spaced: number;
    /** The time they waited, summed, in ms. */
    waitedMs: number;
    /** Coolings this worker started (a 429's Retry-After), and the time they added, in ms. */
    coolings: number;
    cooledMs: number;
}

/** What went out by one tier or one exit, and what came of it. */
export interface ExitCounters {
    /** Requests sent (both stages). */
    requests: number;
    /** Usable responses. */
    ok: number;
    /** Blocks: refusals, challenges and captchas. */
    blocked: number;
    /** 429s: the site asked to slow down. */
    limited: number;
    /** Failures of the proxy itself (407, refused CONNECT, dead port): retried elsewhere, not the site's. */
    exitFaults: number;
    /** Response body bytes received (HTTP stage, decompressed; browser stage, the page's HTML). */
    bytes: number;
}

/** A section's (or the whole site's) move from one proxy tier to another. */
export interface TierMove {
    /** `the site`, or a route and first path segment (`detail /products`). */
    section: string;
    from: string;
    to: string;
    at: string;
    /** Expected cost per stored page on each tier, cheapest tier first, when it moved. */
    expectedCosts: number[];
}

export interface ProxyReport {
    /** Per tier on each wire profile it took (`NAME+chrome` beside `NAME` under `auto`: fetch/wire/wireRungs.ts). */
    tiers: ({ name: string; cost: number; wire: WireProfile } & ExitCounters)[];
    /** Per exit: the tier, and `host:port` of the proxy (never its credentials) or `direct`. */
    exits: ({ tier: string; name: string; breakerOpened: number } & ExitCounters)[];
    sessions: { created: number; retired: { blocked: number; 'max-uses': number; errors: number } };
    /** The tier each section (and `*`, the site) is on at the end. */
    sections: Record<string, string>;
    tierMoves: TierMove[];
    /** Requests sent a tier below their section's, to see whether it works again. */
    probes: number;
    /** HTTP requests that met a JS challenge and went to the browser on the same session. */
    challengesToBrowser: number;
    politeness: PolitenessReport;
}
