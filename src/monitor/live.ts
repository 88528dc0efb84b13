/**
 * The run as of this moment, for people watching it: the progress line and the `/status`
 * endpoint show the same snapshot. Counts come from RunStats; requests in flight from the
 * running stage's autoscaled pool; the rate is measured over a recent window, so a stall shows
 * up at once instead of being averaged away by the minutes before it.
 */
import type { ChangeCounts } from '../vocabulary/report.js';
import type { Stage } from '../vocabulary/request.js';
import type { RunStats } from './stats.js';

/** What one stage is doing right now. */
export interface StageLoad {
    /** Requests being fetched or handled. */
    inFlight: number;
    /** How many its autoscaled pool lets run at once just now (at most the stage's max concurrency). */
    concurrencyLimit: number;
}

export type Load = Record<Stage, StageLoad>;

/** The part of a Crawlee crawler whose load can be read. */
interface PooledCrawler {
    readonly running: boolean;
    autoscaledPool?: { currentConcurrency: number; desiredConcurrency: number };
}

/**
 * The stages' crawlers, so their load can be read at any moment. The HTTP stage is a new
 * crawler each round and the browser stage starts only once a page needs it, so whoever wants
 * the load asks here rather than holding on to a crawler.
 */
export class RunningStages {
    private readonly crawlers = new Map<Stage, PooledCrawler>();

    /** Makes `crawler` the stage's current one; returns it, so creation can be wrapped. */
    watch<C extends PooledCrawler>(stage: Stage, crawler: C): C {
        this.crawlers.set(stage, crawler);
        return crawler;
    }

    /** Each stage's load; zero for a stage not running. */
    readonly load = (): Load => ({ http: this.loadOf('http'), browser: this.loadOf('browser') });

    private loadOf(stage: Stage): StageLoad {
        const crawler = this.crawlers.get(stage);
        const pool = crawler?.running ? crawler.autoscaledPool : undefined;
        return { inFlight: pool?.currentConcurrency ?? 0, concurrencyLimit: pool?.desiredConcurrency ?? 0 };
    }
}

/** Requests in flight across the stages. */
export function inFlightOf(load: Load): number {
    return load.http.inFlight + load.browser.inFlight;
}

export interface LiveSnapshot {
    elapsedSec: number;
    /** Pages finished either way: succeeded or dead-lettered. */
    pages: number;
    /** Pages finished per second over the recent window. */
    pagesPerSec: number;
    /** Admitted to the frontier and neither finished nor in flight (escalated pages included). */
    queued: number;
    /** Null when no load source was given. */
    inFlight: number | null;
    /** Retries made, and requests that needed at least one. */
    retries: number;
    retriedRequests: number;
    errors: number;
    deadLettered: number;
    escalations: number;
    items: number;
    invalid: number;
    /** invalid / (items + invalid): 0 until there is a record. */
    invalidShare: number;
    /**
     * Seconds until what the frontier holds now is done at the recent rate; null while nothing
     * finishes. A lower bound while pages are still discovering links.
     */
    etaSec: number | null;
    /** A recrawl's items by change so far (store/pageHistory.ts); absent in a first run. */
    changes?: ChangeCounts;
}

export interface LiveStatusOptions {
    stats: RunStats;
    /** The stages' load (see RunningStages). Default: in-flight not reported. */
    load?: () => Load;
    /** How far back "pages per second" looks. Default: 10 000 ms. */
    rateWindowMs?: number;
    /** The clock, in milliseconds (tests). Default: Date.now. */
    now?: () => number;
}

export class LiveStatus {
    private readonly rateWindowMs: number;
    private readonly now: () => number;
    /** Pages finished at recent reads: the oldest is the rate's baseline. */
    private samples: Array<{ at: number; pages: number }>;

    constructor(private readonly options: LiveStatusOptions) {
        this.rateWindowMs = options.rateWindowMs ?? 10_000;
        this.now = options.now ?? Date.now;
        this.samples = [{ at: options.stats.startedAt.getTime(), pages: options.stats.finished }];
    }

    snapshot(): LiveSnapshot {
        const { stats, load } = this.options;
        const now = this.now();
        const pages = stats.finished;
        const pagesPerSec = this.rate(now, pages);
        const inFlight = load ? inFlightOf(load()) : null;
        const unfinished = Math.max(0, stats.admitted - pages);
        const records = stats.itemsStored + stats.itemsInvalid;
        const changes = stats.changeTotals();
        return {
            elapsedSec: round((now - stats.startedAt.getTime()) / 1000, 1),
            pages,
            pagesPerSec: round(pagesPerSec, 1),
            queued: Math.max(0, unfinished - (inFlight ?? 0)),
            inFlight,
            retries: stats.retries,
            retriedRequests: stats.retriedRequests,
            errors: stats.errors,
            deadLettered: stats.deadLettered,
            escalations: stats.escalations,
            items: stats.itemsStored,
            invalid: stats.itemsInvalid,
            invalidShare: records === 0 ? 0 : round(stats.itemsInvalid / records, 4),
            etaSec: unfinished === 0 ? 0 : pagesPerSec > 0 ? Math.round(unfinished / pagesPerSec) : null,
            ...(changes ? { changes } : {}),
        };
    }

    /**
     * Pages per second since the newest sample at least a window old (or the oldest there is).
     * Reads come every few seconds from the progress line and whenever someone polls `/status`,
     * so samples are kept per read and dropped once a newer one is old enough to be the baseline.
     */
    private rate(now: number, pages: number): number {
        const sample = { at: now, pages };
        this.samples.push(sample);
        while (this.samples.length > 2) {
            const next = this.samples[1];
            if (!next || next.at > now - this.rateWindowMs) break;
            this.samples.shift();
        }
        const baseline = this.samples[0] ?? sample;
        const seconds = (now - baseline.at) / 1000;
        return seconds > 0 ? (pages - baseline.pages) / seconds : 0;
    }
}

function round(value: number, digits: number): number {
    const scale = 10 ** digits;
    return Math.round(value * scale) / scale;
}
