/**
 * The fixture shop's anti-bot mode: what a bot manager in front of a real shop does to a crawler,
 * decided per TCP source address (each test proxy sends from its own loopback address). One
 * function, `check`, holds the whole policy, in the order a request meets it:
 *
 * 1. over budget: an address that has received `budget` 429s is refused for good (403 block page);
 * 2. hard category: `/premium/` from a datacenter address is refused (no token taken);
 * 3. rate: a token bucket per address; past it, 429 with Retry-After;
 *    (`/robots.txt` stops here: it is served whatever the headers and cookies)
 * 4. browser headers: a non-browser or inconsistent header set is refused;
 * 5. session: a `sid` cookie issued to another address is refused; a request without a sid the
 *    shop issued gets a new one, bound to its address;
 * 6. JS challenge: without a valid `js_ok` for its address, the challenge page.
 *
 * Refusals are Cloudflare's Error 1020 page (blockPages.ts), which dragnet's classifier calls blocked.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { type AntiBotOptions, resolveAntiBotOptions } from './antiBotOptions.js';
import { type BlockReply, jsChallenge, refusal, tooManyRequests } from './blockPages.js';

export type { AntiBotOptions } from './antiBotOptions.js';

/** What happened to one source address's requests (all but `/__stats`) since the start or the last reset. */
export interface AddressStats {
    requests: number;
    /** Answered 2xx by the shop. */
    served: number;
    /** Answered 429 (rate). */
    limited: number;
    /** Refused because the address had already received `budget` 429s. */
    overBudget: number;
    badHeaders: number;
    /** Refused for a `sid` issued to another address. */
    stolenSession: number;
    /** Answered with the JS challenge page. */
    challenged: number;
    /** 1 once a request from the address has carried a valid `js_ok`, else 0. */
    challengesSolved: number;
    /** `/premium/` requests refused to a datacenter address. */
    hardBlocked: number;
}

/** Listing and product pages served (2xx) in one category. */
export interface CategoryServed {
    listings: number;
    products: number;
}

export interface AntiBotStats {
    byAddress: Record<string, AddressStats>;
    /** Address → category slug → pages served there. */
    servedByCategory: Record<string, Record<string, CategoryServed>>;
    /** Every sid a request presented or was issued → the distinct user agents (`''` for none) seen with it. */
    userAgentsBySession: Record<string, string[]>;
    /** Address → the distinct user agents that presented a valid `js_ok` from it, the first one the solver. */
    challengeSolvers: Record<string, string[]>;
    /** Addresses refused for good (over budget), in the order they went over. */
    blockedAddresses: string[];
    /** `Date.now()` at each request's arrival, every address together, in arrival order. */
    arrivals: number[];
}

/** Where a served page sits, for `servedByCategory`. */
export interface ServedPage {
    kind: 'listing' | 'product';
    categorySlug: string;
}

/**
 * The anti-bot layer's answer: a reply instead of the shop's (none:
 * the shop answers), and a cookie to set on whichever goes out.
 */
export interface Verdict {
    reply?: BlockReply;
    setCookie?: string;
}

export interface AntiBot {
    check(address: string, req: IncomingMessage, pathname: string, now: number): Verdict;
    /** Tells the layer what the shop answered to a request it let through. */
    served(address: string, status: number, page: ServedPage | undefined): void;
    /** The shop's robots.txt with `Crawl-delay` added when asked for. */
    robotsTxt(plain: string): string;
    stats(): AntiBotStats;
    /** Zeroes the stats; what the policy holds (tokens, blocked addresses, sessions, the secret) stays. */
    resetStats(): void;
}

/** What `stats()` gives before any request, and what a shop without the anti-bot mode reports. */
export function emptyAntiBotStats(): AntiBotStats {
    return {
        byAddress: {},
        servedByCategory: {},
        userAgentsBySession: {},
        challengeSolvers: {},
        blockedAddresses: [],
        arrivals: [],
    };
}

/** The client's address, `::ffff:127.0.0.2` written as `127.0.0.2`. */
export function sourceAddress(req: IncomingMessage): string {
    const address = req.socket.remoteAddress ?? '';
    return address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
}

export function createAntiBot(options: AntiBotOptions): AntiBot {
    const resolved = resolveAntiBotOptions(options);
    const residential = new Set(resolved.residentialAddresses);
    const secret = randomBytes(32);
    const buckets = new Map<string, { tokens: number; at: number }>();
    /** 429s received per address, for the budget; not stats, so a reset keeps them. */
    const limitedTotal = new Map<string, number>();
    const blocked: string[] = [];
    const sessionOwners = new Map<string, string>();
    let counters = emptyCounters();

    function tokenFor(address: string): string {
        return createHmac('sha256', secret).update(address).digest('hex');
    }

    /** Refills the address's bucket for the time since its last request and takes a token if one is there. */
    function takeToken(address: string, now: number): boolean {
        const bucket = buckets.get(address) ?? { tokens: resolved.burst, at: now };
        bucket.tokens = Math.min(resolved.burst, bucket.tokens + ((now - bucket.at) / 1000) * resolved.ratePerSec);
        bucket.at = now;
        buckets.set(address, bucket);
        if (bucket.tokens < 1) return false;
        bucket.tokens -= 1;
        return true;
    }

    function check(address: string, req: IncomingMessage, pathname: string, now: number): Verdict {
        const counts = countsFor(counters, address);
        counts.requests++;
        counters.arrivals.push(now);
        const refuse = (): Verdict => ({ reply: refusal(req.headers.host ?? '127.0.0.1') });

        if ((limitedTotal.get(address) ?? 0) >= resolved.budget) {
            counts.overBudget++;
            return refuse();
        }
        if (resolved.hardCategory && pathname.startsWith('/premium/') && !residential.has(address)) {
            counts.hardBlocked++;
            return refuse();
        }
        if (!takeToken(address, now)) {
            counts.limited++;
            const total = (limitedTotal.get(address) ?? 0) + 1;
            limitedTotal.set(address, total);
            if (total === resolved.budget) blocked.push(address);
            return { reply: tooManyRequests(resolved.retryAfterSecs) };
        }
        if (pathname === '/robots.txt') return {};
        if (resolved.requireBrowserHeaders && !browserLike(req.headers)) {
            counts.badHeaders++;
            return refuse();
        }

        const cookies = parseCookies(req.headers.cookie);
        let sid = cookies.get('sid');
        const owner = sid === undefined ? undefined : sessionOwners.get(sid);
        let setCookie: string | undefined;
        if (sid === undefined || owner === undefined) {
            sid = randomBytes(12).toString('hex');
            sessionOwners.set(sid, address);
            setCookie = `sid=${sid}; Path=/`;
        }
        const userAgent = req.headers['user-agent'] ?? '';
        addTo(counters.userAgentsBySession, sid, userAgent);
        if (owner !== undefined && owner !== address) {
            counts.stolenSession++;
            return refuse();
        }

        if (resolved.jsChallenge) {
            const token = tokenFor(address);
            if (cookies.get('js_ok') !== token) {
                counts.challenged++;
                return { reply: jsChallenge(token), setCookie };
            }
            counts.challengesSolved = 1;
            addTo(counters.challengeSolvers, address, userAgent);
        }
        return { setCookie };
    }

    return {
        check,
        served(address, status, page) {
            if (status < 200 || status >= 300) return;
            countsFor(counters, address).served++;
            if (!page) return;
            let byCategory = counters.servedByCategory[address];
            if (!byCategory) {
                byCategory = {};
                counters.servedByCategory[address] = byCategory;
            }
            let served = byCategory[page.categorySlug];
            if (!served) {
                served = { listings: 0, products: 0 };
                byCategory[page.categorySlug] = served;
            }
            if (page.kind === 'listing') served.listings++;
            else served.products++;
        },
        robotsTxt(plain) {
            const delay = resolved.crawlDelaySecs;
            return delay === undefined ? plain : plain.replace(/^(User-agent: \*\n)/, `$1Crawl-delay: ${delay}\n`);
        },
        stats: () => ({
            byAddress: structuredClone(counters.byAddress),
            servedByCategory: structuredClone(counters.servedByCategory),
            userAgentsBySession: Object.fromEntries(
                [...counters.userAgentsBySession].map(([sid, agents]) => [sid, [...agents]]),
            ),
            challengeSolvers: Object.fromEntries(
                [...counters.challengeSolvers].map(([address, agents]) => [address, [...agents]]),
            ),
            blockedAddresses: [...blocked],
            arrivals: [...counters.arrivals],
        }),
        resetStats: () => {
            counters = emptyCounters();
        },
    };
}

/**
 * Whether a request's headers are a browser's: `user-agent` starts with `Mozilla/5.0`, `accept`
 * and `accept-language` are there, and a user agent naming `Chrome/<major>` comes with a
 * `sec-ch-ua` whose Chromium or Google Chrome brand has that major version — an HTTP client that
 * copies a Chrome user agent but not its client hints is the commonest inconsistency bot managers catch.
 */
export function browserLike(headers: IncomingHttpHeaders): boolean {
    const userAgent = headers['user-agent'] ?? '';
    if (!userAgent.startsWith('Mozilla/5.0') || !headers.accept || !headers['accept-language']) return false;
    const chrome = /Chrome\/(\d+)/.exec(userAgent);
    if (!chrome) return true;
    const hints = String(headers['sec-ch-ua'] ?? '');
    for (const [, brand, version] of hints.matchAll(/"([^"]*)"\s*;\s*v\s*=\s*"(\d+)/g)) {
        if ((brand === 'Chromium' || brand === 'Google Chrome') && version === chrome[1]) return true;
    }
    return false;
}

interface Counters {
    byAddress: Record<string, AddressStats>;
    servedByCategory: Record<string, Record<string, CategoryServed>>;
    userAgentsBySession: Map<string, Set<string>>;
    challengeSolvers: Map<string, Set<string>>;
    arrivals: number[];
}

function emptyCounters(): Counters {
    return {
        byAddress: {},
        servedByCategory: {},
        userAgentsBySession: new Map(),
        challengeSolvers: new Map(),
        arrivals: [],
    };
}

function countsFor(counters: Counters, address: string): AddressStats {
    const known = counters.byAddress[address];
    if (known) return known;
    const counts: AddressStats = {
        requests: 0,
        served: 0,
        limited: 0,
        overBudget: 0,
        badHeaders: 0,
        stolenSession: 0,
        challenged: 0,
        challengesSolved: 0,
        hardBlocked: 0,
    };
    counters.byAddress[address] = counts;
    return counts;
}

function addTo(sets: Map<string, Set<string>>, key: string, value: string): void {
    let set = sets.get(key);
    if (!set) {
        set = new Set();
        sets.set(key, set);
    }
    set.add(value);
}

/** `a=1; b=2` → name → value; the first of a repeated name wins, as browsers send the most specific first. */
function parseCookies(header: string | undefined): Map<string, string> {
    const cookies = new Map<string, string>();
    for (const part of (header ?? '').split(';')) {
        const at = part.indexOf('=');
        if (at < 0) continue;
        const name = part.slice(0, at).trim();
        if (!cookies.has(name)) cookies.set(name, part.slice(at + 1).trim());
    }
    return cookies;
}
