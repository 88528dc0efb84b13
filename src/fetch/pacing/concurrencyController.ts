/**
 * Adaptive concurrency by error rate: the rule of thumb "raise concurrency until failures
 * climb — that is your ceiling" as a controller. Per domain (URL host) it runs AIMD, the rule
 * TCP uses to share a link it cannot see: add a little while the site answers cleanly, cut by a
 * factor as soon as it starts refusing. The limit saw-tooths just under the site's ceiling, so
 * the site is not flooded with requests it will refuse, and the crawl is not slower than it
 * needs to be.
 *
 * Its inputs are the outcomes of fetches, judged by the failure classifier (failures.ts):
 * transient failures (429, 5xx, timeouts, resets) are the site saying "too much", blocked (403)
 * is it refusing this client; permanent and invalid pages say nothing about load and count as
 * answers. Its output is the concurrency to allow per domain, and the one for the HTTP stage's
 * pool (see `poolLimit`; controlledPool.ts puts it into Crawlee's autoscaled pool).
 *
 * Not every transient failure is about load: a site may drop a few percent of requests however
 * gently it is asked. What of the errors is ambient, and whether a cut helped, is learned by
 * ambientErrors.ts; the thresholds here count from the ambient rate.
 *
 * In a fleet, every worker holds the same limit per domain (FleetLimits: redisFleetLimits.ts): each
 * judges its own fetches, proposes the changes it decides, and takes on the fleet's limit whenever
 * it moves, so a cut one worker sees the need for slows every worker, and a worker that joins
 * starts where the fleet is.
 */
import type { ConcurrencyDecision, ConcurrencyReason, DomainConcurrency } from '../../vocabulary/report.js';
import type { MachineShortage } from './machineRoom.js';
import { DomainState, type Outcome, type DomainAttempt } from './domainState.js';
import type { FailureClass } from '../../vocabulary/failure.js';
import { classifyStatus } from '../failures/failures.js';

export interface ConcurrencyControllerOptions {
    /** Most requests in flight per domain: the stage's max concurrency, or the ceiling of a width found. */
    maxConcurrency: number;
    /**
     * Where every domain starts. Below the maximum, the controller finds the width: until the domain's
     * errors first climb, a clean window multiplies its limit by `growthFactor` (see `adjust`).
     * Default: maxConcurrency.
     */
    startConcurrency?: number;
    /** A clean window's limit times this, until the domain's errors first climb. Default: 1.5. */
    growthFactor?: number;
    /**
     * What this machine is short of (machineRoom.ts), asked before a limit is raised: a crawl that
     * has used up the CPU or memory gains nothing from more requests in flight. Default: never short.
     */
    machineShortage?: () => MachineShortage | undefined;
    /** Fewest requests in flight per domain. Default: 1. */
    minConcurrency?: number;
    /**
     * How often, at most, the limit is raised: the length of the window whose outcomes judge
     * it. A window lasts until it holds `minSamples` outcomes, so on a slow site it is longer.
     * Default: 1000 ms.
     */
    intervalMs?: number;
    /**
     * Added to the limit after a clean window once the domain's errors have climbed (at least; from
     * 100 in flight on, 2% of the limit). Default: 1.
     */
    increaseStep?: number;
    /** The limit is multiplied by this when errors climb. Default: 0.75. */
    decreaseFactor?: number;
    /**
     * A window is clean, and the limit may rise, when both its error and its block rate are under this. Default: 0.02.
     */
    lowThreshold?: number;
    /**
     * The limit falls as soon as the current window's error or block rate is above this, counting
     * the outcomes still missing to `minSamples` as clean. Default: 0.1.
     */
    highThreshold?: number;
    /**
     * The limit is not raised while the window's median response time is more than this many
     * times the domain's lowest recent one: requests are queueing somewhere — at the site, or in
     * this process when it cannot keep up — so more of them at once would only wait longer.
     * `Infinity` turns this off. Default: 2.
     */
    latencyTolerance?: number;
    /** Outcomes a window needs before it can raise or lower the limit. Default: 20. */
    minSamples?: number;
    /** Decisions kept for `decisions()`, newest last; older ones are dropped. Default: 500. */
    maxDecisions?: number;
    /** The clock, in milliseconds (tests). Default: Date.now. */
    now?: () => number;
}

/** One limit per domain for a fleet of workers: see redisFleetLimits.ts. */
export interface FleetLimits {
    /** The fleet's limit for `domain`, as last read; undefined when the fleet has none. */
    known(domain: string): number | undefined;
    /** Proposes a change of `domain`'s limit, judged under `from`, to `to`. */
    propose(domain: string, from: number, to: number): void;
    /** Calls `listener` whenever the fleet's limit for a domain moves, by this worker's proposal or another's. */
    onChange(listener: (domain: string, limit: number) => void): void;
}

/** The options' defaults, in one place. */
export const CONCURRENCY_DEFAULTS = {
    minConcurrency: 1,
    growthFactor: 1.5,
    intervalMs: 1000,
    increaseStep: 1,
    decreaseFactor: 0.75,
    lowThreshold: 0.02,
    highThreshold: 0.1,
    latencyTolerance: 2,
    minSamples: 20,
    maxDecisions: 500,
} satisfies Partial<ConcurrencyControllerOptions>;

/**
 * The limit may rise only when the window used most of it: a limit that is not reached says
 * nothing about whether the site would take more (the queue was short, or pages were slow to
 * handle), and raising it anyway lets it drift to the maximum and flood the site when work
 * comes back — the flaw RFC 7661 fixes in TCP.
 */
const USED_SHARE_TO_RAISE = 0.8;

/** A domain's limit counts for the pool while it had an outcome within this many intervals. */
const ACTIVE_INTERVALS = 3;

/**
 * Once a domain's errors have climbed, a clean window adds this share of its limit (at least
 * `increaseStep`): near the ceiling it knows, the limit creeps, but +1 a window at 1,000 in flight
 * would take an hour to come back from a cut.
 */
const CREEP_SHARE = 0.02;

/** A fetch under way: its domain, and what its window needs to know of it. */
interface Attempt extends DomainAttempt {
    domain: string;
}

export class ConcurrencyController {
    readonly maxConcurrency: number;
    private readonly options: Required<
        Omit<ConcurrencyControllerOptions, 'now' | 'startConcurrency' | 'machineShortage'>
    >;
    private readonly startConcurrency: number;
    private readonly machineShortage: () => MachineShortage | undefined;
    private readonly now: () => number;
    private readonly domains = new Map<string, DomainState>();
    private readonly attempts = new WeakMap<object, Attempt>();
    private readonly recent: ConcurrencyDecision[] = [];
    private readonly listeners = new Set<(poolLimit: number) => void>();
    private readonly decisionListeners = new Set<(decision: ConcurrencyDecision) => void>();
    private lastPoolLimit: number;

    /** `fleet`: the limits of a fleet this process is a worker of; without one, the limits are this process's. */
    constructor(
        options: ConcurrencyControllerOptions,
        private readonly fleet?: FleetLimits,
    ) {
        this.options = { ...CONCURRENCY_DEFAULTS, ...definedOnly(options), maxConcurrency: options.maxConcurrency };
        this.now = options.now ?? Date.now;
        this.machineShortage = options.machineShortage ?? (() => undefined);
        const { maxConcurrency, minConcurrency, decreaseFactor, lowThreshold, highThreshold } = this.options;
        this.startConcurrency = options.startConcurrency ?? maxConcurrency;
        if (!(Number.isInteger(maxConcurrency) && maxConcurrency >= 1))
            throw new RangeError('maxConcurrency must be a whole number >= 1');
        if (!(Number.isInteger(minConcurrency) && minConcurrency >= 1 && minConcurrency <= maxConcurrency)) {
            throw new RangeError('minConcurrency must be a whole number between 1 and maxConcurrency');
        }
        if (!(decreaseFactor > 0 && decreaseFactor < 1)) throw new RangeError('decreaseFactor must be between 0 and 1');
        if (!(this.options.growthFactor > 1)) throw new RangeError('growthFactor must be more than 1');
        const start = this.startConcurrency;
        if (!(Number.isInteger(start) && start >= minConcurrency && start <= maxConcurrency))
            throw new RangeError('startConcurrency must be a whole number between minConcurrency and maxConcurrency');
        if (!(this.options.latencyTolerance >= 1)) throw new RangeError('latencyTolerance must be 1 or more');
        if (!(lowThreshold >= 0 && lowThreshold <= highThreshold && highThreshold <= 1)) {
            throw new RangeError('thresholds must satisfy 0 <= lowThreshold <= highThreshold <= 1');
        }
        this.maxConcurrency = maxConcurrency;
        this.lastPoolLimit = this.startConcurrency;
        fleet?.onChange((domain, limit) => this.takeOn(domain, limit));
    }

    /** A fetch of `url` is about to be sent; `request` identifies the attempt (held weakly). */
    started(request: object, url: string): void {
        const domain = domainOf(url);
        this.attempts.set(request, { domain, ...this.state(domain).started(this.now()) });
    }

    /** The attempt got a response: its status is judged by the failure classifier. */
    responded(request: object, status: number): void {
        this.finished(request, classifyStatus(status) ?? 'ok');
    }

    /**
     * The attempt failed (a stage's error handler). Counted only when no response came back:
     * one that did was judged by its status when it arrived.
     */
    failed(request: object, failureClass: FailureClass): void {
        if (this.attempts.has(request)) this.finished(request, failureClass);
    }

    /** Records the outcome of an attempt begun with `started`, and adjusts its domain's limit. */
    finished(request: object, outcome: Outcome): void {
        const attempt = this.attempts.get(request);
        if (!attempt) return;
        this.attempts.delete(request);
        const state = this.state(attempt.domain);
        state.finished(attempt, outcome, this.now());
        this.adjust(attempt.domain, state);
        this.notify();
    }

    /** The concurrency to allow for `domain` (a URL's host); for a domain not seen yet, the one it would start at. */
    limit(domain: string): number {
        return this.domains.get(domain)?.limit ?? this.startingLimit(domain);
    }

    /**
     * The concurrency for a pool shared by every domain: the most constrained limit among the
     * domains fetched from lately, so no domain gets more than its own limit whatever the queue
     * order; when none was, the limit of the last one that was, and the maximum before any fetch.
     * (A crawl usually has one domain, and then this is its limit.)
     */
    poolLimit(): number {
        const since = this.now() - ACTIVE_INTERVALS * this.options.intervalMs;
        let active: number | undefined;
        let latest: DomainState | undefined;
        for (const state of this.domains.values()) {
            if (state.lastOutcomeAt >= since || state.inFlight > 0) active = Math.min(active ?? Infinity, state.limit);
            if (!latest || state.lastOutcomeAt > latest.lastOutcomeAt) latest = state;
        }
        // Between rounds nothing is in flight: the next round starts where the last domain fetched from left off.
        return active ?? latest?.limit ?? this.startConcurrency;
    }

    /** Calls `listener` with the new pool limit whenever it changes; returns the unsubscribe function. */
    onPoolLimit(listener: (poolLimit: number) => void): () => void {
        this.listeners.add(listener);
        return () => this.listeners.delete(listener);
    }

    /** Calls `listener` with every change of a domain's limit; returns the unsubscribe function. */
    onDecision(listener: (decision: ConcurrencyDecision) => void): () => void {
        this.decisionListeners.add(listener);
        return () => this.decisionListeners.delete(listener);
    }

    /** The recent decisions, oldest first (at most `maxDecisions`). */
    decisions(): ConcurrencyDecision[] {
        return [...this.recent];
    }

    /** Each domain's current limit and its history in brief. */
    byDomain(): Record<string, DomainConcurrency> {
        return Object.fromEntries([...this.domains].map(([domain, state]) => [domain, state.report()]));
    }

    /**
     * The policy, run after every outcome. Lowering is urgent: every moment over the site's
     * ceiling it refuses requests (and may start blocking us), so the limit falls as soon as the
     * window has enough outcomes to show it, not at the window's end. Raising is patient: only
     * after a whole clean window in which the limit was actually used and responses did not slow
     * down. Either way a new window starts, and only fetches started under the new limit judge
     * it — those still in flight were sent under the old one.
     */
    private adjust(domain: string, state: DomainState): void {
        const { intervalMs, minSamples, lowThreshold, highThreshold, decreaseFactor, increaseStep, minConcurrency } =
            this.options;
        const errorRate = state.errors / state.samples;
        const blockRate = state.blocks / state.samples;
        const now = this.now();

        // Over the ceiling, a site refuses almost everything past it, and refusals come back at once: a window
        // waiting for `minSamples` would be all errors. So the limit falls as soon as the errors seen are enough
        // to put the window over the threshold even if every outcome still missing to `minSamples` were clean.
        // And a site failing a few percent at random has windows of 20 with 3 errors in them: the errors must
        // also be more than chance would give at the ambient rate.
        const judged = Math.max(state.samples, minSamples);
        const tooManyErrors = state.ambient.tooMany(state.errors, judged, highThreshold);
        if (tooManyErrors || state.blocks > highThreshold * judged) {
            if (tooManyErrors) state.ambient.cut(state.limit);
            this.change(domain, state, Math.max(minConcurrency, Math.floor(state.limit * decreaseFactor)), {
                reason: tooManyErrors ? 'errors' : 'blocks',
                errorRate,
                blockRate,
                now,
            });
            return;
        }
        const undoTo = state.ambient.judgeTrial(lowThreshold);
        if (undoTo !== undefined) {
            this.change(domain, state, Math.max(state.limit, undoTo), { reason: 'ambient', errorRate, blockRate, now });
            return;
        }
        if (state.samples < minSamples || now - state.windowStart < intervalMs) return;
        state.ambient.windowEnded();
        const clean = errorRate < state.ambient.rate + lowThreshold && blockRate < lowThreshold;
        const used = state.peakInFlight >= USED_SHARE_TO_RAISE * state.limit;
        const latency = state.median();
        const baseline = state.baseline();
        const queueing =
            latency !== null && baseline !== undefined && latency > this.options.latencyTolerance * baseline;
        // A clean window that used the limit raises it, unless responses are slowing or the machine is
        // full (counted as held back). Otherwise the limit holds, judged again over a fresh window.
        const earned = clean && used;
        if (earned && queueing) state.heldBack.latency += 1;
        const shortage = earned && !queueing && state.limit < this.maxConcurrency && this.machineShortage();
        if (shortage) state.heldBack[shortage] += 1;
        const raise = earned && !queueing && !shortage;
        // Until the domain's errors first climb, the width is growing toward a ceiling not known
        // yet: a latency-bound site (20 in flight at 2.5 s a page) needs hundreds, which +1 a window
        // would take most of an hour to reach. After, the limit creeps back toward where they climbed.
        const step =
            state.decreases === 0
                ? Math.ceil(state.limit * (this.options.growthFactor - 1))
                : Math.floor(state.limit * CREEP_SHARE);
        const raised = raise ? Math.min(this.maxConcurrency, state.limit + Math.max(increaseStep, step)) : state.limit;
        this.change(domain, state, raised, { reason: 'clean', errorRate, blockRate, now });
    }

    /** The fleet's limit for a domain, within this worker's bounds: it starts a new window, as a change here does. */
    private takeOn(domain: string, fleetLimit: number): void {
        const state = this.domains.get(domain);
        if (!state) return; // a domain first fetched from later starts at the fleet's limit
        const limit = this.bounded(fleetLimit);
        if (limit === state.limit) return;
        state.endWindow(limit, this.now());
        this.notify();
    }

    /** Where a domain starts: at the fleet's limit in a fleet that has one, else at the maximum. */
    private startingLimit(domain: string): number {
        const fleetLimit = this.fleet?.known(domain);
        return fleetLimit === undefined ? this.startConcurrency : this.bounded(fleetLimit);
    }

    /** A fleet's limit within this worker's bounds (its maximum may be lower than another's). */
    private bounded(limit: number): number {
        return Math.max(this.options.minConcurrency, Math.min(this.maxConcurrency, limit));
    }

    /** Sets a domain's limit (recording the decision when it changed) and starts a new window. */
    private change(
        domain: string,
        state: DomainState,
        to: number,
        {
            reason,
            errorRate,
            blockRate,
            now,
        }: { reason: ConcurrencyReason; errorRate: number; blockRate: number; now: number },
    ): void {
        if (to !== state.limit) {
            this.fleet?.propose(domain, state.limit, to);
            this.record({
                at: now,
                domain,
                from: state.limit,
                to,
                reason,
                errorRate: round(errorRate),
                blockRate: round(blockRate),
                samples: state.samples,
                latencyMs: state.median(),
            });
        }
        state.endWindow(to, now);
    }

    private record(decision: ConcurrencyDecision): void {
        this.recent.push(decision);
        if (this.recent.length > this.options.maxDecisions) this.recent.shift();
        for (const listener of this.decisionListeners) listener(decision);
    }

    private notify(): void {
        const poolLimit = this.poolLimit();
        if (poolLimit === this.lastPoolLimit) return;
        this.lastPoolLimit = poolLimit;
        for (const listener of this.listeners) listener(poolLimit);
    }

    private state(domain: string): DomainState {
        let state = this.domains.get(domain);
        if (!state) {
            state = new DomainState(this.startingLimit(domain), this.now());
            this.domains.set(domain, state);
        }
        return state;
    }
}

/** The key the controller keeps limits by: the URL's host (with its port, when it has one). */
export function domainOf(url: string): string {
    try {
        return new URL(url).host;
    } catch {
        return '';
    }
}

function definedOnly<T extends object>(options: T): Partial<T> {
    return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as Partial<T>;
}

function round(value: number): number {
    return Math.round(value * 10_000) / 10_000;
}
