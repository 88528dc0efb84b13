/**
 * How a request leaves, for both stages: its tier (the tier controller, above any tier it was
 * blocked on), its session (an identity on one of the tier's exits the breaker lets through), and
 * its turn (the site's politeness, across every exit). When it is done, what came of it is told to
 * each of them: the breaker hears of exit faults, the session of its outcome, the tier controller
 * of successes and blocks, the politeness limiter of 429s. The counters of the run summary's
 * `proxies` are kept here.
 */
import type { Logger } from 'pino';
import type { ClassifiedFailure } from '../../vocabulary/failure.js';
import type { ExitCounters, ProxyReport } from '../../vocabulary/report.js';
import type { RequestData, Stage } from '../../vocabulary/request.js';
import type { ExitBreaker } from './exitBreaker.js';
import { FetchFailure } from '../failures/failures.js';
import { type Exit, exitKey, type Identities, type Identity } from './identities.js';
import { PolitenessClosedError, type SitePoliteness } from '../pacing/politeness.js';
import type { ProxyTier } from './proxyTiers.js';
import { RETRY_DEFAULTS } from '../failures/retryPolicy.js';
import type { WireProfile } from '../../vocabulary/wire.js';
import { sectionOf, type TierController } from './tierController.js';

export interface ProxyRoutingOptions {
    tiers: readonly ProxyTier[];
    identities: Identities;
    breaker: ExitBreaker;
    controller: TierController;
    politeness: SitePoliteness;
    /**
     * The longest a 429's Retry-After cools the site, in ms: past it the retry policy gives the
     * request up (`retry-after-too-long`), and the rest of the site waits no longer than that either.
     * Default: the retry policy's `maxRetryAfterSecs` default, 600 s.
     */
    maxCoolMs?: number;
    /** Lets go of what the parts hold (the politeness waiters, a shared store's timer). */
    close: () => Promise<void>;
    log: Logger;
}

/** A session and the wire profile it sends on. */
export interface OutgoingSession {
    identity: Identity;
    wire: WireProfile;
}

/** One request on its way out: by which session, on which tier, for which section. */
export interface Attempt {
    stage: Stage;
    identity: Identity;
    exit: Exit;
    tier: number;
    section: string;
    probe: boolean;
}

/**
 * The site's turn is further off than a request should wait holding a crawler slot (a long
 * Crawl-delay with many slots would run past Crawlee's handler timeout), or the run is stopping:
 * the request goes back to its queue for later, uncharged.
 */
export class TurnDeferred extends FetchFailure {
    constructor(readonly delayMs: number) {
        super(
            'transient',
            `the site's turn is more than ${Math.round(delayMs / 1000)} s off`,
            undefined,
            'turn-deferred',
        );
    }
}

/** How long a request waits for the site's turn in its slot before it goes back to the queue. */
export const MAX_TURN_WAIT_MILLIS = 20_000;

/** No exit of any tier from the request's own up is let through by the breaker: the request waits, uncharged. */
export class NoExitAvailable extends FetchFailure {
    constructor(message: string) {
        super('exit', message, undefined, 'no-exit-available');
    }
}

/**
 * How an attempt ended, as far as the exits are concerned: a usable response, a failure, or a JS
 * challenge the session is to pass in the browser (neither the session's fault nor the tier's).
 */
export type AttemptEnd =
    | { ok: true; bytes: number }
    | { ok: false; failure: ClassifiedFailure }
    | { ok: false; challenged: true };

const emptyCounters = (): ExitCounters => ({ requests: 0, ok: 0, blocked: 0, limited: 0, exitFaults: 0, bytes: 0 });

export class ProxyRouting {
    readonly tiers: readonly ProxyTier[];
    readonly identities: Identities;
    readonly politeness: SitePoliteness;
    private readonly breaker: ExitBreaker;
    private readonly controller: TierController;
    private readonly log: Logger;
    private readonly maxCoolMs: number;
    readonly close: () => Promise<void>;
    private readonly attempts = new WeakMap<object, Attempt>();
    private readonly byTier: ExitCounters[];
    private readonly byExit = new Map<string, ExitCounters>();
    challengesToBrowser = 0;

    constructor(options: ProxyRoutingOptions) {
        this.tiers = options.tiers;
        this.identities = options.identities;
        this.breaker = options.breaker;
        this.controller = options.controller;
        this.politeness = options.politeness;
        this.log = options.log;
        this.maxCoolMs = options.maxCoolMs ?? RETRY_DEFAULTS.maxRetryAfterSecs * 1000;
        this.close = options.close;
        this.byTier = this.tiers.map(emptyCounters);
    }

    /** More than one tier: a block moves a request up, and past the last one it is given up on. */
    get tiered(): boolean {
        return this.tiers.length > 1;
    }

    /**
     * Waits for the site's turn, then picks the session for `request` (held weakly as its attempt's
     * key). A request pinned to a session (`userData.session`, a challenge the browser is to pass)
     * keeps it while it lives. Otherwise a session `prefer` accepts is taken before others on the
     * exit chosen (Identities.pick).
     */
    async begin(
        request: { url: string; label?: string; userData: Record<string, unknown> },
        stage: Stage,
        prefer?: (identity: Identity) => boolean,
    ): Promise<Attempt> {
        const url = new URL(request.url);
        const userData = request.userData as RequestData;
        const section = sectionOf(request.label, url);
        // The turn first: a request may wait long for it, and its tier is to follow what the site's
        // outcomes say when it leaves, not when it began to wait.
        await this.politeness.acquire(url, AbortSignal.timeout(MAX_TURN_WAIT_MILLIS)).catch((error: unknown) => {
            throw error instanceof PolitenessClosedError ? new TurnDeferred(MAX_TURN_WAIT_MILLIS) : error;
        });
        const pinned = this.identities.get(userData.session);
        let attempt: Attempt | undefined;
        if (pinned) {
            attempt = { stage, identity: pinned, exit: pinned.exit, tier: pinned.exit.tier, section, probe: false };
        } else {
            const floor = Math.min(userData.tierFloor ?? 0, this.tiers.length - 1);
            const choice = this.controller.tierFor(section, floor);
            for (let tier = choice.tier; tier < this.tiers.length && !attempt; tier++) {
                const identity = this.identities.pick(tier, prefer);
                if (identity)
                    attempt = {
                        stage,
                        identity,
                        exit: identity.exit,
                        tier,
                        section,
                        probe: choice.probe && tier === choice.tier,
                    };
            }
        }
        if (!attempt)
            throw new NoExitAvailable(
                `no exit of tier ${this.tiers[userData.tierFloor ?? 0]?.name} or above is available: every proxy is ` +
                    `on its breaker`,
            );
        this.attempts.set(request, attempt);
        this.count(attempt, (counters) => (counters.requests += 1));
        return attempt;
    }

    /**
     * A session for what is fetched outside the stages (robots.txt, sitemaps): on the cheapest
     * tier whose exits the breaker lets through, with that tier's wire profile.
     */
    cheapestSession(): OutgoingSession | undefined {
        for (const [index, tier] of this.tiers.entries()) {
            const identity = this.identities.pick(index);
            if (identity) return { identity, wire: tier.wire ?? 'fast' };
        }
        return undefined;
    }

    /** The attempt begun for `request`, if one was. */
    attemptOf(request: object): Attempt | undefined {
        return this.attempts.get(request);
    }

    /** What came of `request`'s attempt; each part learns its share. Called once per attempt. */
    end(request: object, end: AttemptEnd): Attempt | undefined {
        const attempt = this.attempts.get(request);
        if (!attempt) return undefined;
        this.attempts.delete(request);
        const key = exitKey(attempt.exit);
        if (end.ok) {
            this.breaker.worked(key);
            this.identities.used(attempt.identity, 'ok');
            this.controller.record(attempt.section, attempt.tier, 'ok');
            this.count(attempt, (counters) => {
                counters.ok += 1;
                counters.bytes += end.bytes;
            });
            return attempt;
        }
        if ('challenged' in end) {
            this.breaker.worked(key);
            this.challengesToBrowser += 1;
            this.count(attempt, (counters) => (counters.blocked += 1));
            return attempt;
        }
        const { failure } = end;
        if (failure.failureClass === 'exit') {
            this.breaker.faulted(key);
            this.count(attempt, (counters) => (counters.exitFaults += 1));
            this.log.warn(
                { exit: key, reason: failure.reason },
                `exit ${key} failed (${failure.reason}); it rests, the request goes out by another`,
            );
            return attempt;
        }
        this.breaker.worked(key);
        this.identities.used(attempt.identity, failure.failureClass);
        if (failure.status === 429) {
            this.count(attempt, (counters) => (counters.limited += 1));
            // The site said how long: the whole site waits. A bare 429 is the concurrency controller's to answer.
            if (failure.retryAfterMs !== undefined)
                void this.politeness.cool(Math.min(failure.retryAfterMs, this.maxCoolMs), `429 from ${key}`);
        } else if (failure.failureClass === 'blocked') {
            this.count(attempt, (counters) => (counters.blocked += 1));
            // A JS challenge is the browser's to pass, not a verdict on the tier.
            if (failure.reason !== 'challenge') this.controller.record(attempt.section, attempt.tier, 'blocked');
        }
        return attempt;
    }

    report(): ProxyReport {
        return {
            tiers: this.tiers.map((tier, index) => ({
                name: tier.name,
                cost: tier.cost,
                wire: tier.wire ?? 'fast',
                ...(this.byTier[index] ?? emptyCounters()),
            })),
            exits: this.identities.allExits().map((exit) => {
                const key = exitKey(exit);
                return {
                    tier: exit.tierName,
                    name: exit.name,
                    breakerOpened: this.breaker.counts(key).opened,
                    ...(this.byExit.get(key) ?? emptyCounters()),
                };
            }),
            sessions: { created: this.identities.created, retired: { ...this.identities.retired } },
            sections: this.controller.sections(),
            tierMoves: [...this.controller.moves],
            probes: this.controller.probes,
            challengesToBrowser: this.challengesToBrowser,
            politeness: this.politeness.report(),
        };
    }

    private count(attempt: Attempt, update: (counters: ExitCounters) => void): void {
        const tierCounters = this.byTier[attempt.tier];
        if (!tierCounters) throw new RangeError(`no proxy tier ${attempt.tier} of ${this.byTier.length}`);
        update(tierCounters);
        const key = exitKey(attempt.exit);
        let counters = this.byExit.get(key);
        if (!counters) {
            counters = emptyCounters();
            this.byExit.set(key, counters);
        }
        update(counters);
    }
}
