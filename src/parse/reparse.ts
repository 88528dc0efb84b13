/**
 * Re-parse without re-crawl: the payoff of keeping raw pages apart from parsed items. The current
 * extractors run over the stored raw pages through the crawl's own parse (parsePage.ts) and are
 * judged as the crawl judges them; the results become a new version of the site's items,
 * quarantine and dead-letter (the old ones are kept as `<name>-previous`), and what changed is
 * counted per field. Not a single request goes to the site.
 *
 * The algorithm is written once, over a source of pages and the site's versioned results
 * (store/siteResults.ts); `reparse()` runs it over the embedded stores (the file ArchiveStore and
 * Crawlee datasets), and the distributed mode hands `reparseSite()` PostgreSQL's. The source is the
 * site's raw pages (store/rawPages.ts), or a web archive of any tool's (warcPages.ts).
 */
import type { Configuration } from '@crawlee/core';
import { urlKey } from '../frontier/normalize.js';
import { mayEscalate } from '../quality/validate.js';
import type { Site } from '../site/site.js';
import { datasetResults } from '../store/datasets.js';
import { ArchiveStore, archiveDirOf } from '../store/archive/archiveStore.js';
import type { RawPage } from '../store/archive/rawPage.js';
import { quarantineEntries, storedItems, type StoredItem } from '../store/records.js';
import type { SiteResults, StoreReader, StoreSink } from '../store/siteResults.js';
import type { DeadLetterEntry } from '../vocabulary/failure.js';
import { type ParsedPage, parsePage } from './parsePage.js';

/** What reparse reads: the site's raw pages (store/rawPages.ts has them), or a WARC's (warcPages.ts). */
export interface PageSource {
    /** Every page, oldest first. Read twice: the first read finds the page each URL ended with. */
    pages(): AsyncIterable<RawPage>;
    /**
     * The responses a crawl would have dead-lettered, as the last whole read of `pages()` found them: given, they
     * replace the current dead-letter (with `route`, that route's entries). Not given (a crawl's archive holds
     * no failures), the current dead-letter is carried over, but for the pages judged now.
     */
    deadLetters?(): AsyncIterable<DeadLetterEntry>;
}

/**
 * The pages of `raw` but those whose request a recrawl found gone (store/pageHistory.ts): the
 * archive keeps every run's captures, and the newest capture of a removed page is the 200 of a run
 * before it was removed.
 */
export function livePages(raw: Pick<PageSource, 'pages'>, removedKeys: readonly string[]): PageSource {
    const removed = new Set(removedKeys);
    return {
        pages: async function* () {
            for await (const page of raw.pages()) if (!removed.has(urlKey(page.url))) yield page;
        },
    };
}

export interface ReparseOptions {
    site: Site;
    storageDir: string;
    config: Configuration;
    /** Where the site's raw pages are archived. Default: `<storageDir>/archive` (archiveDirOf). */
    archiveDir?: string;
    /** The pages to re-parse. Default: the site's raw pages in `archiveDir`. */
    raw?: PageSource;
    /** Only this route's pages are re-parsed; the other routes' items and quarantine are carried over. Default: all. */
    route?: string;
}

export interface ReparseSiteOptions {
    site: Site;
    /** The pages to re-parse: the site's stored raw pages (RawPages), or another source's. */
    raw: PageSource;
    /** The site's results: read from the current version, written to the next, which is promoted at the end. */
    results: SiteResults;
    /** As in ReparseOptions. */
    route?: string;
}

export interface ReparseResult {
    pages: number;
    /** Cheap fetches of `auto` routes that still miss fields: they need the browser, so they stay where they were. */
    needBrowser: number;
    /**
     * Pages whose parse throws (a link rule that throws, say): the
     * crawl could not finish them either, so they stay where they were.
     */
    unparsable: number;
    items: { before: number; after: number };
    quarantined: { before: number; after: number };
    deadLettered: { before: number; after: number };
    /** Items whose value of a field differs from before (added and removed items count for every field). */
    changedByField: Record<string, number>;
}

/** Re-parses the raw pages of the site in `storageDir` (the file ArchiveStore), or `raw`, into its Crawlee datasets. */
export async function reparse(options: ReparseOptions): Promise<ReparseResult> {
    const { site, storageDir, config, route } = options;
    const raw =
        options.raw ??
        (await ArchiveStore.open({ archiveDir: options.archiveDir ?? archiveDirOf(storageDir), site: site.name }));
    return reparseSite({ site, raw, results: await datasetResults(site.name, config), route });
}

export async function reparseSite({ site, raw, results, route }: ReparseSiteOptions): Promise<ReparseResult> {
    const {
        current: before,
        next: { items, quarantine, deadLetter },
    } = results;

    // Routes left alone keep what they had.
    if (route) {
        await copyWhere(before.items, items, (item) => item._route !== route);
        await copyWhere(before.quarantine, quarantine, (entry) => entry.route !== route);
    }

    let pages = 0;
    let needBrowser = 0;
    let unparsable = 0;
    const judged = new Set<string>();
    const claimed = new Set<string>();
    const finalKeys = await finalPageKeys(raw);
    for await (const page of raw.pages()) {
        if (finalKeys.get(page.url) !== page.key || (route && page.label !== route)) continue;
        const pageRoute = site.routes.get(page.label);
        if (!pageRoute?.extract) continue;
        // The crawl's own parse: the same parser for the same renderer, so the same bytes give the same records.
        let parsed: ParsedPage;
        try {
            parsed = parsePage(pageRoute, {
                html: page.body,
                finalUrl: page.finalUrl,
                renderer: page.renderer,
                userData: {},
                trackingParams: site.trackingParams,
            });
        } catch {
            unparsable += 1;
            continue;
        }
        const canonical = parsed.canonical ?? page.url;
        // As in the crawl, a page whose canonical URL another page already holds adds nothing.
        if (claimed.has(urlKey(canonical))) continue;
        claimed.add(urlKey(canonical));
        const { verdict } = parsed;
        // As in the crawl, cheap HTML that misses fields is not the last word on an `auto` route
        // (route code that fails on it is: the browser would run the same code).
        if (mayEscalate(verdict) && page.renderer === 'http' && pageRoute.render === 'auto') {
            needBrowser += 1;
            continue;
        }
        pages += 1;
        judged.add(page.url);
        const origin = {
            url: canonical,
            route: page.label,
            rawKey: page.key,
            renderer: page.renderer,
            fetchedAt: page.fetchedAt,
        };
        for (const item of storedItems(verdict, origin)) await items.push(item);
        for (const entry of quarantineEntries(verdict, origin)) await quarantine.push(entry);
    }
    const failures = raw.deadLetters?.();
    if (failures) {
        if (route) await copyWhere(before.deadLetter, deadLetter, (entry) => entry.label !== route);
        for await (const entry of failures) if (!route || entry.label === route) await deadLetter.push(entry);
    } else {
        // A page judged now (say, one its stopped route had dead-lettered before rendering) leaves dead-letter.
        await copyWhere(before.deadLetter, deadLetter, (entry) => !judged.has(entry.url));
    }
    await Promise.all([items.flush(), quarantine.flush(), deadLetter.flush()]);

    const changedByField = await countChanges(before.items, items);
    const result: ReparseResult = {
        pages,
        needBrowser,
        unparsable,
        items: { before: await before.items.count(), after: await items.count() },
        quarantined: { before: await before.quarantine.count(), after: await quarantine.count() },
        deadLettered: { before: await before.deadLetter.count(), after: await deadLetter.count() },
        changedByField,
    };
    await results.promote();
    return result;
}

/**
 * Request URL → key of the page the crawl finally judged: the browser render when the cheap
 * fetch was escalated (it is stored later), else the cheap fetch.
 */
async function finalPageKeys(raw: PageSource): Promise<Map<string, string>> {
    const finalKeys = new Map<string, string>();
    for await (const page of raw.pages()) finalKeys.set(page.url, page.key);
    return finalKeys;
}

async function copyWhere<T>(from: StoreReader<T>, to: StoreSink<T>, keep: (item: T) => boolean) {
    for await (const item of from.entries()) if (keep(item)) await to.push(item);
}

/** Per field, how many items differ between the two versions, matched by page and position on the page. */
async function countChanges(
    before: StoreReader<StoredItem>,
    after: StoreReader<StoredItem>,
): Promise<Record<string, number>> {
    const byPosition = async (store: StoreReader<StoredItem>) => {
        const positions = new Map<string, StoredItem>();
        const seen = new Map<string, number>();
        for await (const item of store.entries()) {
            const n = seen.get(item._url) ?? 0;
            seen.set(item._url, n + 1);
            positions.set(`${item._url}#${n}`, item);
        }
        return positions;
    };
    const [old, fresh] = await Promise.all([byPosition(before), byPosition(after)]);
    const changed: Record<string, number> = {};
    for (const position of new Set([...old.keys(), ...fresh.keys()])) {
        const a: Record<string, unknown> = old.get(position) ?? {};
        const b: Record<string, unknown> = fresh.get(position) ?? {};
        for (const field of new Set([...Object.keys(a), ...Object.keys(b)])) {
            if (field.startsWith('_')) continue;
            if (JSON.stringify(a[field]) !== JSON.stringify(b[field])) changed[field] = (changed[field] ?? 0) + 1;
        }
    }
    return changed;
}
