/**
 * What a page's verdict becomes in storage: valid records as dataset items that say where they
 * came from, the rest as quarantine entries that say why. Crawling and re-parsing both use this.
 * Quarantine and dead-letter entries are for people to inspect and pass around, so they are
 * stored without secrets (vocabulary/redact.ts): quarantineEntries() makes them so for every
 * backend, and each backend's dead-letter write calls storedDeadLetter().
 */
import type { Verdict } from '../quality/validate.js';
import type { Renderer } from '../site/site.js';
import type { DeadLetterEntry } from '../vocabulary/failure.js';
import { redactUrl, scrubText, scrubValue } from '../vocabulary/redact.js';

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

/**
 * One entry per invalid record, plus one for a page that yielded too few records. Secrets out:
 * the URL's password, and any in the issues or the record (a link field resolved against a URL
 * with a password carries it).
 */
export function quarantineEntries(verdict: Verdict, origin: RecordOrigin): QuarantineEntry[] {
    const rejected = verdict.invalid.map(({ record, issues, fields }) => ({ record, issues, fields }));
    if (verdict.shortfall) rejected.push({ record: null, issues: [verdict.shortfall], fields: ['(records)'] });
    const { route, rawKey, renderer } = origin;
    const url = redactUrl(origin.url);
    const quarantinedAt = new Date().toISOString();
    return rejected.map(({ record, issues, fields }) => ({
        url,
        route,
        rawKey,
        renderer,
        issues: issues.map(scrubText),
        fields,
        record: scrubValue(record),
        quarantinedAt,
    }));
}

/**
 * The entry as it is stored: its URLs' passwords masked (its own and its redirects') and the
 * error scrubbed. `requestId` (the request's id in its queue) is kept with an entry whose URL was
 * masked, as the masked URL no longer leads to the request when the entry is re-queued.
 */
export function storedDeadLetter(entry: DeadLetterEntry, requestId?: string): DeadLetterEntry {
    const url = redactUrl(entry.url);
    const stored: DeadLetterEntry = { ...entry, url, error: scrubText(entry.error) };
    if (entry.redirectedFrom) stored.redirectedFrom = entry.redirectedFrom.map(redactUrl);
    if (url !== entry.url && requestId !== undefined) stored.requestId = requestId;
    return stored;
}
