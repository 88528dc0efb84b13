/**
 * What the concurrency controller (concurrencyController.ts) knows of one domain: its limit and
 * how it got there, the outcomes of the current window, its ambient error rate, and the recent
 * response times its latency baseline comes from. The controller decides; this keeps count.
 */
import type { FailureClass } from '../../vocabulary/failure.js';
import type { DomainConcurrency } from '../../vocabulary/report.js';
import { AmbientErrors, type Trial } from './ambientErrors.js';

/** What came of one fetch: a usable response, or the class of its failure. */
export type Outcome = 'ok' | FailureClass;

/** A fetch under way: the epoch of the limit it was started under, when, and the trial it counts in. */
export interface DomainAttempt {
    epoch: number;
    startedAt: number;
    trial?: Trial;
}

/**
 * The baseline response time is the lowest window median among this
 * many recent windows, so it follows a site that got slower for good.
 */
const BASELINE_WINDOWS = 30;

/** Response times under this are as good as instant (a local or cached page): their doubling means nothing. */
const LATENCY_FLOOR_MS = 25;

export class DomainState {
    limit: number;
    increases = 0;
    decreases = 0;
    /** The lowest and highest limits it had. */
    lowest: number;
    highest: number;
    /** Bumped by every change of the limit: outcomes of fetches started before it do not judge the new limit. */
    epoch = 0;
    windowStart: number;
    /**
     * Outcomes in the window of fetches started under the current
     * limit, and of those the transient failures and blocks.
     */
    samples = 0;
    errors = 0;
    blocks = 0;
    inFlight = 0;
    /** Most fetches in flight at once during the window. */
    peakInFlight = 0;
    lastOutcomeAt = 0;
    /** Clean windows not raised, by what held the limit (see `DomainConcurrency`). */
    readonly heldBack = { latency: 0, cpu: 0, memory: 0 };
    /** Which errors are ambient, and the trial of the last cut for errors. */
    readonly ambient = new AmbientErrors();
    /** Times to a usable response in the window, ms. */
    private latencies: number[] = [];
    /** Median response times of recent windows, oldest first: the baseline is their lowest. */
    private readonly medians: number[] = [];

    constructor(limit: number, now: number) {
        this.limit = limit;
        this.lowest = limit;
        this.highest = limit;
        this.windowStart = now;
    }

    /** A fetch starts now. */
    started(now: number): DomainAttempt {
        this.inFlight += 1;
        this.peakInFlight = Math.max(this.peakInFlight, this.inFlight);
        return { epoch: this.epoch, startedAt: now, trial: this.ambient.enrol() };
    }

    /**
     * A fetch ended with `outcome`. Every outcome counts for the site's error rate, whatever the
     * limit, slow failures included; only those started under the current limit judge it.
     */
    finished(attempt: DomainAttempt, outcome: Outcome, now: number): void {
        this.inFlight = Math.max(0, this.inFlight - 1);
        // A proxy's own failure says nothing of the site's load.
        if (outcome === 'exit') return;
        this.lastOutcomeAt = now;
        const error = outcome === 'transient' ? 1 : 0;
        this.ambient.record(error, attempt.trial);
        if (attempt.epoch !== this.epoch) return;
        this.samples += 1;
        this.errors += error;
        if (outcome === 'blocked') this.blocks += 1;
        if (outcome === 'ok') this.latencies.push(now - attempt.startedAt);
    }

    /** Median time to a usable response in the window; null when none was usable. */
    median(): number | null {
        if (this.latencies.length === 0) return null;
        const sorted = [...this.latencies].sort((a, b) => a - b);
        return sorted[Math.floor(sorted.length / 2)] ?? null;
    }

    /** The lowest recent window median (at least LATENCY_FLOOR_MS); undefined before any window had one. */
    baseline(): number | undefined {
        return this.medians.length > 0 ? Math.max(LATENCY_FLOOR_MS, Math.min(...this.medians)) : undefined;
    }

    /** Ends the window with the limit set to `to` (its median joins the baseline's history) and starts the next one. */
    endWindow(to: number, now: number): void {
        const latency = this.median();
        if (latency !== null) {
            this.medians.push(latency);
            if (this.medians.length > BASELINE_WINDOWS) this.medians.shift();
        }
        if (to !== this.limit) {
            if (to > this.limit) this.increases += 1;
            else this.decreases += 1;
            this.limit = to;
            this.lowest = Math.min(this.lowest, to);
            this.highest = Math.max(this.highest, to);
            this.epoch += 1;
        }
        this.windowStart = now;
        this.ambient.windowStarted();
        this.samples = 0;
        this.errors = 0;
        this.blocks = 0;
        this.latencies = [];
        this.peakInFlight = this.inFlight;
    }

    /** The limit and its history in brief, for the summary and the metrics. */
    report(): DomainConcurrency {
        const { limit, increases, decreases, lowest, highest } = this;
        return { limit, increases, decreases, lowest, highest, heldBack: { ...this.heldBack } };
    }
}
