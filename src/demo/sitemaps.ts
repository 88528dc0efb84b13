/**
 * The fixture shop's sitemaps (`ShopOptions.sitemaps`), as a large store publishes them:
 *
 * - `/sitemap.xml`, a sitemap index, sent gzip-encoded (Content-Encoding) to a client that accepts
 *   that, naming the product sitemaps; robots.txt names it in a `Sitemap:` line;
 * - `/sitemaps/products-1.xml.gz`, `/sitemaps/products-2.xml.gz`: gzip files (no Content-Encoding),
 *   each listing half of the products, every URL with a `<lastmod>` (`productLastmod`, or when its
 *   page changed if a later generation changed it);
 * - `/sitemaps/malformed.xml`, listed nowhere: a urlset cut off in the middle of an entry.
 *
 * The bodies are built once, on the first request, and kept: 20,000 products are ~3.1 MB of XML,
 * ~0.2 MB gzipped.
 */
import { gzipSync } from 'node:zlib';
import type { ProductTruth } from './catalog.js';

export interface ShopSitemapPaths {
    /** The sitemap index robots.txt names. */
    index: string;
    /** The gzip product sitemaps the index names, in order. */
    products: string[];
    /** A sitemap cut off mid-entry, listed nowhere. */
    malformed: string;
}

/** A sitemap as the shop sends it. */
export interface SitemapReply {
    body: Buffer;
    contentType: string;
    headers?: Record<string, string>;
}

export const SHOP_SITEMAP_PATHS: ShopSitemapPaths = {
    index: '/sitemap.xml',
    products: ['/sitemaps/products-1.xml.gz', '/sitemaps/products-2.xml.gz'],
    malformed: '/sitemaps/malformed.xml',
};

const XMLNS = 'http://www.sitemaps.org/schemas/sitemap/0.9';
/** Product 1's lastmod; each product after it one minute later. */
const FIRST_LASTMOD_MS = Date.UTC(2024, 0, 1, 9, 30);

/**
 * The `<lastmod>` of a product's sitemap entry: a W3C datetime in the shop's zone (+01:00),
 * `2024-01-01T10:30:00+01:00` for product 1 and a minute later for each id after it.
 */
export function productLastmod(product: Pick<ProductTruth, 'id'>): string {
    return w3cDatetime(FIRST_LASTMOD_MS + (product.id - 1) * 60_000);
}

/** A moment as a W3C datetime in the shop's zone (+01:00), to the second. */
export function w3cDatetime(ms: number): string {
    return `${new Date(ms + 3_600_000).toISOString().slice(0, 19)}+01:00`;
}

/**
 * Answers the sitemap paths of a shop at `origin` selling `products`; undefined for any other path.
 * `lastmod` gives each product's `<lastmod>`; default `productLastmod`.
 */
export function shopSitemaps(
    products: readonly ProductTruth[],
    origin: () => string,
    lastmod: (product: ProductTruth) => string = productLastmod,
): (pathname: string, acceptsGzip: boolean) => SitemapReply | undefined {
    let bodies: Map<string, Buffer> | undefined;
    const build = () => {
        // The products in as many even parts as there are product sitemaps, the first ones the fuller.
        const size = Math.ceil(products.length / SHOP_SITEMAP_PATHS.products.length);
        const parts = SHOP_SITEMAP_PATHS.products.map((path, i) => ({
            path,
            products: products.slice(i * size, (i + 1) * size),
        }));
        const index = parts.map(
            ({ path }) => `<sitemap><loc>${origin()}${path}</loc><lastmod>2024-02-01</lastmod></sitemap>`,
        );
        return new Map([
            [SHOP_SITEMAP_PATHS.index, Buffer.from(document('sitemapindex', index))],
            ...parts.map(
                (part) =>
                    [
                        part.path,
                        gzipSync(
                            document(
                                'urlset',
                                part.products.map((product) => urlEntry(origin(), product, lastmod)),
                            ),
                        ),
                    ] as const,
            ),
            // Cut inside the second entry's <loc>: strict XML parsers fail it at the end.
            [
                SHOP_SITEMAP_PATHS.malformed,
                Buffer.from(
                    document(
                        'urlset',
                        products.slice(0, 2).map((product) => urlEntry(origin(), product, lastmod)),
                    ),
                ).subarray(0, 300),
            ],
        ]);
    };
    return (pathname, acceptsGzip) => {
        bodies ??= build();
        const body = bodies.get(pathname);
        if (!body) return undefined;
        if (pathname.endsWith('.gz')) return { body, contentType: 'application/gzip' };
        const xml = { contentType: 'application/xml; charset=utf-8' };
        return pathname === SHOP_SITEMAP_PATHS.index && acceptsGzip
            ? { ...xml, body: gzipSync(body), headers: { 'Content-Encoding': 'gzip' } }
            : { ...xml, body };
    };
}

/** robots.txt's line naming the sitemap index. */
export function sitemapRobotsLine(origin: string): string {
    return `Sitemap: ${origin}${SHOP_SITEMAP_PATHS.index}\n`;
}

function document(root: 'urlset' | 'sitemapindex', entries: string[]): string {
    return `<?xml version="1.0" encoding="UTF-8"?>\n<${root} xmlns="${XMLNS}">\n${entries.join('\n')}\n</${root}>\n`;
}

function urlEntry(origin: string, product: ProductTruth, lastmod: (product: ProductTruth) => string): string {
    return (
        `<url><loc>${origin}${product.path}</loc><lastmod>${lastmod(product)}</lastmod>` +
        '<changefreq>weekly</changefreq></url>'
    );
}
