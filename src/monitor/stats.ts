/**
 * The run's counters. The frontier counts what it admits, each outcome's commit what it stored,
 * and the observers of the run's events (wiring/observers.ts) the rest; the progress line, the
 * summary and the tests read from here. Plain numbers, no logic beyond counting.
 */
import type { FailureClass } from '../vocabulary/failure.js';
import type {
    ChangeCounts,
    ErrorsByClass,
    LinksSkipped,
    RecrawlReport,
    RouteStats,
    SitemapReport,
} from '../vocabulary/report.js';

/** The counters as saved in the run state, so a resumed run counts on from them. */
export interface StatsSnapshot {
    counters: Record<string, unknown>;
    routes: Record<string, RouteStats>;
    /** When the first session of the run started. */
    firstStartedAt: string;
    /** Sessions before this one (0 in a run's first). */
    sessions: number;
}

/** Plain number counters, saved and restored as they are. */
const COUNTERS = [
    'admitted',
    'succeeded',
    'deadLettered',
    'retriedRequests',
    'retries',
    'redirects',
    'duplicates',
    'httpFetched',
    'browserRendered',
    'escalations',
    'directToBrowser',
    'itemsStored',
    'itemsInvalid',
] as const;

export class RunStats {
    /** When this session started; a resumed run's first session is `firstStartedAt`. */
    readonly startedAt = new Date();
    firstStartedAt = this.startedAt;
    /** Earlier sessions of a resumed run (0 when the run started fresh). */
    sessions = 0;
    /** Pages finished before this session, so rates count this session's work only. */
    finishedBefore = 0;

    /** URLs admitted to the frontier (start URLs, links, redirect targets). */
    admitted = 0;
    /** Pages finished successfully at their last stage (including redirects and duplicates found after fetching). */
    succeeded = 0;
    deadLettered = 0;
    /** Dead-lettered requests by reason: `http-404`, `timeout`, `renderer-unavailable`, … */
    deadLetterReasons: Record<string, number> = {};
    /** Requests that needed at least one retry, and the retries themselves. */
    retriedRequests = 0;
    retries = 0;
    /** Retries by the reason of the failure they retried: `http-503`, `timeout`, `econnreset`, … */
    retryReasons: Record<string, number> = {};
    /** 3xx responses whose target went back through the frontier. */
    redirects = 0;
    /** Pages whose canonical URL or redirect target was already seen: nothing stored twice. */
    duplicates = 0;

    httpFetched = 0;
    browserRendered = 0;
    escalations = 0;
    /** Pages of routes that learned to need the browser, sent there without a cheap fetch. */
    directToBrowser = 0;

    itemsStored = 0;
    itemsInvalid = 0;

    /** Discovered links that did not enter the frontier, by why. */
    linksSkipped: LinksSkipped = {
        seen: 0,
        offsite: 0,
        invalid: 0,
        disallowed: 0,
        overBudget: 0,
        unrouted: 0,
        overLimit: 0,
    };
    errorsByClass: ErrorsByClass = { transient: 0, blocked: 0, permanent: 0, invalid: 0, exit: 0 };
    /** What the site's sitemaps gave, counted by their reader (frontier/sitemaps.ts). */
    sitemaps: SitemapReport = { read: 0, failed: 0, skipped: 0, urls: 0, queued: 0, reasons: {} };
    readonly routes = new Map<string, RouteStats>();
    /** A recrawl's items by change, by route (all zero in a site's first run). */
    readonly changes = new Map<string, ChangeCounts>();
    unchangedPages: RecrawlReport['unchangedPages'] = { notModified: 0, identicalPayload: 0 };

    route(label: string): RouteStats {
        let stats = this.routes.get(label);
        if (!stats) {
            stats = { pages: 0, itemsStored: 0, itemsInvalid: 0, escalations: 0, failingFields: {} };
            this.routes.set(label, stats);
        }
        return stats;
    }

    /** Items a recrawl carried into its dataset unchanged, without a parse: stored, and counted unchanged. */
    countCarried(label: string, items: number): void {
        this.itemsStored += items;
        this.route(label).itemsStored += items;
        this.countChange(label, 'unchanged', items);
    }

    /** A recrawl's items by change over every route; undefined before one was counted (a first run). */
    changeTotals(): ChangeCounts | undefined {
        if (this.changes.size === 0) return undefined;
        const totals: ChangeCounts = { new: 0, changed: 0, unchanged: 0, removed: 0 };
        for (const counts of this.changes.values())
            for (const change of Object.keys(totals) as (keyof ChangeCounts)[]) totals[change] += counts[change];
        return totals;
    }

    /** Items of `label` whose page's check found `change`. */
    countChange(label: string, change: keyof ChangeCounts, items: number): void {
        let counts = this.changes.get(label);
        if (!counts) {
            counts = { new: 0, changed: 0, unchanged: 0, removed: 0 };
            this.changes.set(label, counts);
        }
        counts[change] += items;
    }

    countFailingFields(label: string, fields: Iterable<string>): void {
        const { failingFields } = this.route(label);
        for (const field of fields) failingFields[field] = (failingFields[field] ?? 0) + 1;
    }

    /** A request went to dead-letter: counted in all, by class and by reason. */
    countDeadLetter(failureClass: FailureClass, reason: string): void {
        this.deadLettered += 1;
        this.errorsByClass[failureClass] += 1;
        this.deadLetterReasons[reason] = (this.deadLetterReasons[reason] ?? 0) + 1;
    }

    snapshot(): StatsSnapshot {
        const counters: Record<string, unknown> = Object.fromEntries(COUNTERS.map((name) => [name, this[name]]));
        counters.deadLetterReasons = this.deadLetterReasons;
        counters.retryReasons = this.retryReasons;
        counters.linksSkipped = this.linksSkipped;
        counters.errorsByClass = this.errorsByClass;
        counters.sitemaps = this.sitemaps;
        counters.changes = Object.fromEntries(this.changes);
        counters.unchangedPages = this.unchangedPages;
        return {
            counters,
            routes: Object.fromEntries(this.routes),
            firstStartedAt: this.firstStartedAt.toISOString(),
            sessions: this.sessions,
        };
    }

    /** Stats that count on from a saved snapshot: a resumed run. */
    static resume(saved: StatsSnapshot): RunStats {
        const stats = new RunStats();
        const { counters } = saved;
        for (const name of COUNTERS) if (typeof counters[name] === 'number') stats[name] = counters[name];
        Object.assign(stats.deadLetterReasons, counters.deadLetterReasons);
        Object.assign(stats.retryReasons, counters.retryReasons);
        Object.assign(stats.linksSkipped, counters.linksSkipped);
        Object.assign(stats.errorsByClass, counters.errorsByClass);
        Object.assign(stats.sitemaps, counters.sitemaps);
        Object.assign(stats.unchangedPages, counters.unchangedPages);
        for (const [label, counts] of Object.entries((counters.changes ?? {}) as Record<string, ChangeCounts>))
            stats.changes.set(label, { ...counts });
        for (const [label, route] of Object.entries(saved.routes)) stats.routes.set(label, route);
        stats.firstStartedAt = new Date(saved.firstStartedAt);
        stats.sessions = saved.sessions + 1;
        stats.finishedBefore = stats.finished;
        return stats;
    }

    /** Pages finished either way. */
    get finished(): number {
        return this.succeeded + this.deadLettered;
    }

    get errors(): number {
        return Object.values(this.errorsByClass).reduce((sum, count) => sum + count, 0);
    }
}
