/**
 * What a crawl of the demo shop leaves behind, made without one: product pages as the shop serves
 * them (src/demo/pages.ts), judged by a site's extractors through the crawl's own parse, with the
 * crawl's escalation (a cheap fetch of an `auto` route that misses fields is rendered, and the
 * render judged), stored as outcomes in PostgreSQL and indexed raw pages (PgSink, IndexedRawPages) or in a
 * storage dir (ArchiveStore, Crawlee datasets) — so the same crawl can be re-parsed in both backends.
 */
import { Dataset } from '@crawlee/core';
import { buildCatalog, type ProductTruth } from '../../src/demo/catalog.js';
import { LIGHT_DRESSING } from '../../src/demo/dressing.js';
import { productPage } from '../../src/demo/pages.js';
import { resolveOptions } from '../../src/demo/shopOptions.js';
import { parsePage } from '../../src/parse/parsePage.js';
import { isIncomplete } from '../../src/quality/validate.js';
import type { Renderer, Site } from '../../src/site/site.js';
import { openStorage, storeNames } from '../../src/store/datasets.js';
import type { PgDatabase } from '../../src/store/postgres/database.js';
import { IndexedRawPages } from '../../src/store/postgres/indexedRawPages.js';
import { PgSink, type PgOutcome } from '../../src/store/postgres/sink.js';
import { ArchiveStore, archiveDirOf } from '../../src/store/archive/archiveStore.js';
import { rawPageKey, type RawPage } from '../../src/store/archive/rawPage.js';
import { quarantineEntries, storedItems } from '../../src/store/records.js';
import type { DeadLetterEntry } from '../../src/vocabulary/failure.js';

export const ORIGIN = 'http://127.0.0.1:8080';

export interface StoredShopOptions {
    products: number;
    /** Products from this index on are served redesigned (their title in `h1.product-name`). Default: none. */
    redesignedFrom?: number;
    /** The last product was fetched, then dead-lettered as `route-stopped` before it was judged. Default: false. */
    stoppedLast?: boolean;
}

export interface StoredShop {
    products: ProductTruth[];
    /** Oldest first, as stored. */
    pages: RawPage[];
    /** One per request, plus a dead-letter entry of a page never fetched (`/products/gone`, 404). */
    outcomes: PgOutcome[];
}

/** The shop's product pages as a crawl with `site`'s extractors would have stored them. */
export function storedShop(
    site: Site,
    { products: count, redesignedFrom = Infinity, stoppedLast = false }: StoredShopOptions,
): StoredShop {
    const built = buildCatalog({
        ...resolveOptions({ seed: 7, products: count, scriptOnlyRate: 0, transientFailureRate: 0, notFoundLinks: 0 }),
        retryAfterRate: 0,
    });
    const catalog = { ...built, dressing: LIGHT_DRESSING };
    const route = site.routes.get('product')!;
    const pages: RawPage[] = [];
    const outcomes: PgOutcome[] = [];
    catalog.products.forEach((product, index) => {
        const url = `${ORIGIN}${product.path}`;
        const html = productPage(catalog, product, ORIGIN, { redesigned: index >= redesignedFrom });
        const fetch = (renderer: Renderer): RawPage => {
            const page = {
                key: rawPageKey(url, renderer),
                url,
                finalUrl: url,
                status: 200,
                headers: { 'content-type': 'text/html' },
                renderer,
                label: 'product',
                body: html,
            };
            const stored = { ...page, fetchedAt: new Date(Date.UTC(2024, 0, 1, 0, 0, 0, pages.length)).toISOString() };
            pages.push(stored);
            return stored;
        };
        let page = fetch('http');
        if (stoppedLast && index === count - 1) {
            outcomes.push({ requestKey: url, deadLetter: deadLetter(url, 'route-stopped', 'permanent') });
            return;
        }
        const judge = (raw: RawPage) =>
            parsePage(route, {
                html: raw.body,
                finalUrl: raw.finalUrl,
                renderer: raw.renderer,
                userData: {},
                trackingParams: site.trackingParams,
            });
        let parsed = judge(page);
        if (isIncomplete(parsed.verdict) && route.render === 'auto') {
            page = fetch('browser');
            parsed = judge(page);
        }
        const origin = {
            url: parsed.canonical ?? url,
            route: 'product',
            rawKey: page.key,
            renderer: page.renderer,
            fetchedAt: page.fetchedAt,
        };
        outcomes.push({
            requestKey: url,
            items: storedItems(parsed.verdict, origin),
            quarantine: quarantineEntries(parsed.verdict, origin),
        });
    });
    const gone = `${ORIGIN}/products/gone`;
    outcomes.push({ requestKey: gone, deadLetter: deadLetter(gone, 'http-404', 'permanent') });
    return { products: catalog.products, pages, outcomes };
}

function deadLetter(url: string, reason: string, failureClass: DeadLetterEntry['failureClass']): DeadLetterEntry {
    return {
        url,
        label: 'product',
        failureClass,
        reason,
        error: reason,
        attempts: 1,
        stage: 'http',
        deadLetteredAt: '2024-01-01T00:00:01.000Z',
    };
}

/**
 * Stores the crawl as the distributed mode does, under site `site`: outcomes in PostgreSQL, raw pages
 * in `storageDir`'s segment files, indexed in PostgreSQL. Resolves to the raw pages, to read back.
 */
export async function storeInPostgres(
    db: PgDatabase,
    site: string,
    shop: StoredShop,
    storageDir: string,
): Promise<IndexedRawPages> {
    await new PgSink(db).commit(site, shop.outcomes);
    const raw = await IndexedRawPages.open(db, site, { archiveDir: archiveDirOf(storageDir), writer: 'stored-shop' });
    for (const page of shop.pages) await raw.put(page);
    return raw;
}

/** Stores the crawl as the embedded mode does, in `storageDir`. */
export async function storeInDir(storageDir: string, site: string, shop: StoredShop): Promise<void> {
    const raw = await ArchiveStore.open({ archiveDir: archiveDirOf(storageDir), site });
    for (const page of shop.pages) await raw.put(page);
    await raw.flush();
    const { config, storage } = openStorage(storageDir);
    try {
        const names = storeNames(site);
        const push = async (name: string, records: Record<string, unknown>[]) => {
            if (records.length > 0) await (await Dataset.open(name, { config })).pushData(records);
        };
        await push(
            names.items,
            shop.outcomes.flatMap((outcome) => outcome.items ?? []),
        );
        await push(
            names.quarantine,
            shop.outcomes.flatMap((outcome) => outcome.quarantine ?? []),
        );
        await push(
            names.deadLetter,
            shop.outcomes.flatMap((outcome) => (outcome.deadLetter ? [outcome.deadLetter] : [])),
        );
    } finally {
        await storage.close();
    }
}
