/**
 * Sessions, one identity each: an exit (a tier and one of its proxies), a cookie jar, and one
 * fingerprint: Chrome of the release of the machine's Chromium (chromeRelease.ts), so headers and
 * handshake name one browser, on a platform drawn per session, with the header set that Chrome
 * sends in its order and client hints that agree with it. Both stages take their sessions from
 * here, so a browser that clears a challenge hands its cookies to the HTTP stage on the same exit
 * with the same user agent. Crawlee's own session pools are off: they are per crawler and know
 * nothing of tiers.
 *
 * A session retires on a block, after `maxUses` requests, or when its error score (transient
 * failures, each success taking half of one back) reaches `maxErrorScore`. An exit the breaker
 * holds out is skipped; its sessions wait for it.
 */
import { randomUUID } from 'node:crypto';
import zlib from 'node:zlib';
import type { FailureClass } from '../../vocabulary/failure.js';
import { type Brand, brands, type ChromeRelease, FALLBACK_RELEASE, secChUa } from './chromeRelease.js';
import type { ExitBreaker } from './exitBreaker.js';
import { exitName, type ProxyTier } from './proxyTiers.js';
import { sessionCookieJar } from './sessionCookies.js';

export interface IdentitiesOptions {
    tiers: readonly ProxyTier[];
    breaker: ExitBreaker;
    /** Requests of one session before it retires. Default: 100. */
    maxUses?: number;
    /** Error score at which a session retires. Default: 3. */
    maxErrorScore?: number;
    /** Sessions kept alive per exit. Default: 3. */
    perExit?: number;
    /**
     * The Chrome release sessions claim: the run's Chromium's (`chromeRelease`, wiring/proxies.ts).
     * Default: `FALLBACK_RELEASE`.
     */
    release?: ChromeRelease;
}

export const SESSION_DEFAULTS = { maxUses: 100, maxErrorScore: 3, perExit: 3 };

/** Why a session retired. */
export type RetiredFor = 'blocked' | 'max-uses' | 'errors';

/** Where a request leaves from: no proxy, or one proxy of a tier. */
export interface Exit {
    tier: number;
    tierName: string;
    /** Undefined: direct. */
    proxyUrl?: string;
    /** `host:port` of the proxy, or `direct`: safe to show. */
    name: string;
}

/** What CDP's user agent override takes for the client hints. */
export interface UserAgentMetadata {
    brands: Brand[];
    fullVersion: string;
    platform: string;
    platformVersion: string;
    architecture: string;
    model: string;
    mobile: boolean;
}

/** A desktop platform as Chrome names it: in its user agent, its `sec-ch-ua-platform`, its platform version. */
interface Platform {
    userAgentOs: string;
    name: string;
    version: string;
}

/**
 * The platforms sessions claim, drawn with these weights: roughly desktop Chrome's traffic. The
 * platform versions are ones Chrome of today reports: Windows 10's, and a current macOS (the user
 * agent stays frozen at 10_15_7, a macOS that Chrome no longer runs on).
 */
const PLATFORMS: readonly (Platform & { weight: number })[] = [
    { weight: 0.7, userAgentOs: 'Windows NT 10.0; Win64; x64', name: 'Windows', version: '10.0.0' },
    { weight: 0.2, userAgentOs: 'Macintosh; Intel Mac OS X 10_15_7', name: 'macOS', version: '15.6.1' },
    { weight: 0.1, userAgentOs: 'X11; Linux x86_64', name: 'Linux', version: '' },
];

const ACCEPT =
    'text/html,application/xhtml+xml,application/xml;q=0.9,image/jxl,image/avif,image/webp,image/apng,*/*;q=0.8,' +
    'application/signed-exchange;v=b3;q=0.7';
/** zstd only where Node's zlib has it (Node 20's has not): the HTTP client decodes bodies itself. */
const ACCEPT_ENCODING = 'createZstdDecompress' in zlib ? 'gzip, deflate, br, zstd' : 'gzip, deflate, br';
const ACCEPT_LANGUAGE = 'en-US,en;q=0.9';

export class Identity {
    readonly id = randomUUID();
    readonly cookieJar = sessionCookieJar();
    /** The HTTP stage's request headers, in the browser's order (lower-case names). */
    readonly headers: Readonly<Record<string, string>>;
    readonly userAgent: string;
    uses = 0;
    errorScore = 0;
    retiredFor?: RetiredFor;
    private readonly platform: Platform;

    constructor(
        readonly exit: Exit,
        /** The Chrome release claimed: its major version in the user agent and client hints. */
        readonly release: ChromeRelease,
    ) {
        this.platform = drawPlatform();
        this.headers = navigationHeaders(release, this.platform);
        this.userAgent = this.headers['user-agent'] ?? '';
    }

    /** Playwright context options that give a browser page this fingerprint. */
    browserContextOptions(): { userAgent: string; extraHTTPHeaders: Record<string, string> } {
        return {
            userAgent: this.userAgent,
            extraHTTPHeaders: { 'accept-language': this.headers['accept-language'] ?? ACCEPT_LANGUAGE },
        };
    }

    /**
     * CDP's `Emulation.setUserAgentOverride` for this fingerprint: Chromium sends client hints of
     * its own version whatever the user agent says, unless it is told the brands to claim too.
     */
    userAgentOverride(): { userAgent: string; acceptLanguage: string; userAgentMetadata: UserAgentMetadata } {
        // Both groups take part in every match, so neither is ever undefined.
        const claimed = [...(this.headers['sec-ch-ua'] ?? '').matchAll(/"([^"]+)";v="([^"]+)"/g)].map(
            ([, brand = '', version = '']) => ({ brand, version }),
        );
        return {
            userAgent: this.userAgent,
            acceptLanguage: this.headers['accept-language'] ?? ACCEPT_LANGUAGE,
            userAgentMetadata: {
                brands: claimed,
                fullVersion: this.release.fullVersion,
                platform: this.platform.name,
                platformVersion: this.platform.version,
                architecture: 'x86',
                model: '',
                mobile: false,
            },
        };
    }
}

function drawPlatform(): Platform {
    let draw = Math.random();
    for (const platform of PLATFORMS) {
        draw -= platform.weight;
        if (draw < 0) return platform;
    }
    return PLATFORMS[0] as Platform; // the weights' sum fell short of 1 by a rounding
}

/**
 * The headers Chrome sends with a top-level navigation typed in the address bar, over HTTP/2, in
 * its order. They claim Google Chrome (its brand with Chromium's in `sec-ch-ua`), not Chromium:
 * Chrome is what real traffic is, and its TLS and HTTP/2 are those of Chromium of the same version.
 */
function navigationHeaders(release: ChromeRelease, platform: Platform): Record<string, string> {
    return {
        'sec-ch-ua': secChUa(brands({ ...release, product: 'Google Chrome' })),
        'sec-ch-ua-mobile': '?0',
        'sec-ch-ua-platform': `"${platform.name}"`,
        'upgrade-insecure-requests': '1',
        // Chrome's reduced user agent: the major version only.
        'user-agent': `Mozilla/5.0 (${platform.userAgentOs}) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${release.major}.0.0.0 Safari/537.36`,
        accept: ACCEPT,
        'sec-fetch-site': 'none',
        'sec-fetch-mode': 'navigate',
        'sec-fetch-user': '?1',
        'sec-fetch-dest': 'document',
        'accept-encoding': ACCEPT_ENCODING,
        'accept-language': ACCEPT_LANGUAGE,
        priority: 'u=0, i',
    };
}

export class Identities {
    private readonly tiers: readonly ProxyTier[];
    private readonly breaker: ExitBreaker;
    private readonly maxUses: number;
    private readonly maxErrorScore: number;
    private readonly perExit: number;
    private readonly release: ChromeRelease;
    /** Per tier, its exits; per exit, its live sessions. */
    private readonly exits: Exit[][];
    private readonly sessions = new Map<Exit, Identity[]>();
    private readonly byId = new Map<string, Identity>();
    private readonly turns: number[];
    readonly retired: Record<RetiredFor, number> = { blocked: 0, 'max-uses': 0, errors: 0 };
    /** Sessions made so far. */
    created = 0;

    constructor(options: IdentitiesOptions) {
        this.tiers = options.tiers;
        this.breaker = options.breaker;
        this.maxUses = options.maxUses ?? SESSION_DEFAULTS.maxUses;
        this.maxErrorScore = options.maxErrorScore ?? SESSION_DEFAULTS.maxErrorScore;
        this.perExit = options.perExit ?? SESSION_DEFAULTS.perExit;
        this.release = options.release ?? FALLBACK_RELEASE;
        this.exits = this.tiers.map((tier, index) =>
            tier.proxyUrls.length === 0
                ? [{ tier: index, tierName: tier.name, name: 'direct' }]
                : tier.proxyUrls.map((proxyUrl, position) => ({
                      tier: index,
                      tierName: tier.name,
                      proxyUrl,
                      name: uniqueName(tier.proxyUrls, position),
                  })),
        );
        this.turns = this.tiers.map(() => 0);
    }

    /** Every exit, tier by tier. */
    allExits(): Exit[] {
        return this.exits.flat();
    }

    /**
     * A session on tier `tier`, its exits taken in turn, skipping those the breaker holds out;
     * undefined when it holds out all of them. On the exit taken, a live session `prefer` accepts
     * comes first (the browser stage's: one with a page open to render in).
     */
    pick(tier: number, prefer?: (identity: Identity) => boolean): Identity | undefined {
        const exits = this.exits[tier];
        if (!exits) throw new RangeError(`no proxy tier ${tier} of ${this.exits.length}`);
        for (let tried = 0; tried < exits.length; tried++) {
            const turn = this.turns[tier] ?? 0;
            this.turns[tier] = turn + 1;
            const exit = exits[turn % exits.length];
            if (exit && this.breaker.allows(exitKey(exit))) return this.sessionOn(exit, prefer);
        }
        return undefined;
    }

    /** The session `id`, while it is live and its exit is let through. */
    get(id: string | undefined): Identity | undefined {
        const identity = id === undefined ? undefined : this.byId.get(id);
        if (!identity || identity.retiredFor || !this.breaker.allows(exitKey(identity.exit))) return undefined;
        return identity;
    }

    /** What came of a request the session made: its score, and whether it retires. */
    used(identity: Identity, outcome: 'ok' | FailureClass): void {
        if (outcome === 'exit' || identity.retiredFor) return;
        identity.uses += 1;
        if (outcome === 'blocked') {
            this.retire(identity, 'blocked');
            return;
        }
        if (outcome === 'transient') identity.errorScore += 1;
        else if (outcome === 'ok') identity.errorScore = Math.max(0, identity.errorScore - 0.5);
        if (identity.errorScore >= this.maxErrorScore) this.retire(identity, 'errors');
        else if (identity.uses >= this.maxUses) this.retire(identity, 'max-uses');
    }

    private retire(identity: Identity, reason: RetiredFor): void {
        identity.retiredFor = reason;
        this.retired[reason] += 1;
        this.byId.delete(identity.id);
        const live = this.sessions.get(identity.exit);
        if (live)
            this.sessions.set(
                identity.exit,
                live.filter((session) => session !== identity),
            );
    }

    private sessionOn(exit: Exit, prefer?: (identity: Identity) => boolean): Identity {
        let live = this.sessions.get(exit);
        if (!live) {
            live = [];
            this.sessions.set(exit, live);
        }
        const preferred = prefer && leastUsed(live.filter(prefer));
        if (preferred) return preferred;
        if (live.length < this.perExit) {
            const identity = new Identity(exit, this.release);
            this.created += 1;
            live.push(identity);
            this.byId.set(identity.id, identity);
            return identity;
        }
        // The least used of the exit's sessions, so they age together.
        const least = leastUsed(live);
        if (!least)
            throw new RangeError(
                `no session on exit ${exitKey(exit)}: perExit is ${this.perExit}, and must be at least 1`,
            );
        return least;
    }
}

function leastUsed(sessions: Identity[]): Identity | undefined {
    return sessions.reduce<Identity | undefined>(
        (least, session) => (least && least.uses <= session.uses ? least : session),
        undefined,
    );
}

/** The breaker's and the stats' key of an exit: its tier and proxy, never its credentials. */
export function exitKey(exit: Exit): string {
    return `${exit.tierName}/${exit.name}`;
}

/**
 * The proxy's `host:port`, with `#n` (its place in the tier, from 1) when
 * another proxy of the tier shares it (providers that pick the IP by username).
 */
function uniqueName(proxyUrls: readonly string[], position: number): string {
    const name = exitName(proxyUrls[position]);
    return proxyUrls.filter((url) => exitName(url) === name).length > 1 ? `${name}#${position + 1}` : name;
}
