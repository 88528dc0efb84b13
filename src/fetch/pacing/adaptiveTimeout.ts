/**
 * A first attempt's timeout learned from how fast the site answers. A request that has had no
 * answer for many times as long as nearly every response takes is almost surely hung, and waiting
 * out the full request timeout holds its concurrency slot for nothing: with 2% of requests hanging
 * for 30 s on a site that answers in 200 ms, hung requests hold most of the slots. So a first
 * attempt gets `factor` × the domain's recent 99th-percentile response time (at least `minSecs`,
 * at most the request timeout); a retry gets the full request timeout, so a page that is merely
 * slow still gets through (the tail-at-scale trade: a slow page costs one more request). At 5x the
 * p99, about one first attempt in a thousand or fewer is cut short on a site with a long tail.
 *
 * Times are kept per domain and wire profile: a request on `chrome` waits on the machine's
 * Chromium as well as on the site, many times a `fast` request's time on a site that answers in
 * milliseconds, and a timeout learned from `fast` would cut it short.
 */
import type { WireProfile } from '../../site/site.js';
import { domainOf } from './concurrencyController.js';

export interface AdaptiveTimeoutOptions {
    /** Timeout of a first attempt, as a multiple of the domain's recent p99 response time. Default: 5. */
    factor?: number;
    /** The shortest timeout a first attempt gets, in seconds. Default: 0.5. */
    minSecs?: number;
    /**
     * Response times kept per domain; the first attempts of a
     * domain with fewer than 20 get the full timeout. Default: 200.
     */
    samples?: number;
}

export const ADAPTIVE_TIMEOUT_DEFAULTS = { factor: 5, minSecs: 0.5, samples: 200 };

/** Response times a domain needs before its first attempts get a shorter timeout. */
const MIN_SAMPLES = 20;
/** The timeout is recomputed after this many new response times (a sort of `samples` numbers). */
const RECOMPUTE_EVERY = 10;

interface DomainTimes {
    /** Recent response times (ms), a ring buffer. */
    times: number[];
    next: number;
    /** The timeout from them, recomputed every RECOMPUTE_EVERY new times. */
    timeoutMs: number | undefined;
    sinceComputed: number;
}

export class AdaptiveTimeout {
    private readonly factor: number;
    private readonly minMs: number;
    private readonly samples: number;
    private readonly domains = new Map<string, DomainTimes>();

    /** `maxMs`: the request timeout, which retries always get. */
    constructor(
        private readonly maxMs: number,
        options: AdaptiveTimeoutOptions = {},
    ) {
        this.factor = options.factor ?? ADAPTIVE_TIMEOUT_DEFAULTS.factor;
        this.minMs = (options.minSecs ?? ADAPTIVE_TIMEOUT_DEFAULTS.minSecs) * 1000;
        this.samples = options.samples ?? ADAPTIVE_TIMEOUT_DEFAULTS.samples;
    }

    /** The timeout for attempt number `attempt` (1 for the first) of a fetch of `url` on `wire`. */
    timeoutFor(url: string, attempt: number, wire: WireProfile = 'fast'): number {
        const learned = attempt === 1 ? this.domains.get(keyOf(url, wire))?.timeoutMs : undefined;
        return learned === undefined ? this.maxMs : Math.min(this.maxMs, Math.max(this.minMs, learned));
    }

    /**
     * A fetch of `url` on `wire` got its response headers `responseMs` after it was sent: the site's
     * time, not counting how long this process took to get to the response (a busy event loop).
     */
    responded(url: string, responseMs: number, wire: WireProfile = 'fast'): void {
        const domain = this.domain(keyOf(url, wire));
        domain.times[domain.next] = responseMs;
        domain.next = (domain.next + 1) % this.samples;
        domain.sinceComputed += 1;
        if (
            domain.times.length >= MIN_SAMPLES &&
            (domain.timeoutMs === undefined || domain.sinceComputed >= RECOMPUTE_EVERY)
        ) {
            const sorted = [...domain.times].sort((a, b) => a - b);
            const p99 = sorted[Math.floor(0.99 * (sorted.length - 1))];
            if (p99 !== undefined) domain.timeoutMs = this.factor * p99;
            domain.sinceComputed = 0;
        }
    }

    private domain(name: string): DomainTimes {
        let domain = this.domains.get(name);
        if (!domain) {
            domain = { times: [], next: 0, timeoutMs: undefined, sinceComputed: 0 };
            this.domains.set(name, domain);
        }
        return domain;
    }
}

const keyOf = (url: string, wire: WireProfile) => (wire === 'fast' ? domainOf(url) : `${domainOf(url)} ${wire}`);
