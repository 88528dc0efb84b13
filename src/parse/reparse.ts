/**
 * Re-parse without re-crawl: the payoff of keeping raw pages apart from parsed items. The current
 * extractors run over the stored raw pages through the crawl's own parse (parsePage.ts) and are
 * judged as the crawl judges them; the results become a new version of the site's dataset,
 * quarantine and dead-letter (the old ones are kept as `<name>-previous`), and what changed is
 * counted per field. Not a single request goes to the site.
 */
import { Dataset, type Configuration } from '@crawlee/core';
import { urlKey } from '../frontier/normalize.js';
import { isIncomplete } from '../quality/validate.js';
import type { Site } from '../site.js';
import { DatasetSink, storeNames } from '../store/datasets.js';
import { RawStore } from '../store/rawStore.js';
import { quarantineEntries, storedItems, type QuarantineEntry, type StoredItem } from '../store/records.js';
import type { DeadLetterEntry } from '../vocabulary/failure.js';
import { type ParsedPage, parsePage } from './parsePage.js';

export interface ReparseOptions {
    site: Site;
    storageDir: string;
    config: Configuration;
    /** Only this route's pages are re-parsed; the other routes' items and quarantine are carried over. Default: all. */
    route?: string;
}

export interface ReparseResult {
    pages: number;
    /** Cheap fetches of `auto` routes that still miss fields: they need the browser, so they stay where they were. */
    needBrowser: number;
    /** Pages whose parse throws (a link rule that throws, say): the crawl could not finish them either, so they stay where they were. */
    unparsable: number;
    items: { before: number; after: number };
    quarantined: { before: number; after: number };
    /** Items whose value of a field differs from before (added and removed items count for every field). */
    changedByField: Record<string, number>;
}

/** Suffix of the dataset versions a reparse replaces. */
const PREVIOUS = '-previous';

export async function reparse({ site, storageDir, config, route }: ReparseOptions): Promise<ReparseResult> {
    const names = storeNames(site.name);
    const raw = await RawStore.open({ storageDir, site: site.name });
    const next = {
        items: `${names.items}-reparsed`,
        quarantine: `${names.quarantine}-reparsed`,
        deadLetter: `${names.deadLetter}-reparsed`,
    };
    for (const name of Object.values(next)) await (await Dataset.open(name, { config })).drop();
    const items = await DatasetSink.open<StoredItem>(next.items, config);
    const quarantine = await DatasetSink.open<QuarantineEntry>(next.quarantine, config);
    const deadLetter = await DatasetSink.open<DeadLetterEntry>(next.deadLetter, config);
    const before = {
        items: await Dataset.open<StoredItem>(names.items, { config }),
        quarantine: await Dataset.open<QuarantineEntry>(names.quarantine, { config }),
        deadLetter: await Dataset.open<DeadLetterEntry>(names.deadLetter, { config }),
    };

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
            parsed = parsePage(pageRoute, { html: page.body, finalUrl: page.finalUrl, renderer: page.renderer, userData: {}, trackingParams: site.trackingParams });
        } catch {
            unparsable += 1;
            continue;
        }
        const canonical = parsed.canonical ?? page.url;
        // As in the crawl, a page whose canonical URL another page already holds adds nothing.
        if (claimed.has(urlKey(canonical))) continue;
        claimed.add(urlKey(canonical));
        const { verdict } = parsed;
        // As in the crawl, cheap HTML that misses fields is not the last word on an `auto` route.
        if (isIncomplete(verdict) && page.renderer === 'http' && pageRoute.render === 'auto') {
            needBrowser += 1;
            continue;
        }
        pages += 1;
        judged.add(page.url);
        const origin = { url: canonical, route: page.label, rawKey: page.key, renderer: page.renderer, fetchedAt: page.fetchedAt };
        for (const item of storedItems(verdict, origin)) await items.push(item);
        for (const entry of quarantineEntries(verdict, origin)) await quarantine.push(entry);
    }
    // A page judged now (say, one its stopped route had dead-lettered before rendering) leaves dead-letter.
    await copyWhere(before.deadLetter, deadLetter, (entry) => !judged.has(entry.url));
    await Promise.all([items.flush(), quarantine.flush(), deadLetter.flush()]);

    const changedByField = await countChanges(before.items, items.dataset);
    const result: ReparseResult = {
        pages,
        needBrowser,
        unparsable,
        items: { before: await count(before.items), after: await items.count() },
        quarantined: { before: await count(before.quarantine), after: await quarantine.count() },
        changedByField,
    };
    await promote(config, names.items, next.items);
    await promote(config, names.quarantine, next.quarantine);
    await promote(config, names.deadLetter, next.deadLetter);
    return result;
}

/**
 * Request URL → key of the page the crawl finally judged: the browser render when the cheap
 * fetch was escalated (it is stored later), else the cheap fetch.
 */
async function finalPageKeys(raw: RawStore): Promise<Map<string, string>> {
    const finalKeys = new Map<string, string>();
    for await (const page of raw.pages()) finalKeys.set(page.url, page.key);
    return finalKeys;
}

async function copyWhere<T extends Record<string, unknown>>(from: Dataset<T>, to: DatasetSink<T>, keep: (item: T) => boolean) {
    await from.forEach(async (item) => {
        if (keep(item)) await to.push(item);
    });
}

/** Per field, how many items differ between the two versions, matched by page and position on the page. */
async function countChanges(before: Dataset<StoredItem>, after: Dataset<StoredItem>): Promise<Record<string, number>> {
    const byPosition = async (dataset: Dataset<StoredItem>) => {
        const positions = new Map<string, StoredItem>();
        const seen = new Map<string, number>();
        await dataset.forEach(async (item) => {
            const n = seen.get(item._url) ?? 0;
            seen.set(item._url, n + 1);
            positions.set(`${item._url}#${n}`, item);
        });
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

async function count(dataset: Dataset): Promise<number> {
    return (await dataset.getInfo())?.itemCount ?? 0;
}

/** Makes `fresh` the dataset called `name`; the current one becomes `<name>-previous`. */
async function promote(config: Configuration, name: string, fresh: string): Promise<void> {
    const client = config.getStorageClient();
    await (await Dataset.open(`${name}${PREVIOUS}`, { config })).drop();
    const current = await Dataset.open(name, { config });
    await client.dataset(current.id).update({ name: `${name}${PREVIOUS}` });
    const next = await Dataset.open(fresh, { config });
    await client.dataset(next.id).update({ name });
}

