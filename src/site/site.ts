/**
 * The route API: the contract between dragnet and the contributors who add sites.
 *
 * A site is one module in `routes/` that default-exports `defineSite({...})`.
 * Each route has one extractor, written against Cheerio's `$`, that runs on the
 * cheap HTTP fetch and, when the route's schema says fields are missing, on the
 * browser-rendered HTML too.
 */
import type { CheerioAPI } from 'cheerio';
import type { AnyNode, Element } from 'domhandler';
import { textContent } from 'domutils';
import type { z } from 'zod';
import { compiledSelector, documentOf, selectUnder } from './selectors.js';

/** Where a page's HTML came from. */
export type Renderer = 'http' | 'browser';

/**
 * `auto` (default): cheap fetch first; the browser only when required fields are missing.
 * `never`: never render; a page that misses fields is quarantined.
 * `always`: skip the cheap fetch and render every page of this route.
 */
export type RenderPolicy = 'auto' | 'never' | 'always';

/** What an extractor and a link function are told about the page. */
export interface PageContext {
    /** The page's URL after redirects (normalized). */
    url: URL;
    /** The route label the page was handled as. */
    label: string;
    /** Which stage produced the HTML. */
    renderer: Renderer;
    /** Whatever the enqueuing page attached to the request. */
    userData: Record<string, unknown>;
}

/** One record, or a list of records (a page of quotes is ten records). */
export type Extracted<T> = T | T[] | null | undefined;

/** A record as an extractor may return it: any field can be missing; the schema decides if that matters. */
export type Draft<T> = T extends Record<string, unknown> ? { [K in keyof T]?: T[K] | null } : T;

/** A rule for links a route discovers: a CSS selector of `<a href>` elements, or a function. */
export type EnqueueRule =
    | { selector: string; label: string }
    | { links: ($: CheerioAPI, page: PageContext) => Iterable<string>; label: string };

/** A URL pattern: a RegExp tested against the whole URL, or a predicate. */
export type UrlMatcher = RegExp | ((url: URL) => boolean);

export interface RouteDefinition<Schema extends z.ZodType = z.ZodType> {
    /**
     * URLs this route handles when they arrive without a label (start URLs, redirects).
     * Routes are tried in declaration order; the first match wins.
     */
    match?: UrlMatcher;
    /** Returns what the page holds. Omit for a navigation-only route (listings, indexes). */
    extract?: ($: CheerioAPI, page: PageContext) => Extracted<Draft<z.input<Schema>>>;
    /**
     * The zod schema each record must pass: which fields are required and what values are sane.
     * A record that fails it escalates to the browser (`render: 'auto'`) or is quarantined.
     */
    schema?: Schema;
    /**
     * The fewest records a page of this route must yield; fewer counts like a missing field.
     * Default: 1 for a route with an extractor.
     */
    minRecords?: number;
    /** Links to follow from pages of this route. */
    enqueue?: EnqueueRule[];
    /** When to use the browser. Default: `auto`. */
    render?: RenderPolicy;
    /** Browser stage: a CSS selector to wait for before the HTML is read. */
    waitFor?: string;
    /**
     * Browser stage: what else to wait for, instead of a fixed sleep. `load` (default): the load
     * event; `networkidle`: no network traffic for 500 ms; `fields`: until the extractor's records
     * pass the schema (read again each time the page's DOM changes, and at least every second).
     * Each gives up at the wait timeout and lets the schema judge what is there.
     */
    waitUntil?: 'load' | 'networkidle' | 'fields';
    /**
     * The media types a page of this route may have; any other is dead-lettered as
     * `unsupported-content-type` before its body is read. Default: `text/html` and `application/xhtml+xml`.
     */
    contentTypes?: string[];
}

/** A wire profile: how a request looks on the wire below its headers (vocabulary/wire.ts, docs/identities.md). */
export type WireProfile = 'fast' | 'chrome';
/** What the site option `wire` takes: a profile, or `auto`. */
export type WireChoice = WireProfile | 'auto';

/** A proxy tier as a site module declares it (fetch/egress/proxyTiers.ts resolves it). */
export interface ProxyTierDefinition {
    /** Short name: in logs, stats and the report (`datacenter`, `residential`). */
    name: string;
    /** The proxies (`http://user:password@host:port`); `direct` or none: no proxy. Credentials are never shown. */
    proxyUrls?: readonly string[] | 'direct';
    /** Relative cost of one request on this tier. Default: 10x the tier before, the first 1. */
    cost?: number;
    /** The wire profile of this tier's requests (docs/identities.md). Default: the site's `wire`. */
    wire?: WireProfile;
}

export interface SiteDefinition {
    /** Short name; names the dataset and the other stores. */
    name: string;
    /** Where a run starts when no `--start-url` is given. */
    startUrls: string[];
    /** Routes keyed by label. */
    routes: Record<string, RouteDefinition>;
    /**
     * Query parameters that never change the page, dropped before dedup (added to the built-in `utm_*`, `ref`, ...).
     */
    trackingParams?: string[];
    /** Domains the site may crawl beyond its start URLs' hosts, each with its subdomains (see frontier/scope.ts). */
    allowedDomains?: string[];
    /** Links taken from one page; the rest are counted in `linksSkipped.overLimit`. Default: 1,000. */
    maxLinksPerPage?: number;
    /**
     * Sent with every request of the site (HTTP stage; e.g. Authorization, Cookie): the way to give
     * a site credentials, rather than in its URLs. The values of Authorization, Proxy-Authorization,
     * Cookie and Set-Cookie are masked wherever dragnet writes (vocabulary/redact.ts). Default: none.
     */
    headers?: Record<string, string>;
    /** Proxy tiers, cheapest first (fetch/egress/proxyTiers.ts); `--proxy-tier` replaces them. Default: direct. */
    proxyTiers?: ProxyTierDefinition[];
    /**
     * How the site's requests look on the wire (docs/identities.md): `fast` (Node's client), `chrome`
     * (the handshake of the Chromium on the machine), or `auto`: `fast`, moving a section to `chrome`
     * when `fast` gets it blocked. `--wire` replaces it. Default: `auto`.
     */
    wire?: WireChoice;
    /**
     * Most requests per second to the site, over every exit and worker; `--max-rate` replaces it. Default: no limit.
     */
    maxRate?: number;
    /**
     * Most requests in flight to the site in one worker (the HTTP stage's concurrency
     * is the lower of this and `--max-concurrency`). Default: no cap of its own.
     */
    maxConcurrency?: number;
    /**
     * Sitemaps to start from beside the start URLs: `true` for those the `Sitemap:` lines of the start
     * URLs' robots.txt name, or their URLs. Indexes and gzip are read; each URL listed is routed by the
     * routes' `match` patterns, its `<lastmod>` in its userData as `lastmod` (frontier/sitemaps.ts). Default: none.
     */
    sitemaps?: true | readonly string[];
}

/** A route with its label and defaults filled in. */
export interface Route extends RouteDefinition {
    label: string;
    render: RenderPolicy;
    minRecords: number;
}

export interface Site extends Omit<SiteDefinition, 'routes'> {
    routes: Map<string, Route>;
    /**
     * The module the site was loaded from (site/sites.ts), so parse
     * workers can load it too; undefined for a site defined in place.
     */
    moduleUrl?: string;
    /** The route for a label, or for a URL through the routes' `match` patterns. */
    routeFor(label: string | undefined, url: URL): Route | undefined;
}

/** What a site's name may be: it names the site's file in routes/ and its stores. */
export const SITE_NAME = /^[a-z0-9][a-z0-9-]*$/;
export const SITE_NAME_RULE = 'must be lower-case letters, digits and dashes, starting with a letter or digit';

/**
 * Defines a site. Each route's extractor is checked at compile time against the route's own schema:
 * a field of the wrong type, or one the schema does not have, is a type error at the extractor.
 */
export function defineSite<R extends Record<string, RouteDefinition>>(
    definition: Omit<SiteDefinition, 'routes'> & { routes: R & { [L in keyof R]: CheckedRoute<R[L]> } },
): Site {
    const { routes: routeDefinitions, ...rest } = definition;
    if (!SITE_NAME.test(rest.name)) {
        throw new Error(`site name "${rest.name}" ${SITE_NAME_RULE}`);
    }
    const routes = new Map<string, Route>();
    for (const [label, route] of Object.entries<RouteDefinition>(routeDefinitions)) {
        routes.set(label, {
            ...route,
            label,
            render: route.render ?? 'auto',
            minRecords: route.minRecords ?? (route.extract ? 1 : 0),
        });
    }
    for (const url of rest.startUrls) {
        if (!/^https?:$/.test(URL.parse(url)?.protocol ?? ''))
            throw new Error(`site ${rest.name}: start URL "${url}" is not an http:// or https:// URL`);
    }
    for (const route of routes.values()) {
        const notMediaType = route.contentTypes?.find((type) => !/^[^/\s]+\/[^/\s]+$/.test(type));
        if (notMediaType !== undefined)
            throw new Error(
                `site ${rest.name}: route "${route.label}" takes content type "${notMediaType}", which is not a ` +
                    `media type (type/subtype)`,
            );
        for (const rule of route.enqueue ?? []) {
            if (!routes.has(rule.label)) {
                throw new Error(
                    `site ${rest.name}: route "${route.label}" enqueues links to unknown route "${rule.label}"`,
                );
            }
        }
    }
    return {
        ...rest,
        routes,
        routeFor(label, url) {
            if (label) return routes.get(label);
            for (const route of routes.values()) {
                if (route.match && matches(route.match, url)) return route;
            }
            return undefined;
        },
    };
}

/**
 * A route as written, checked against the route API typed by its own schema. The routes are inferred
 * as written first (TypeScript cannot infer a schema per key through a mapped type), so the returned
 * record is no longer a fresh literal and its stray keys would pass: each is typed `never` instead.
 */
export type CheckedRoute<R> = R extends { schema: infer S extends z.ZodType }
    ? RouteDefinition<S> &
          (R extends { extract: (...args: never[]) => infer X }
              ? { extract: ($: CheerioAPI, page: PageContext) => WithoutStrayKeys<X, Draft<z.input<S>>> }
              : unknown)
    : RouteDefinition;

/** `X` with each key that `D` lacks typed `never` (through lists, and each member of a union). */
export type WithoutStrayKeys<X, D> = X extends readonly (infer E)[]
    ? WithoutStrayKeys<E, D>[]
    : X extends object
      ? X & { [K in Exclude<keyof X, keyof D>]: never }
      : X;

function matches(matcher: UrlMatcher, url: URL): boolean {
    return matcher instanceof RegExp ? matcher.test(url.href) : matcher(url);
}

/** Collapsed, trimmed text of the first match, or undefined when nothing (or only blanks) matched. */
export function textOf($: CheerioAPI, selector: string, root?: Parameters<CheerioAPI>[1]): string | undefined {
    const text = collapsedText(firstMatchText($, selector, root));
    return text === '' ? undefined : text;
}

/** Runs of whitespace as one space, the ends trimmed: how textOf reads text. */
export function collapsedText(text: string): string {
    return text.replace(/\s+/g, ' ').trim();
}

/**
 * The first number in `text` (`£1,234.50` → 1234.5; commas dropped,
 * a dot is the decimal point), or undefined: how numberOf reads it.
 */
export function firstNumber(text: string): number | undefined {
    const match = text.replace(/,/g, '').match(/-?\d+(?:\.\d+)?/);
    return match ? Number(match[0]) : undefined;
}

/**
 * The elements `selector` matches, in document order, as `$(selector, root).toArray()` gives them:
 * through a selector compiled once (see `compiledSelector`) where it can be, else through `$`.
 */
export function elementsOf($: CheerioAPI, selector: string, root?: Parameters<CheerioAPI>[1]): Element[] {
    const query = compiledSelector(selector);
    const scope = scopeOf($, root);
    return query && scope ? selectUnder(query, scope) : ($(selector, root).toArray() as Element[]);
}

/** The text of the first element `selector` matches ('' when none does), searching only until that match. */
function firstMatchText($: CheerioAPI, selector: string, root?: Parameters<CheerioAPI>[1]): string {
    const query = compiledSelector(selector);
    const scope = scopeOf($, root);
    if (query && scope) {
        // Stops at the first match, as cheerio's `:first` does.
        const [element] = selectUnder(query, scope, 1);
        return element ? textContent(element) : '';
    }
    // Ending the selector in `:first` makes cheerio stop at the first match; a selector list is matched
    // whole, since `:first` would bind to its last selector only.
    return (selector.includes(',') ? $(selector, root).first() : $(`${selector.trim()}:first`, root)).text();
}

/**
 * The nodes `$(selector, root)` searches under: the document,
 * or the given nodes; undefined for a root given as a selector.
 */
function scopeOf($: CheerioAPI, root: Parameters<CheerioAPI>[1]): AnyNode[] | undefined {
    if (typeof root === 'string') return undefined;
    return root === undefined || root === null
        ? [documentOf($)]
        : Array.isArray(root)
          ? root
          : 'toArray' in root && typeof root.toArray === 'function'
            ? root.toArray()
            : [root as AnyNode];
}

/** The first number in the matched text (`£1,234.50` → 1234.5; a dot is the decimal point), or undefined. */
export function numberOf($: CheerioAPI, selector: string, root?: Parameters<CheerioAPI>[1]): number | undefined {
    const text = textOf($, selector, root);
    return text === undefined ? undefined : firstNumber(text);
}
