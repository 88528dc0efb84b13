/**
 * A raw page: what the archive keeps of a fetched page (archiveStore.ts) and gives back to re-parse,
 * and what the crawl hands it.
 */
import { createHash } from 'node:crypto';
import type { Renderer } from '../../site/site.js';
import type { HttpHeaders } from './warcRecord.js';

export interface RawPage {
    /** Identifies the page; parsed items and quarantine entries point here. */
    key: string;
    /** The URL requested. */
    url: string;
    /** The URL the page was read from (the request URL, or where a browser ended up). */
    finalUrl: string;
    status: number;
    headers: HttpHeaders;
    fetchedAt: string;
    renderer: Renderer;
    label: string;
    /** The page as text: the HTTP stage decoded its bytes (in `charset`), a browser serialized its DOM. */
    body: string;
    /** The encoding the body was decoded from (`UTF-8`, `windows-1252`, …); absent for a rendered page. */
    charset?: string;
}

/** A fetched page as the crawl hands it to the archive. */
export interface PageCapture extends RawPage {
    /**
     * The body as received, after content decoding: for a rendered page, the document the browser
     * loaded (the DOM it became is `body`). Default: `body` encoded in `charset` (UTF-8 when absent).
     */
    payload?: Buffer;
    /** `payloadDigestOf(payload)`, when the crawl has it already. Default: computed on writing. */
    payloadDigest?: string;
    /** The headers the request was sent with, credentials masked on writing. Default: none known. */
    requestHeaders?: HttpHeaders;
}

/** A redirect's response, archived for the record: no page, nothing parsed. */
export type RedirectCapture = Pick<
    PageCapture,
    'url' | 'status' | 'headers' | 'fetchedAt' | 'payload' | 'payloadDigest' | 'requestHeaders'
>;

/**
 * A page fetched again and found as it was: archived as a `revisit` record, which holds the response's
 * status and headers and refers to the capture revisited, instead of the payload.
 */
export interface RevisitCapture {
    /** The page's key, as for put(). */
    key: string;
    /** The URL requested. */
    url: string;
    /**
     * `server-not-modified`: the site answered a conditional request 304. `identical-payload-digest`:
     * it sent the same payload again.
     */
    profile: 'server-not-modified' | 'identical-payload-digest';
    /** 304, or the status of the response whose payload was the same. */
    status: number;
    /** The response headers as received. */
    headers: HttpHeaders;
    fetchedAt: string;
    /** `sha1:BASE32` of the payload (pageRecords.ts payloadDigestOf); required for `identical-payload-digest`. */
    payloadDigest?: string;
    /** The capture revisited: its WARC-Target-URI and WARC-Date. Default: none named. */
    refersTo?: Pick<CaptureRef, 'url' | 'date'>;
    /** The headers the request was sent with, credentials masked on writing. Default: none known. */
    requestHeaders?: HttpHeaders;
    label: string;
    renderer: Renderer;
}

/** A response capture as a revisit refers to it. */
export interface CaptureRef {
    /** Its `WARC-Target-URI`: the URL the page was read from. */
    url: string;
    /** Its `WARC-Date`. */
    date: string;
    /** Its `WARC-Payload-Digest`. */
    digest?: string;
}

/** The key of a page fetched from `finalUrl` by `renderer`: stable, so re-fetches overwrite nothing. */
export function rawPageKey(finalUrl: string, renderer: Renderer): string {
    return `${createHash('sha1').update(finalUrl).digest('hex').slice(0, 20)}-${renderer}`;
}
