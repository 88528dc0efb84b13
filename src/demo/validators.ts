/**
 * The fixture shop's HTTP validators (`ShopOptions.validators`), as a recrawl meets them: a third of
 * the pages carry a strong `ETag` (a hash of the body bytes), a third a `Last-Modified` (when the
 * page's bytes last changed), the rest neither — chosen by a hash of the pathname, so a page keeps its
 * kind across requests and generations. A conditional GET that the page's own validator satisfies is
 * answered 304 with no body; a page ignores the condition header of the validator it does not carry.
 *
 * Only pages carry validators: the home page, the listings and the product pages.
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { DressedCatalog } from './dressing.js';
import { homePage, listingPage, productPage } from './pages.js';

export type ValidatorKind = 'etag' | 'last-modified' | 'none';

/** The validator a page carries, by an FNV-1a hash of its pathname (no query): a third each. */
export function validatorKindOf(pathname: string): ValidatorKind {
    let hash = 0x811c9dc5;
    for (let i = 0; i < pathname.length; i++) hash = Math.imul(hash ^ pathname.charCodeAt(i), 0x01000193);
    const kinds = ['etag', 'last-modified', 'none'] as const;
    return kinds[(hash >>> 0) % 3] ?? 'none';
}

/** A strong entity tag of `body`: a hash of its bytes, quoted. */
export function etagOf(body: string | Buffer): string {
    return `"${createHash('sha1').update(body).digest('base64url')}"`;
}

/**
 * The validator headers of a page of `kind` with `body`, last changed at `lastModified` (ms, whole
 * seconds), and whether the request's condition on that validator holds — then the answer is 304.
 * `If-None-Match` matches by weak comparison, as RFC 9110 has it for GET; `*` matches any page.
 */
export function conditional(
    kind: ValidatorKind,
    body: string | Buffer,
    lastModified: number,
    request: IncomingHttpHeaders,
): { headers: Record<string, string>; notModified: boolean } {
    if (kind === 'etag') {
        const etag = etagOf(body);
        const tags = request['if-none-match']?.split(',').map((tag) => tag.trim().replace(/^W\//, ''));
        return { headers: { ETag: etag }, notModified: tags?.some((tag) => tag === etag || tag === '*') ?? false };
    }
    if (kind === 'last-modified') {
        const since = Date.parse(request['if-modified-since'] ?? '');
        return {
            headers: { 'Last-Modified': new Date(lastModified).toUTCString() },
            notModified: since >= lastModified,
        };
    }
    return { headers: {}, notModified: false };
}

/** `ms` down to the whole second, as an HTTP date carries it. */
export function wholeSecond(ms: number): number {
    return Math.floor(ms / 1000) * 1000;
}

/**
 * When each page's bytes last changed. Every page starts at the shop's start; `advance` renders every
 * page of the old and the new generation and moves those whose bytes differ (or that are new) to the
 * moment of the change. Keys are `/`, the listing paths as `Shop.listingPaths` has them, and product paths.
 */
export class PageTimes {
    readonly #startedAt: number;
    readonly #changedAt = new Map<string, number>();
    /** The body hashes of the generation served, once `advance` has rendered it. */
    #hashes: Map<string, string> | undefined;

    constructor(startedAt: number) {
        this.#startedAt = startedAt;
    }

    lastModified(key: string): number {
        return this.#changedAt.get(key) ?? this.#startedAt;
    }

    /** Whether the page at `key` changed after the shop started. */
    changed(key: string): boolean {
        return this.#changedAt.has(key);
    }

    /** Moves the pages whose bytes differ in `next` to `moment`; returns their keys. */
    advance(old: PageRenderer, next: PageRenderer, moment: number): string[] {
        const before = this.#hashes ?? pageHashes(old);
        const after = pageHashes(next);
        const changed: string[] = [];
        for (const [key, hash] of after) {
            if (before.get(key) === hash) continue;
            this.#changedAt.set(key, moment);
            changed.push(key);
        }
        this.#hashes = after;
        return changed;
    }
}

/** A generation's pages as the shop serves them (product pages in their first layout). */
export interface PageRenderer {
    catalog: DressedCatalog;
    origin: string;
    productsPerPage: number;
}

/** The listing page `page` of `path` as `Shop.listingPaths` names it. */
export function listingKey(path: string, page: number): string {
    return page === 1 ? path : `${path}?page=${page}`;
}

function pageHashes({ catalog, origin, productsPerPage }: PageRenderer): Map<string, string> {
    const hashes = new Map<string, string>([['/', etagOf(homePage(catalog))]]);
    for (const category of catalog.categories) {
        for (let page = 1; page <= category.pageCount; page++) {
            const body = listingPage(catalog, category, page, productsPerPage);
            hashes.set(listingKey(category.path, page), etagOf(body));
        }
    }
    for (const product of catalog.products) hashes.set(product.path, etagOf(productPage(catalog, product, origin)));
    return hashes;
}
