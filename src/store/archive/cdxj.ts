/**
 * CDXJ, the index pywb and webrecorder's tools read beside a WARC file: one line per capture,
 * `<SURT URL key> <14-digit timestamp> <JSON>`, the JSON giving the capture's URL, MIME type,
 * status, payload digest, and the record's offset and length in its file. dragnet adds `key` (the
 * page's raw key), `pageLength` (the bytes from the response record to the end of the page's
 * metadata record), so a page is read back from one range of its file, and `warcDate` (the
 * record's WARC-Date in full: the timestamp keeps only its seconds). Lines are in the order
 * written; `LC_ALL=C sort` makes a file pywb can search (docs/archive.md).
 */
import { getSurt } from 'warcio/utils';
import { WARC_FILE } from './warcReader.js';

export interface CdxjEntry {
    url: string;
    /**
     * When the capture began, its WARC-Date (ISO 8601). Read from a line without `warcDate` (another
     * tool's), the line's timestamp: to the second.
     */
    date: string;
    mime: string;
    status: number;
    digest?: string;
    offset: number;
    length: number;
    filename: string;
    /** The page's raw key (store/archive/archiveStore.ts), on the line of a page's response or revisit. */
    key?: string;
    /** On a page's response line: the bytes of the page's records. */
    pageLength?: number;
}

export function cdxjLine(entry: CdxjEntry): string {
    const { url, date, ...fields } = entry;
    const json = JSON.stringify({ url, ...fields, status: String(fields.status), warcDate: date });
    return `${urlKey(url)} ${timestamp(date)} ${json}`;
}

/** The entry of a CDXJ line; undefined for a blank or broken one (a line a crash cut short). */
export function parseCdxjLine(line: string): CdxjEntry | undefined {
    const [, stamp, json] = /^\S+ (\d{14}) (\{.*\})$/.exec(line) ?? [];
    if (!stamp || !json) return undefined;
    try {
        const { warcDate, ...fields } = JSON.parse(json) as Omit<CdxjEntry, 'date' | 'status'> & {
            status: string;
            warcDate?: string;
        };
        return { ...fields, date: warcDate ?? isoDate(stamp), status: Number(fields.status) };
    } catch {
        return undefined;
    }
}

/** The index of a WARC file: `dragnet-000001.cdxj` beside `dragnet-000001.warc.gz`. */
export function cdxjName(warcFile: string): string {
    return warcFile.replace(WARC_FILE, '.cdxj');
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

/** `20261207171949` → `2026-12-07T17:19:49Z`. */
function isoDate(stamp: string): string {
    const [, year, month, day, hour, minute, second] = /^(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)$/.exec(stamp) ?? [];
    return `${year}-${month}-${day}T${hour}:${minute}:${second}Z`;
}
