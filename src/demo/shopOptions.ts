/**
 * The fixture shop's options (shop.ts): what it serves and how it misbehaves, with their defaults
 * and checks.
 */
import type { AntiBotOptions } from './antiBotOptions.js';
import type { TransientFailure } from './catalog.js';
import type { PageWeight } from './dressing.js';

const TRANSIENT_FAILURE_KINDS: readonly TransientFailure[] = ['503', 'reset', 'hang'];

export interface ShopOptions {
    /** The address it listens on (a test's network world gives its own). Default: 127.0.0.1. */
    host?: string;
    /** Seed of the generated catalog; the same seed gives the same shop. Default: 1. */
    seed?: number;
    /** Number of products, ids 1..products. Default: 200. */
    products?: number;
    /** Number of categories; products are spread evenly over them. Default: 5. */
    categories?: number;
    /**
     * `'real'`: pages of a real store's weight (product pages ~14 KB, listings ~23 KB, 150+ links
     * each, of which the routes follow the same ones as in `'light'`; dressing.ts). The catalog,
     * the crawl graph and every extracted value stay those of the light shop. Default: `'light'`.
     */
    pageWeight?: PageWeight;
    /** Product cards per listing page (dead links come on top). Default: 20. */
    productsPerPage?: number;
    /** Share of product pages whose title and price are filled in only by an inline script. Default: 0.1. */
    scriptOnlyRate?: number;
    /**
     * Share of product pages whose first request fails, half with a 503, half with a
     * connection reset (the socket is destroyed without a response); later requests succeed.
     * Default: 0.03.
     */
    transientFailureRate?: number;
    /**
     * How the `transientFailureRate` products fail, cycled through in pick order (so with
     * `['503', 'reset']` half answer 503 and half have their connection reset). `'hang'`: the
     * shop accepts the request and never answers — the socket stays open, no bytes are sent —
     * until the client gives up or the shop closes; counted in the stats under `'hang'`. Every
     * kind fails the product's first request only. Default: `['503', 'reset']`.
     */
    transientFailureKinds?: readonly TransientFailure[];
    /**
     * Listing-page links to products that do not exist: 404, and
     * the last one 410 Gone when there are 2 or more. Default: 5.
     */
    notFoundLinks?: number;
    /**
     * Listing-page links to `/products/broken-<n>` (n = 1, 2, …), product-like pages that answer
     * 503 to every request, spread over the listing pages like the `notFoundLinks`. Not products:
     * their paths are `Shop.persistentFailurePaths`. Default: 0.
     */
    persistentFailures?: number;
    /**
     * A share `rate` of the products (seeded; none of them a transient failure, so at most the
     * products that are not) whose first request gets `status` with the header
     * `Retry-After: <seconds>` (a whole number); later requests succeed. Their paths are
     * `Shop.retryAfterPaths`. `status` defaults to 429. Default: none.
     */
    retryAfter?: { rate: number; seconds: number; status?: 429 | 503 };
    /**
     * Sitemaps (sitemaps.ts): robots.txt names `/sitemap.xml`, an index (gzip-encoded to a client that
     * accepts it) of two gzip files listing the products, each with a lastmod; and
     * `/sitemaps/malformed.xml`, listed nowhere, is cut off mid-entry. Default: false.
     */
    sitemaps?: boolean;
    /**
     * HTTP validators (validators.ts): of the pages (home, listings, product pages), a third by a hash of
     * the pathname carry a strong `ETag` (a hash of the body), a third a `Last-Modified` (when the page's
     * bytes last changed: the shop's start, or the `advance` that changed them), the rest neither. A
     * conditional GET on the page's own validator is answered `304 Not Modified`, with no body, after the
     * same `latencyMs` as a 200. Default: false.
     */
    validators?: boolean;
    /** Delay before every response, in milliseconds (not before `/__stats`). Default: 0. */
    latencyMs?: number;
    /**
     * Spread of `latencyMs`, as a share of it: each response waits a delay drawn uniformly from
     * `latencyMs * (1 ± latencyJitter)` (0.1: 2,500 ms becomes 2,250..2,750 ms), as a real site's
     * times vary, so requests started together do not all come back in the same instant. Between 0
     * and 1. Default: 0 (every response waits `latencyMs` exactly).
     */
    latencyJitter?: number;
    /**
     * After this many product pages have been served, the shop "redesigns" its product page:
     * the title moves to `h1.product-name`, so a selector written for the old layout finds
     * nothing — layout drift. Default: never.
     */
    redesignAfter?: number;
    /**
     * Rate-limited mode: at most `maxConcurrent` requests are served at once (counted from
     * arrival to the end of the response, so use `latencyMs` to make them overlap); a request
     * arriving while that many are in progress gets `status` at once, without the latency, and
     * is counted in the stats under that status. Real sites limit by concurrency or by requests
     * per window; concurrency is what a client's concurrency controller can learn. Default: no limit.
     */
    rateLimit?: { maxConcurrent: number; status?: 429 | 503 };
    /**
     * Anti-bot mode: a bot manager in front of the shop that rate-limits, checks headers, binds
     * sessions to addresses, challenges and blocks per source address (antiBotOptions.ts has its
     * options and their defaults; antiBot.ts the rules). Default: off.
     */
    antiBot?: AntiBotOptions;
}

/**
 * `rateLimit`, `retryAfter`, `antiBot`, `sitemaps` and `validators` stay optional: absent means none (antiBot.ts
 * resolves its own).
 */
type ResolvedOptions = Required<Omit<ShopOptions, 'rateLimit' | 'retryAfter' | 'antiBot' | 'sitemaps' | 'validators'>>;

export function resolveOptions(options: ShopOptions): ResolvedOptions {
    const resolved: ResolvedOptions = {
        host: options.host ?? '127.0.0.1',
        seed: options.seed ?? 1,
        products: options.products ?? 200,
        categories: options.categories ?? 5,
        pageWeight: options.pageWeight ?? 'light',
        productsPerPage: options.productsPerPage ?? 20,
        scriptOnlyRate: options.scriptOnlyRate ?? 0.1,
        transientFailureRate: options.transientFailureRate ?? 0.03,
        transientFailureKinds: options.transientFailureKinds ?? ['503', 'reset'],
        notFoundLinks: options.notFoundLinks ?? 5,
        persistentFailures: options.persistentFailures ?? 0,
        latencyMs: options.latencyMs ?? 0,
        latencyJitter: options.latencyJitter ?? 0,
        redesignAfter: options.redesignAfter ?? Infinity,
    };
    const counts = ['products', 'notFoundLinks', 'persistentFailures', 'latencyMs'] as const;
    if (!(resolved.redesignAfter >= 0)) throw new RangeError('shop option redesignAfter must be >= 0');
    const maxConcurrent = options.rateLimit?.maxConcurrent;
    if (maxConcurrent !== undefined && !(Number.isInteger(maxConcurrent) && maxConcurrent >= 1)) {
        throw new RangeError('shop option rateLimit.maxConcurrent must be a whole number >= 1');
    }
    for (const name of counts) {
        if (!Number.isInteger(resolved[name]) || resolved[name] < 0)
            throw new RangeError(`shop option ${name} must be a whole number >= 0`);
    }
    for (const name of ['categories', 'productsPerPage'] as const) {
        if (!Number.isInteger(resolved[name]) || resolved[name] < 1)
            throw new RangeError(`shop option ${name} must be a whole number >= 1`);
    }
    for (const name of ['scriptOnlyRate', 'transientFailureRate', 'latencyJitter'] as const) {
        if (!(resolved[name] >= 0 && resolved[name] <= 1))
            throw new RangeError(`shop option ${name} must be between 0 and 1`);
    }
    if (resolved.pageWeight !== 'light' && resolved.pageWeight !== 'real')
        throw new RangeError("shop option pageWeight must be 'light' or 'real'");
    const kinds = resolved.transientFailureKinds;
    if (!Array.isArray(kinds) || kinds.length === 0 || !kinds.every((kind) => TRANSIENT_FAILURE_KINDS.includes(kind))) {
        throw new RangeError(
            `shop option transientFailureKinds must be a non-empty list of ${TRANSIENT_FAILURE_KINDS.join(', ')}`,
        );
    }
    if (options.retryAfter) {
        const { rate, seconds, status = 429 } = options.retryAfter;
        if (!(rate >= 0 && rate <= 1)) throw new RangeError('shop option retryAfter.rate must be between 0 and 1');
        if (!(Number.isInteger(seconds) && seconds >= 0))
            throw new RangeError('shop option retryAfter.seconds must be a whole number >= 0');
        if (status !== 429 && status !== 503) throw new RangeError('shop option retryAfter.status must be 429 or 503');
    }
    return resolved;
}

/**
 * A response's delay: `latencyMs`, spread by `latencyJitter`. Math.random, not the seed: which request
 * gets which delay depends on arrival order anyway, which no seed fixes.
 */
export function responseDelayMs({
    latencyMs,
    latencyJitter,
}: Pick<ResolvedOptions, 'latencyMs' | 'latencyJitter'>): number {
    return latencyJitter === 0 ? latencyMs : latencyMs * (1 + latencyJitter * (2 * Math.random() - 1));
}
