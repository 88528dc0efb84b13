/**
 * robots.txt, checked before a URL enters the frontier: a disallowed URL is never queued. One
 * robots.txt per origin, read by what its fetch answered, as RFC 9309 (2.3.1) says:
 *
 * - 2xx: its rules are obeyed (robots-parser, as Crawlee uses: the longest match wins).
 * - 4xx, or a 3xx the fetch stopped at (a chain longer than the redirects it follows): unavailable,
 *   everything is allowed. Except 429: a site that asks to slow down is not a site without rules,
 *   so it is unreachable, as Google reads it.
 * - 5xx, or no answer (the fetch threw: refused, reset, timed out): unreachable. The whole origin is
 *   disallowed meanwhile and the fetch retried after a backoff (base × 2^n, capped). An origin that
 *   stays unreachable `allowAllAfterSecs` is then read as unavailable (the RFC allows that after 30
 *   days; see that option for why ours is 30 s), and still retried, so rules it serves later are obeyed.
 * - An answer is kept `cacheSecs` (the RFC: not more than 24 hours), then fetched again; while a
 *   refetch finds the origin unreachable, the last answer stands (RFC 9309 2.4).
 *
 * `isAllowed` never answers "unreachable": the frontier drops a disallowed URL for good, so a call
 * waits for the retries instead, and resolves with rules or allow-all. The fetch is injected (the
 * wiring passes src/fetch's); calls for one origin share one fetch.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import robotsParserModule from 'robots-parser';

// biome-ignore lint/plugin/noDoubleCast: robots-parser is CommonJS but types itself with an ES default export
const robotsParser = robotsParserModule as unknown as typeof robotsParserModule.default;

/** Fetches a robots.txt; throws when there is no answer (unreachable, timed out). */
export type RobotsFetch = (url: string) => Promise<{ status: number; body: string }>;

export interface RobotsPolicyOptions {
    /** How a robots.txt is fetched (redirects, size cap and timeout are its business). Required. */
    fetch: RobotsFetch;
    /** The user agent matched against robots.txt groups. Default: `*`. */
    userAgent?: string;
    /** How long an answer is used before robots.txt is fetched again, in seconds. Default: 86 400 (24 h). */
    cacheSecs?: number;
    /**
     * The wait before the first refetch of an unreachable robots.txt, in seconds; doubled each time after. Default: 2.
     */
    retryBaseSecs?: number;
    /** The wait between refetches never grows past this, in seconds. Default: 60. */
    retryMaxSecs?: number;
    /**
     * How long an origin with no answer yet stays disallowed while unreachable before everything is
     * allowed, in seconds. Default: 30 — a crawl-time figure, not the RFC's 30 days: a page's links
     * wait for it inside Crawlee's request handler, which is timed out after 60 s, and the last
     * fetch adds up to its own timeout (10 s by default): 40 s at worst, with room for the parse.
     */
    allowAllAfterSecs?: number;
    /** Where an unreachable robots.txt is reported. Default: nowhere. */
    log?: Logger;
}

export const ROBOTS_DEFAULTS = {
    userAgent: '*',
    cacheSecs: 86_400,
    retryBaseSecs: 2,
    retryMaxSecs: 60,
    allowAllAfterSecs: 30,
};

/** What is known of one origin's robots.txt. */
interface OriginState {
    /** The last answer read (rules or allow-all); undefined until there is one. */
    answer?: (href: string) => boolean;
    /** The Crawl-delay of our user agent's group in the last answer read, in seconds; undefined when none. */
    crawlDelaySecs?: number;
    /** When robots.txt is fetched next, in epoch ms. */
    fetchAt: number;
    /** Since when every fetch found it unreachable; undefined while it answers. */
    unreachableSince?: number;
    /** Fetches in a row that found it unreachable. */
    failures: number;
    /** The fetch under way, shared by every call that waits for it. */
    fetching?: Promise<void>;
}

const allowAll = () => true;

export class RobotsPolicy {
    private readonly origins = new Map<string, OriginState>();
    private readonly fetch: RobotsFetch;
    private readonly userAgent: string;
    private readonly cacheMs: number;
    private readonly retryBaseMs: number;
    private readonly retryMaxMs: number;
    private readonly allowAllAfterMs: number;
    private readonly log?: Logger;

    constructor(options: RobotsPolicyOptions) {
        this.fetch = options.fetch;
        this.userAgent = options.userAgent ?? ROBOTS_DEFAULTS.userAgent;
        this.cacheMs = (options.cacheSecs ?? ROBOTS_DEFAULTS.cacheSecs) * 1000;
        this.retryBaseMs = (options.retryBaseSecs ?? ROBOTS_DEFAULTS.retryBaseSecs) * 1000;
        this.retryMaxMs = (options.retryMaxSecs ?? ROBOTS_DEFAULTS.retryMaxSecs) * 1000;
        this.allowAllAfterMs = (options.allowAllAfterSecs ?? ROBOTS_DEFAULTS.allowAllAfterSecs) * 1000;
        this.log = options.log;
        if (typeof this.fetch !== 'function') throw new TypeError('RobotsPolicy needs a fetch');
        for (const [name, ms] of Object.entries({
            cacheSecs: this.cacheMs,
            retryBaseSecs: this.retryBaseMs,
            retryMaxSecs: this.retryMaxMs,
        })) {
            if (!(ms > 0)) throw new RangeError(`${name} must be > 0`);
        }
        if (!(this.allowAllAfterMs >= 0)) throw new RangeError('allowAllAfterSecs must be >= 0');
    }

    /** Whether robots.txt lets `url` be crawled; waits while its origin is unreachable and unread. */
    async isAllowed(url: URL): Promise<boolean> {
        const origin = url.origin;
        let state = this.origins.get(origin);
        if (!state) {
            state = { fetchAt: 0, failures: 0 };
            this.origins.set(origin, state);
        }
        for (;;) {
            if (Date.now() >= state.fetchAt)
                state.fetching ??= this.refresh(origin, state).finally(() => (state.fetching = undefined));
            // A refetch is waited for, except while the origin is unreachable: then the last answer stands.
            if (state.fetching && !(state.answer && state.unreachableSince !== undefined)) await state.fetching;
            if (state.answer) return state.answer(url.href);
            await sleep(Math.max(0, state.fetchAt - Date.now()));
        }
    }

    /**
     * The Crawl-delay, in seconds, that the robots.txt of `url`'s origin sets for our user agent's
     * group (uncapped: the caller decides how much of it to honour). Undefined when it sets none or
     * has not been read yet; it never waits for a fetch, the politeness asks it before every request.
     */
    crawlDelaySecs(url: URL): number | undefined {
        return this.origins.get(url.origin)?.crawlDelaySecs;
    }

    /** Fetches the origin's robots.txt and records what it answered: the policy, top to bottom. */
    private async refresh(origin: string, state: OriginState): Promise<void> {
        const robotsUrl = `${origin}/robots.txt`;
        const started = Date.now();
        let response: { status: number; body: string } | undefined;
        let reason: string;
        try {
            response = await this.fetch(robotsUrl);
            reason = `status ${response.status}`;
        } catch (error) {
            reason = error instanceof Error ? error.message : String(error);
        }
        const now = Date.now();
        const unreachable = !response || response.status >= 500 || response.status === 429;
        if (response && !unreachable) {
            const ok = response.status >= 200 && response.status < 300;
            const robot = ok ? robotsParser(robotsUrl, response.body) : undefined;
            state.answer = robot ? (href) => robot.isAllowed(href, this.userAgent) ?? true : allowAll;
            const delay = robot?.getCrawlDelay(this.userAgent);
            state.crawlDelaySecs = delay !== undefined && delay > 0 ? delay : undefined;
            state.fetchAt = now + this.cacheMs;
            state.unreachableSince = undefined;
            state.failures = 0;
            return;
        }
        state.unreachableSince ??= started; // from the first try, so a slow failure does not stretch the wait
        state.failures += 1;
        const retryAt = now + Math.min(this.retryMaxMs, this.retryBaseMs * 2 ** (state.failures - 1));
        const allowAllAt = state.unreachableSince + this.allowAllAfterMs;
        if (state.answer) {
            state.fetchAt = retryAt;
        } else if (now >= allowAllAt) {
            this.log?.warn(
                { robotsUrl, reason },
                `robots.txt unreachable for ${this.allowAllAfterMs / 1000} s: allowing all, still retrying`,
            );
            state.answer = allowAll;
            state.fetchAt = retryAt;
        } else {
            this.log?.info({ robotsUrl, reason }, 'robots.txt unreachable: the origin waits while it is retried');
            // The last retry comes when allow-all would begin, so a call waits no longer than that.
            state.fetchAt = Math.min(retryAt, allowAllAt);
        }
    }
}
