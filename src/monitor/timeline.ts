/**
 * The run over time: a sampler that copies the run's counters (RunStats) every second (by default)
 * into a list of points, for the charts of the run report.
 *
 * Counters are copied as they are — cumulative — so a point never loses what happened between
 * samples; rates (pages/s, errors/s) are differences of neighbouring points, taken by the reader.
 * Gauges (in-flight requests, the pool's concurrency) are instantaneous values read through a
 * callback, since RunStats only counts.
 *
 * Memory is bounded: once `maxPoints` points are held, neighbours are merged pairwise (the list
 * halves) and from then on every two samples make one point, so points stay evenly spaced and a
 * run of any length holds at most `maxPoints` of them. Merging keeps the later point's counters
 * (cumulative, so nothing is lost) and the mean of the gauges.
 */
import type { FailureClass } from '../vocabulary/failure.js';
import type { RunStats } from './stats.js';

/** One route's cumulative counters at a point. */
export interface RouteSample {
    /** Items stored (valid) and quarantined (invalid). */
    valid: number;
    invalid: number;
    /** Per schema field, how often it was why a page escalated or an item was quarantined. */
    failingFields: Record<string, number>;
}

export interface TimelinePoint {
    /** Seconds since the run started (`stats.startedAt`). */
    t: number;
    /** Pages finished either way (succeeded + dead-lettered). */
    pages: number;
    itemsStored: number;
    itemsInvalid: number;
    errors: Record<FailureClass, number>;
    escalations: number;
    browserRendered: number;
    deadLettered: number;
    /** Admitted but not yet finished: waiting in a queue, in flight, or waiting for a retry. */
    queued: number;
    routes: Record<string, RouteSample>;
    /** Whatever the `gauges` callback returned (e.g. `inFlight`, `concurrency`); means when merged. */
    gauges: Record<string, number>;
}

export interface TimelineOptions {
    /** Time between samples. Default: 1000 ms. */
    intervalMs?: number;
    /** Most points held; past it neighbours are merged (see the module comment). Default: 2000. */
    maxPoints?: number;
    /**
     * Instantaneous values to record with each sample, e.g. `()
     * => ({ inFlight: pool.currentConcurrency })`. Default: none.
     */
    gauges?: () => Record<string, number>;
}

export class Timeline {
    private readonly intervalMs: number;
    private readonly maxPoints: number;
    private readonly readGauges: (() => Record<string, number>) | undefined;
    private readonly held: TimelinePoint[] = [];
    /** How many raw samples each held point stands for; doubles at every merge. */
    private stride = 1;
    /** Samples taken since the last held point, merged into one, not yet a full stride. */
    private pending: { point: TimelinePoint; samples: number } | undefined;
    private timer: NodeJS.Timeout | undefined;

    constructor(
        private readonly stats: RunStats,
        options: TimelineOptions = {},
    ) {
        this.intervalMs = options.intervalMs ?? 1000;
        // Below 2 a merge could not make room.
        this.maxPoints = Math.max(2, options.maxPoints ?? 2000);
        this.readGauges = options.gauges;
    }

    /** Takes a first sample now, then one every `intervalMs`; the timer does not keep the process alive. */
    start(): void {
        if (this.timer) return;
        this.sample();
        this.timer = setInterval(() => this.sample(), this.intervalMs);
        this.timer.unref();
    }

    /** Stops sampling after a last sample, so the timeline ends where the run ended. */
    stop(): void {
        if (!this.timer) return;
        clearInterval(this.timer);
        this.timer = undefined;
        this.sample();
        this.flushPending();
    }

    /** Records the counters now. Called by the timer; callable directly (tests, a final sample). */
    sample(now: Date = new Date()): void {
        const point = this.snapshot(now);
        this.pending = this.pending
            ? {
                  point: mergePoints(this.pending.point, this.pending.samples, point, 1),
                  samples: this.pending.samples + 1,
              }
            : { point, samples: 1 };
        if (this.pending.samples >= this.stride) this.flushPending();
    }

    /** The points so far, oldest first, including the samples of a stride not yet complete. */
    get points(): TimelinePoint[] {
        return this.pending ? [...this.held, this.pending.point] : [...this.held];
    }

    private flushPending(): void {
        if (!this.pending) return;
        this.held.push(this.pending.point);
        this.pending = undefined;
        if (this.held.length >= this.maxPoints) this.halve();
    }

    /** Merges neighbours pairwise; an odd last point stays as it is. */
    private halve(): void {
        const merged: TimelinePoint[] = [];
        for (let index = 0; index < this.held.length; index += 2) {
            const first = this.held[index];
            if (!first) break;
            const second = this.held[index + 1];
            merged.push(second ? mergePoints(first, 1, second, 1) : first);
        }
        this.held.splice(0, this.held.length, ...merged);
        this.stride *= 2;
    }

    private snapshot(now: Date): TimelinePoint {
        const { stats } = this;
        const routes: Record<string, RouteSample> = {};
        for (const [label, route] of stats.routes) {
            routes[label] = {
                valid: route.itemsStored,
                invalid: route.itemsInvalid,
                failingFields: { ...route.failingFields },
            };
        }
        const gauges: Record<string, number> = {};
        for (const [name, value] of Object.entries(this.readGauges?.() ?? {})) {
            if (Number.isFinite(value)) gauges[name] = value;
        }
        return {
            t: Math.max(0, Math.round(now.getTime() - stats.startedAt.getTime()) / 1000),
            pages: stats.finished,
            itemsStored: stats.itemsStored,
            itemsInvalid: stats.itemsInvalid,
            errors: { ...stats.errorsByClass },
            escalations: stats.escalations,
            browserRendered: stats.browserRendered,
            deadLettered: stats.deadLettered,
            queued: stats.admitted - stats.finished,
            routes,
            gauges,
        };
    }
}

/**
 * One point for two neighbours: the later one's time and counters (they are cumulative) and the
 * gauges' mean, weighted by how many samples each side stands for.
 */
function mergePoints(
    earlier: TimelinePoint,
    earlierWeight: number,
    later: TimelinePoint,
    laterWeight: number,
): TimelinePoint {
    const gauges: Record<string, number> = {};
    for (const name of new Set([...Object.keys(earlier.gauges), ...Object.keys(later.gauges)])) {
        const a = earlier.gauges[name];
        const b = later.gauges[name];
        // The name is a gauge of one point or of both.
        const merged =
            a === undefined || b === undefined
                ? (a ?? b)
                : (a * earlierWeight + b * laterWeight) / (earlierWeight + laterWeight);
        if (merged !== undefined) gauges[name] = merged;
    }
    return { ...later, gauges };
}
