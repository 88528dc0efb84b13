/**
 * CDXJ, the index pywb and webrecorder's tools read beside a WARC file: one line per capture,
 * `<SURT URL key> <14-digit timestamp> <JSON>`, the JSON giving the capture's URL, MIME type,
 * status, payload digest, and the record's offset and length in its file. dragnet adds `key` (the
 * page's raw key) and `pageLength` (the bytes from the response record to the end of the page's
 * metadata record), so a page is read back from one range of its file. Lines are in the order
 * written; `LC_ALL=C sort` makes a file pywb can search (docs/archive.md).
 */
import { getSurt } from 'warcio/utils';

export interface CdxjEntry {
    url: string;
    /** When the capture began: ISO 8601 to write, the line's 14-digit timestamp when read. */
    date: string;
    mime: string;
    status: number;
    digest?: string;
    offset: number;
    length: number;
    filename: string;
    /** The page's raw key (store/archive/archiveStore.ts), on the response line of a page. */
    key?: string;
    pageLength?: number;
}

export function cdxjLine(entry: CdxjEntry): string {
    const { url, date, ...fields } = entry;
    return `${urlKey(url)} ${timestamp(date)} ${JSON.stringify({ url, ...fields, status: String(fields.status) })}`;
}

/** The entry of a CDXJ line; undefined for a blank or broken one (a line a crash cut short). */
export function parseCdxjLine(line: string): CdxjEntry | undefined {
    const [, date, json] = /^\S+ (\d{14}) (\{.*\})$/.exec(line) ?? [];
    if (!date || !json) return undefined;
    try {
        const fields = JSON.parse(json) as Omit<CdxjEntry, 'date' | 'status'> & { status: string };
        return { ...fields, date, status: Number(fields.status) };
    } catch {
        return undefined;
    }
}

function urlKey(url: string): string {
    try {
        return getSurt(url);
    } catch {
        return url;
    }
}

/** `2026-12-07T17:19:49.123Z` → `20261207171949`. */
function timestamp(date: string): string {
    return date.replace(/\D/g, '').slice(0, 14).padEnd(14, '0');
}
