/**
 * The fixture shop: a local e-commerce site on 127.0.0.1 for integration tests, benchmarks and
 * the `npm start` demo. It is generated from a seed (see catalog.ts), so a test knows every
 * product a crawl should find, and it misbehaves the way real shops do: redirects, tracking
 * parameters, duplicate links, a robots.txt, dead links, pages that need a browser, and
 * requests that fail once and then succeed. With `sitemaps` it publishes its products in
 * gzipped sitemaps too (sitemaps.ts). Opt-in failure modes for retry tests: requests that
 * hang, links that always fail, and products that ask the client to come back after Retry-After.
 * With `antiBot` it sits behind a bot manager that limits, challenges and blocks per source
 * address (antiBot.ts); its refusals are answered at once, without `latencyMs`.
 *
 * For recrawls it changes between runs: `advance` moves it, in place, to its next generation
 * (generations.ts), and with `validators` its pages carry ETag or Last-Modified and answer
 * conditional requests with 304 (validators.ts). A page's body is the same on every request in a
 * generation (but for the `redesignAfter` drift).
 *
 * Every request except `GET /__stats` is counted by pathname and status (`'reset'` for a
 * dropped connection, `'hang'` for a request never answered), with its arrival time;
 * `/__stats` serves the counts as JSON for tests in another process.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { type AntiBotStats, createAntiBot, emptyAntiBotStats, type ServedPage, sourceAddress } from './antiBot.js';
import { buildCatalog, type Catalog, type ProductTruth, productById } from './catalog.js';
import { type CatalogChanges, type ShopChanges, ShopGenerations } from './generations.js';
import {
    adminPage,
    gonePage,
    homePage,
    listingPage,
    notFoundPage,
    productPage,
    robotsTxt,
    tooManyRequestsPage,
    unavailablePage,
} from './pages.js';
import { dressingFor } from './dressing.js';
import { resolveOptions, responseDelayMs, type ShopOptions } from './shopOptions.js';
import {
    productLastmod,
    SHOP_SITEMAP_PATHS,
    type ShopSitemapPaths,
    shopSitemaps,
    sitemapRobotsLine,
    w3cDatetime,
} from './sitemaps.js';
import { conditional, listingKey, validatorKindOf } from './validators.js';

export type { ProductTruth, TransientFailure } from './catalog.js';
export type { CatalogChanges, ShopChanges } from './generations.js';
export type { ShopOptions } from './shopOptions.js';
export { productLastmod, type ShopSitemapPaths } from './sitemaps.js';
export type { AddressStats, AntiBotOptions, AntiBotStats, CategoryServed } from './antiBot.js';

export interface ShopStats {
    /** Requests counted (all but `/__stats`). */
    total: number;
    /** Pathname (no query) → status code as a string, `'reset'` or `'hang'` → count. */
    byPath: Record<string, Record<string, number>>;
}

export interface Shop {
    /** `http://127.0.0.1:PORT`, no trailing slash. */
    url: string;
    port: number;
    /** Ground truth of every product the shop sells in its current generation, by id order. */
    readonly products: ProductTruth[];
    /** Paths of the dead product links on the listing pages. */
    notFoundPaths: string[];
    /**
     * Paths of the listing-page links that always answer 503,
     * `/products/broken-<n>` (empty unless `persistentFailures`).
     */
    persistentFailurePaths: string[];
    /** Product paths whose first request gets a Retry-After answer, in pick order (empty unless `retryAfter`). */
    retryAfterPaths: string[];
    /**
     * Every listing page of the current generation: `/category/<slug>` for page 1, `/category/<slug>?page=N`
     * after it (`/premium/<slug>` for the hard category).
     */
    readonly listingPaths: string[];
    /** The generation the shop serves: 0 at start, one more after each `advance`. */
    readonly generation: number;
    /**
     * Moves the shop, in place, to its next generation, derived from its seed and the generation's number:
     * prices change, products are added, removed and moved (`ShopChanges` has the shares and defaults).
     * Returns what changed; `products` and `listingPaths` are the new generation's from then on.
     */
    advance(changes?: ShopChanges): CatalogChanges;
    /** The paths of the sitemaps (undefined unless `sitemaps`). */
    sitemapPaths?: ShopSitemapPaths;
    /** Slug of the anti-bot mode's hard category, under `/premium/` (undefined unless `antiBot.hardCategory`). */
    hardCategorySlug?: string;
    stats(): ShopStats;
    /**
     * The anti-bot layer's counts (empty when `antiBot` is off);
     * `/__stats` serves them under `antiBot`. resetStats zeroes them too.
     */
    antiBotStats(): AntiBotStats;
    /**
     * `Date.now()` at the arrival of every counted request to `pathname` (no query), in arrival
     * order; `[]` for a path never requested. A request that arrives but is dropped before it is
     * counted (the client gave up during `latencyMs`) is not in it.
     */
    requestTimes(pathname: string): number[];
    /** Zeroes the counts and forgets the arrival times. Products that already failed once keep succeeding. */
    resetStats(): void;
    close(): Promise<void>;
}

/** A response: a status and a body, a dropped connection, or no answer at all. */
type Reply =
    | {
          status: number;
          body: string | Buffer;
          contentType?: string;
          location?: string;
          retryAfter?: number;
          headers?: Record<string, string>;
      }
    | { reset: true }
    | { hang: true };

const HTML = 'text/html; charset=utf-8';

export async function startShop(options: ShopOptions = {}): Promise<Shop> {
    const resolved = resolveOptions(options);
    const antiBot = options.antiBot && createAntiBot(options.antiBot);
    const built = buildCatalog({
        ...resolved,
        retryAfterRate: options.retryAfter?.rate ?? 0,
        hardCategory: options.antiBot?.hardCategory,
    });
    const first = { ...built, dressing: dressingFor(resolved.pageWeight, built, resolved.seed) };
    /** The generation served (`generations.served`) changes with `advance`; dead links and failures do not. */
    const { seed, productsPerPage } = resolved;
    const generations = new ShopGenerations(first, { seed, productsPerPage, origin: () => origin });
    const { pageTimes } = generations;
    const deadLinksByPath = new Map(first.deadLinks.map((d) => [d.path, d]));
    const persistentFailurePaths = new Set(first.persistentFailures.map((d) => d.path));
    const retryAfterPaths = new Set(first.retryAfterPaths);
    /** Products whose first request has had its transient failure or Retry-After answer. */
    const failedOnce = new Set<string>();
    /** Responses of the requests left hanging, so close() can drop them. */
    const hanging = new Set<ServerResponse>();
    /** Arrival times by pathname, for `requestTimes`. */
    let arrivals = new Map<string, number[]>();
    let productPagesServed = 0;
    /** Requests being served now, for `rateLimit`. */
    let serving = 0;
    let stats: ShopStats = { total: 0, byPath: {} };
    let origin = '';
    /** A product's sitemap lastmod: when its page last changed, if it did after the start. */
    const lastmod = (p: ProductTruth) =>
        pageTimes.changed(p.path) ? w3cDatetime(pageTimes.lastModified(p.path)) : productLastmod(p);
    const sitemapsOf = (products: ProductTruth[]) =>
        options.sitemaps ? shopSitemaps(products, () => origin, lastmod) : undefined;
    let sitemaps = sitemapsOf(first.products);

    /** Decides the reply to one request; the only place that knows the shop's URL space. */
    function route(method: string, url: URL, request: IncomingMessage['headers']): Reply {
        const { pathname } = url;
        const { catalog, categoriesByPath, productsByPath } = generations.served;
        /** A page (home, listing, product) with its validators, or 304 when the request's condition holds. */
        const validated = (key: string, body: string): Reply => {
            if (!options.validators) return page(200, body);
            const kind = validatorKindOf(pathname);
            const { headers, notModified } = conditional(kind, body, pageTimes.lastModified(key), request);
            return notModified ? { status: 304, body: '', headers } : { ...page(200, body), headers };
        };
        if (method !== 'GET' && method !== 'HEAD') return { status: 405, body: '' };
        if (pathname === '/') return validated('/', homePage(catalog));
        if (pathname === '/robots.txt') {
            const plain = sitemaps ? robotsTxt + sitemapRobotsLine(origin) : robotsTxt;
            return {
                status: 200,
                body: antiBot ? antiBot.robotsTxt(plain) : plain,
                contentType: 'text/plain; charset=utf-8',
            };
        }
        const sitemap = sitemaps?.(pathname, /\bgzip\b/.test(request['accept-encoding'] ?? ''));
        if (sitemap) return { status: 200, ...sitemap };
        if (pathname === '/admin/') return page(200, adminPage(catalog));

        const alias = /^\/p\/(\d+)$/.exec(pathname);
        const aliased = alias && productById(catalog.products, Number(alias[1]));
        if (aliased) return { status: 301, body: '', location: aliased.path };
        const moved = generations.movedTo(pathname);
        if (moved) return { status: 301, body: '', location: moved };

        const category = categoriesByPath.get(pathname);
        if (category) {
            const pageNumber = Number(url.searchParams.get('page') ?? '1');
            const valid = Number.isInteger(pageNumber) && pageNumber >= 1 && pageNumber <= category.pageCount;
            if (!valid) return notFound();
            const body = listingPage(catalog, category, pageNumber, resolved.productsPerPage);
            return validated(listingKey(category.path, pageNumber), body);
        }

        const product = productsByPath.get(pathname);
        if (product) return productReply(product, validated);

        if (persistentFailurePaths.has(pathname)) return page(503, unavailablePage(catalog));
        if (deadLinksByPath.get(pathname)?.status === 410) return page(410, gonePage(catalog));
        return notFound();
    }

    function productReply(product: ProductTruth, validated: (key: string, body: string) => Reply): Reply {
        const { catalog } = generations.served;
        const failure = catalog.transientFailures.get(product.path);
        if (failure && !failedOnce.has(product.path)) {
            failedOnce.add(product.path);
            if (failure === 'hang') return { hang: true };
            return failure === 'reset' ? { reset: true } : page(503, unavailablePage(catalog));
        }
        if (options.retryAfter && retryAfterPaths.has(product.path) && !failedOnce.has(product.path)) {
            failedOnce.add(product.path);
            const status = options.retryAfter.status ?? 429;
            const body = status === 429 ? tooManyRequestsPage(catalog) : unavailablePage(catalog);
            return { ...page(status, body), retryAfter: options.retryAfter.seconds };
        }
        productPagesServed += 1;
        const redesigned = productPagesServed > resolved.redesignAfter;
        return validated(product.path, productPage(catalog, product, origin, { redesigned }));
    }

    function notFound(): Reply {
        return page(404, notFoundPage(generations.served.catalog));
    }

    /** The listing or product page at `pathname`, for the anti-bot layer's per-category counts. */
    function servedPage(pathname: string): ServedPage | undefined {
        const { categoriesByPath, productsByPath, categorySlugs } = generations.served;
        const category = categoriesByPath.get(pathname);
        if (category) return { kind: 'listing', categorySlug: category.slug };
        const product = productsByPath.get(pathname);
        if (!product) return undefined;
        const categorySlug = categorySlugs.get(product.category);
        if (categorySlug === undefined)
            throw new Error(`product ${product.id} is in no category of the shop (${product.category})`);
        return { kind: 'product', categorySlug };
    }

    /** Counts one request under `outcome` and remembers when it arrived. */
    function record(pathname: string, outcome: string, arrivedAt: number): void {
        count(stats, pathname, outcome);
        let times = arrivals.get(pathname);
        if (!times) {
            times = [];
            arrivals.set(pathname, times);
        }
        times.push(arrivedAt);
    }

    /** Leaves the request unanswered until the client gives up or the shop closes. */
    function hang(res: ServerResponse): void {
        hanging.add(res);
        res.once('close', () => hanging.delete(res));
    }

    async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
        const arrivedAt = Date.now();
        const url = new URL(req.url ?? '/', 'http://127.0.0.1');
        if (url.pathname === '/__stats') {
            const body = JSON.stringify(antiBot ? { ...stats, antiBot: antiBot.stats() } : stats);
            send(res, { status: 200, body, contentType: 'application/json' });
            return;
        }
        const address = sourceAddress(req);
        const verdict = antiBot?.check(address, req, url.pathname, arrivedAt);
        const cookie = verdict?.setCookie ? { 'Set-Cookie': verdict.setCookie } : undefined;
        if (verdict?.reply) {
            record(url.pathname, String(verdict.reply.status), arrivedAt);
            send(res, {
                status: verdict.reply.status,
                body: verdict.reply.body,
                headers: { ...verdict.reply.headers, ...cookie },
            });
            return;
        }
        if (options.rateLimit) {
            if (serving >= options.rateLimit.maxConcurrent) {
                const status = options.rateLimit.status ?? 429;
                record(url.pathname, String(status), arrivedAt);
                send(res, { status, body: '', contentType: HTML });
                return;
            }
            serving += 1;
            res.once('close', () => (serving -= 1));
        }
        if (resolved.latencyMs > 0) await sleep(responseDelayMs(resolved));
        // The client gave up or the shop closed while we slept: nothing to answer, nothing to count.
        if (req.socket.destroyed) return;
        const reply = route(req.method ?? 'GET', url, req.headers);
        record(url.pathname, 'reset' in reply ? 'reset' : 'hang' in reply ? 'hang' : String(reply.status), arrivedAt);
        if ('reset' in reply) req.socket.resetAndDestroy();
        else if ('hang' in reply) hang(res);
        else {
            send(res, cookie ? { ...reply, headers: { ...reply.headers, ...cookie } } : reply);
            antiBot?.served(address, reply.status, servedPage(url.pathname));
        }
    }

    const server = createServer((req, res) => {
        handle(req, res).catch(() => res.destroy());
    });
    await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, resolved.host, resolve);
    });
    const { port } = server.address() as AddressInfo;
    origin = `http://${resolved.host}:${port}`;

    return {
        url: origin,
        port,
        get products() {
            return generations.served.catalog.products;
        },
        notFoundPaths: first.deadLinks.map((d) => d.path),
        persistentFailurePaths: first.persistentFailures.map((d) => d.path),
        retryAfterPaths: [...first.retryAfterPaths],
        get listingPaths() {
            return listingPaths(generations.served.catalog);
        },
        get generation() {
            return generations.number;
        },
        advance: (changes) => {
            const changed = generations.advance(changes);
            sitemaps = sitemapsOf(generations.served.catalog.products);
            return changed;
        },
        sitemapPaths: sitemaps && structuredClone(SHOP_SITEMAP_PATHS),
        hardCategorySlug: first.categories.find((c) => c.hard)?.slug,
        stats: () => structuredClone(stats),
        antiBotStats: () => antiBot?.stats() ?? emptyAntiBotStats(),
        requestTimes: (pathname) => [...(arrivals.get(pathname) ?? [])],
        resetStats: () => {
            stats = { total: 0, byPath: {} };
            arrivals = new Map();
            antiBot?.resetStats();
        },
        close: () =>
            new Promise<void>((resolve, reject) => {
                server.close((error) => (error ? reject(error) : resolve()));
                // Hanging requests would never end by themselves: drop their connections.
                for (const res of hanging) res.destroy();
                // Keep-alive connections would hold close() open until they time out.
                server.closeAllConnections();
            }),
    };
}

function listingPaths(catalog: Catalog): string[] {
    return catalog.categories.flatMap((category) =>
        Array.from({ length: category.pageCount }, (_, i) =>
            i === 0 ? category.path : `${category.path}?page=${i + 1}`,
        ),
    );
}

function page(status: number, body: string): Reply {
    return { status, body, contentType: HTML };
}

function count(stats: ShopStats, pathname: string, outcome: string): void {
    stats.total++;
    let byOutcome = stats.byPath[pathname];
    if (!byOutcome) {
        byOutcome = {};
        stats.byPath[pathname] = byOutcome;
    }
    byOutcome[outcome] = (byOutcome[outcome] ?? 0) + 1;
}

function send(res: ServerResponse, reply: Exclude<Reply, { reset: true } | { hang: true }>): void {
    // A 304 has no body, and a Content-Length there would claim the length of the 200's.
    const headers: Record<string, string | number> =
        reply.status === 304 ? {} : { 'Content-Length': Buffer.byteLength(reply.body) };
    if (reply.contentType) headers['Content-Type'] = reply.contentType;
    if (reply.location) headers.Location = reply.location;
    if (reply.retryAfter !== undefined) headers['Retry-After'] = String(reply.retryAfter);
    Object.assign(headers, reply.headers);
    res.writeHead(reply.status, headers);
    res.end(reply.body);
}
