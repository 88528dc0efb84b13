/**
 * What a page's outcome tells the page history (store/pageHistory.ts): the page as this fetch left
 * it (validators, digest, one more check, found changed or not) and when it is next due.
 */
import { changeRate, nextDueAt, type RevisitBounds } from '../frontier/revisitPolicy.js';
import { urlKey } from '../frontier/normalize.js';
import type { KnownPage, PageRecord, Schedule } from '../store/pageHistory.js';
import type { StoredItem } from '../store/records.js';
import type { RequestData } from '../vocabulary/request.js';

/** What one fetch saw of a page. */
export interface PageCheck {
    request: { url: string; label?: string; userData: RequestData };
    navigation: boolean;
    etag?: string;
    lastModified?: string;
    /** The payload's digest; absent when unchanged by a 304, which sends none. */
    digest?: string;
    fetchedAt: string;
    finalUrl: string;
    /** Whether the check found the page changed since the last run; false for a page seen first. */
    changed: boolean;
    items: number;
    /** A navigation page's routed links; default: what the history knew. */
    links?: KnownPage['links'];
    /** The canonical URL key the page claimed; default: what the history knew. */
    canonical?: string;
}

/** A response's validators, as the history keeps them. */
export function validatorsOf(
    headers: Record<string, string | string[] | undefined>,
): Pick<KnownPage, 'etag' | 'lastModified'> {
    const etag = firstValue(headers.etag);
    const lastModified = firstValue(headers['last-modified']);
    return { ...(etag ? { etag } : {}), ...(lastModified ? { lastModified } : {}) };
}

function optional<K extends string, V>(key: K, value: V | undefined): { [key in K]?: V } {
    return value === undefined ? {} : ({ [key]: value } as { [key in K]: V });
}

/** A header's first value, as Node's HTTP client keeps a repeated `Content-Type` or `Location`. */
export function firstValue(value: string | string[] | undefined): string | undefined {
    return Array.isArray(value) ? value[0] : value;
}

/** The page as the history keeps it after this check. */
export function checkedPage(check: PageCheck): KnownPage {
    const { request } = check;
    const known = request.userData.known;
    const now = Date.parse(check.fetchedAt);
    return {
        key: known?.key ?? urlKey(request.url),
        url: request.url,
        ...(request.label ? { label: request.label } : {}),
        navigation: check.navigation,
        ...(check.etag ? { etag: check.etag } : {}),
        ...(check.lastModified ? { lastModified: check.lastModified } : {}),
        digest: check.digest ?? known?.digest,
        capturedAt: check.digest === undefined ? known?.capturedAt : check.fetchedAt,
        capturedUrl: check.digest === undefined ? known?.capturedUrl : check.finalUrl,
        items: check.items,
        ...optional('links', check.links ?? known?.links),
        ...optional('canonical', check.canonical ?? known?.canonical),
        checks: known ? known.checks + 1 : 0,
        changes: known ? known.changes + (check.changed ? 1 : 0) : 0,
        firstCheckedAt: known?.firstCheckedAt ?? now,
        lastCheckedAt: now,
    };
}

/** When the page is next due; a navigation page is due on every recrawl, so new items are found. */
export function scheduleOf(page: KnownPage, bounds: RevisitBounds): Schedule {
    const rate = changeRate(page);
    return {
        nextDueAt: page.navigation ? page.lastCheckedAt : nextDueAt(page, bounds),
        ...(rate === undefined ? {} : { rate }),
    };
}

/** A fetched and parsed page's record: its state and its items as they are, without change fields. */
export function fetchedRecord(check: PageCheck, items: readonly StoredItem[], bounds: RevisitBounds): PageRecord {
    const page = checkedPage(check);
    return { kind: 'fetched', page, schedule: scheduleOf(page, bounds), items };
}

/** A known page found unchanged: one more check, its items carried. */
export function unchangedRecord(check: PageCheck, bounds: RevisitBounds): PageRecord {
    const page = checkedPage(check);
    return { kind: 'unchanged', page, schedule: scheduleOf(page, bounds) };
}

/** A known page that now redirects to another page: gone from its URL, moved; undefined when the target is itself. */
export function movedRecord(known: KnownPage, location: string): PageRecord | undefined {
    const target = new URL(location, known.url).href;
    if (urlKey(target) === known.key) return undefined;
    return { kind: 'removed', key: known.key, removal: { reason: 'moved', movedTo: target } };
}

/** A known page dead-lettered: gone when the site answers 404 or 410 for it, else failed this time. */
export function failedRecord(known: KnownPage, status: number | undefined): PageRecord {
    if (status !== 404 && status !== 410) return { kind: 'withoutItems', key: known.key };
    return { kind: 'removed', key: known.key, removal: { reason: `http-${status}` } };
}
