/**
 * The fixture shop's anti-bot mode options (antiBot.ts applies them), with their defaults and
 * checks. A client is its TCP source address: behind the test proxies (test/helpers/proxyWorld.ts)
 * each proxy sends from its own loopback address, so the shop can limit and block per proxy as a
 * real target limits and blocks per IP.
 */

export interface AntiBotOptions {
    /**
     * Source addresses the shop treats as datacenter. Informational: every address not listed in
     * `residentialAddresses` counts as datacenter (the machine's own 127.0.0.1 too). Default: [].
     */
    datacenterAddresses?: string[];
    /**
     * Source addresses the shop treats as residential: the only ones `/premium/` serves (`hardCategory`). Default: [].
     */
    residentialAddresses?: string[];
    /** Token bucket per source address: tokens refilled per second. Default: 10. */
    ratePerSec?: number;
    /** Token bucket per source address: its size, the requests an idle address may send at once. Default: 20. */
    burst?: number;
    /** `Retry-After` (whole seconds) on a 429. Default: 1. */
    retryAfterSecs?: number;
    /**
     * How many 429s one address may receive. A request from an address that has already received
     * `budget` 429s is over budget: that address is refused (403 block page) for the rest of the
     * shop's life. Default: 20.
     */
    budget?: number;
    /**
     * Refuse (403 block page, counted `badHeaders`) a request whose `user-agent` does not start with
     * `Mozilla/5.0`, or that has no `accept` or no `accept-language` (or an empty one); and, when the
     * user agent contains `Chrome/<major>` (HeadlessChrome and Edg/OPR user agents too), one whose
     * `sec-ch-ua` is missing or has no `"Chromium";v="<major>"` or `"Google Chrome";v="<major>"`
     * brand with that same major version. `/robots.txt` is exempt. Default: true.
     */
    requireBrowserHeaders?: boolean;
    /**
     * Serve a JS challenge (403, `cf-mitigated: challenge`, "Just a moment...") to every request
     * without a valid `js_ok` cookie, except `/robots.txt`; its script sets `js_ok` (an HMAC of the
     * source address with a per-shop secret, so it works from that address only) and reloads.
     * Default: false.
     */
    jsChallenge?: boolean;
    /** `Crawl-delay: N` in robots.txt. Default: none. */
    crawlDelaySecs?: number;
    /**
     * The last category is "hard": listings at `/premium/<slug>`, products at
     * `/premium/items/<slug>-<id>`, and every request under `/premium/` from a datacenter address is
     * refused (403 block page, counted `hardBlocked`, no token taken, never a 429). Default: false.
     */
    hardCategory?: boolean;
}

export type ResolvedAntiBotOptions = Required<Omit<AntiBotOptions, 'crawlDelaySecs'>> & { crawlDelaySecs?: number };

export function resolveAntiBotOptions(options: AntiBotOptions): ResolvedAntiBotOptions {
    const resolved: ResolvedAntiBotOptions = {
        datacenterAddresses: options.datacenterAddresses ?? [],
        residentialAddresses: options.residentialAddresses ?? [],
        ratePerSec: options.ratePerSec ?? 10,
        burst: options.burst ?? 20,
        retryAfterSecs: options.retryAfterSecs ?? 1,
        budget: options.budget ?? 20,
        requireBrowserHeaders: options.requireBrowserHeaders ?? true,
        jsChallenge: options.jsChallenge ?? false,
        hardCategory: options.hardCategory ?? false,
        crawlDelaySecs: options.crawlDelaySecs,
    };
    if (!(resolved.ratePerSec > 0)) throw new RangeError('shop option antiBot.ratePerSec must be > 0');
    if (!Number.isInteger(resolved.retryAfterSecs) || resolved.retryAfterSecs < 0) {
        throw new RangeError('shop option antiBot.retryAfterSecs must be a whole number >= 0');
    }
    for (const name of ['burst', 'budget'] as const) {
        if (!Number.isInteger(resolved[name]) || resolved[name] < 1)
            throw new RangeError(`shop option antiBot.${name} must be a whole number >= 1`);
    }
    const delay = resolved.crawlDelaySecs;
    if (delay !== undefined && !(Number.isFinite(delay) && delay >= 0))
        throw new RangeError('shop option antiBot.crawlDelaySecs must be >= 0');
    const residential = new Set(resolved.residentialAddresses);
    const both = resolved.datacenterAddresses.filter((address) => residential.has(address));
    if (both.length > 0)
        throw new RangeError(`shop option antiBot: ${both.join(', ')} both datacenter and residential`);
    return resolved;
}
