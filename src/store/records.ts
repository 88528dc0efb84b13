/**
 * What a page's verdict becomes in storage: valid records as dataset items that say where they
 * came from, the rest as quarantine entries that say why. Crawling and re-parsing both use this.
 */
import type { Verdict } from '../quality/validate.js';
import type { Renderer } from '../site.js';

/** Where a page's records came from. */
export interface RecordOrigin {
    /** The page's canonical URL (its request URL when it declares none). */
    url: string;
    route: string;
    rawKey: string;
    renderer: Renderer;
    fetchedAt: string;
}

/** A record as stored in the dataset: the route's fields plus where it came from. */
export type StoredItem = Record<string, unknown> & {
    _url: string;
    _route: string;
    _rawKey: string;
    _renderer: Renderer;
    _fetchedAt: string;
};

/** A record (or a page's missing records) kept out of the dataset, with the reasons. */
export type QuarantineEntry = {
    url: string;
    route: string;
    rawKey: string;
    renderer: Renderer;
    issues: string[];
    fields: string[];
    record: unknown;
    quarantinedAt: string;
};

export function storedItems(verdict: Verdict, origin: RecordOrigin): StoredItem[] {
    return verdict.valid.map((record) => ({
        ...record,
        _url: origin.url,
        _route: origin.route,
        _rawKey: origin.rawKey,
        _renderer: origin.renderer,
        _fetchedAt: origin.fetchedAt,
    }));
}

/** One entry per invalid record, plus one for a page that yielded too few records. */
export function quarantineEntries(verdict: Verdict, origin: RecordOrigin): QuarantineEntry[] {
    const rejected = verdict.invalid.map(({ record, issues, fields }) => ({ record, issues, fields }));
    if (verdict.shortfall) rejected.push({ record: null, issues: [verdict.shortfall], fields: ['(records)'] });
    const { url, route, rawKey, renderer } = origin;
    const quarantinedAt = new Date().toISOString();
    return rejected.map(({ record, issues, fields }) => ({ url, route, rawKey, renderer, issues, fields, record, quarantinedAt }));
}
