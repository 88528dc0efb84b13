/**
 * The drift breaker: a run can answer 200 to every request and still produce garbage when the
 * site's layout changed and the selectors match nothing. Per route, it watches the share of
 * pages whose records fail the schema over a sliding window; past the threshold it trips,
 * stopping the route (or the run) on page ~5,000, not after 5,000,000 empty rows.
 */
import type { Trip } from '../vocabulary/report.js';

export interface DriftBreakerOptions {
    /** Pages of a route the invalid share is measured over. Default: 100. */
    window?: number;
    /** Share of invalid pages in the window that trips the breaker. Default: 0.5. */
    threshold?: number;
    /** Fewest pages of a route before it can trip. Default: 50. */
    minSamples?: number;
    /** What a trip stops: the route's remaining pages, or the whole run. Default: `route`. */
    scope?: 'route' | 'run';
}

export const DRIFT_DEFAULTS = {
    window: 100,
    threshold: 0.5,
    minSamples: 50,
    scope: 'route',
} satisfies Required<DriftBreakerOptions>;

interface Judgement {
    invalid: boolean;
    fields: string[];
    url: string;
    rawKey: string;
    issues: string[];
}

const SAMPLES_KEPT = 5;

export class DriftBreaker {
    readonly scope: 'route' | 'run';
    private readonly window: number;
    private readonly threshold: number;
    private readonly minSamples: number;
    private readonly judgements = new Map<string, Judgement[]>();
    private readonly judged = new Map<string, number>();
    private readonly trips = new Map<string, Trip>();

    constructor(options: DriftBreakerOptions = {}) {
        this.window = options.window ?? DRIFT_DEFAULTS.window;
        this.threshold = options.threshold ?? DRIFT_DEFAULTS.threshold;
        this.minSamples = Math.min(options.minSamples ?? DRIFT_DEFAULTS.minSamples, this.window);
        this.scope = options.scope ?? DRIFT_DEFAULTS.scope;
    }

    /** Records the final verdict on one page of a route; returns the trip if this page tripped it. */
    judge(route: string, page: Judgement): Trip | undefined {
        if (this.trips.has(route)) return undefined;
        const recent = this.judgements.get(route) ?? [];
        recent.push(page);
        if (recent.length > this.window) recent.shift();
        this.judgements.set(route, recent);
        const judged = (this.judged.get(route) ?? 0) + 1;
        this.judged.set(route, judged);

        const invalid = recent.filter((judgement) => judgement.invalid);
        const invalidShare = invalid.length / recent.length;
        if (recent.length < this.minSamples || invalidShare < this.threshold) return undefined;

        const failingFields: Record<string, number> = {};
        for (const field of invalid.flatMap((judgement) => judgement.fields))
            failingFields[field] = (failingFields[field] ?? 0) + 1;
        const trip: Trip = {
            route,
            pagesJudged: judged,
            invalidShare: Math.round(invalidShare * 1000) / 1000,
            failingFields: Object.fromEntries(Object.entries(failingFields).sort(([, a], [, b]) => b - a)),
            samples: invalid.slice(-SAMPLES_KEPT).map(({ url, rawKey, issues }) => ({ url, rawKey, issues })),
            at: new Date().toISOString(),
        };
        this.trips.set(route, trip);
        return trip;
    }

    /**
     * Stops a route that tripped elsewhere (another worker of the fleet); returns whether it was
     * running here. The first trip of a route is kept.
     */
    adopt(trip: Trip): boolean {
        if (this.trips.has(trip.route)) return false;
        this.trips.set(trip.route, trip);
        return true;
    }

    /** Whether pages of this route should still be fetched. */
    isStopped(route: string): boolean {
        return this.scope === 'run' ? this.trips.size > 0 : this.trips.has(route);
    }

    get tripped(): Trip[] {
        return [...this.trips.values()];
    }
}
