/**
 * Learning, per route, whether the cheap fetch is worth trying. A `render: 'auto'` route whose
 * cheap fetches keep missing required fields wastes one HTTP request per page before the
 * browser does the work anyway; once the evidence says so, its pages go to the browser
 * directly. A few pages keep probing the cheap path, so a route that stops needing the
 * browser (the site moved its data back into the HTML) returns to it.
 */
import type { RenderDecision, RenderMode } from '../../vocabulary/report.js';

export interface RenderLearningOptions {
    /** Cheap fetches per route the decision looks back on. Default: 50. */
    window?: number;
    /** Share of those that needed the browser for the route to skip the cheap fetch. Default: 0.9. */
    threshold?: number;
    /** Fewest cheap fetches of a route before anything is decided. Default: 20. */
    minSamples?: number;
    /**
     * While a route goes to the browser directly, one page in this many still tries the cheap path. Default: 30 (3.3%).
     */
    probeEvery?: number;
}

class RouteEvidence {
    private readonly outcomes: boolean[] = [];
    private next = 0;
    mode: RenderMode = 'http-first';
    directToBrowser = 0;
    probes = 0;
    switches = 0;
    private sinceProbe = 0;

    constructor(private readonly window: number) {}

    record(neededBrowser: boolean): void {
        if (this.outcomes.length < this.window) {
            this.outcomes.push(neededBrowser);
        } else {
            this.outcomes[this.next] = neededBrowser;
            this.next = (this.next + 1) % this.window;
        }
    }

    get samples(): number {
        return this.outcomes.length;
    }

    get neededBrowserShare(): number {
        return this.samples === 0 ? 0 : this.outcomes.filter(Boolean).length / this.samples;
    }

    /** True when this page is one of the probes that keep trying the cheap path. */
    takeProbe(probeEvery: number): boolean {
        this.sinceProbe += 1;
        if (this.sinceProbe < probeEvery) return false;
        this.sinceProbe = 0;
        return true;
    }
}

export class RenderLearner {
    private readonly window: number;
    private readonly threshold: number;
    private readonly minSamples: number;
    private readonly probeEvery: number;
    private readonly routes = new Map<string, RouteEvidence>();

    constructor(options: RenderLearningOptions = {}) {
        this.window = options.window ?? 50;
        this.threshold = options.threshold ?? 0.9;
        this.minSamples = Math.min(options.minSamples ?? 20, this.window);
        this.probeEvery = options.probeEvery ?? 30;
    }

    /** Whether the next page of an `auto` route should skip the cheap fetch. */
    goDirectToBrowser(route: string): boolean {
        const evidence = this.evidence(route);
        if (evidence.mode === 'http-first') return false;
        if (evidence.takeProbe(this.probeEvery)) {
            evidence.probes += 1;
            return false;
        }
        evidence.directToBrowser += 1;
        return true;
    }

    /** Records what a cheap fetch of a route showed, and updates the route's mode. */
    record(route: string, neededBrowser: boolean): void {
        const evidence = this.evidence(route);
        evidence.record(neededBrowser);
        if (evidence.samples < this.minSamples) return;
        const mode: RenderMode = evidence.neededBrowserShare >= this.threshold ? 'browser-direct' : 'http-first';
        if (mode !== evidence.mode) {
            evidence.mode = mode;
            evidence.switches += 1;
        }
    }

    decisions(): Record<string, RenderDecision> {
        return Object.fromEntries(
            [...this.routes].map(([route, evidence]) => [
                route,
                {
                    mode: evidence.mode,
                    samples: evidence.samples,
                    neededBrowserShare: Math.round(evidence.neededBrowserShare * 1000) / 1000,
                    directToBrowser: evidence.directToBrowser,
                    probes: evidence.probes,
                    switches: evidence.switches,
                },
            ]),
        );
    }

    private evidence(route: string): RouteEvidence {
        let evidence = this.routes.get(route);
        if (!evidence) {
            evidence = new RouteEvidence(this.window);
            this.routes.set(route, evidence);
        }
        return evidence;
    }
}
