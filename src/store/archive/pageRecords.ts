/**
 * A capture as the WARC records that hold it (archiveStore.ts says which), each compressed to its own
 * gzip member, with what the CDXJ index says of each.
 */
import iconv from 'iconv-lite';
import { constants, gzipSync } from 'node:zlib';
import type { PageCapture, RedirectCapture, RevisitCapture } from './rawPage.js';
import type { CdxjEntry } from './cdxj.js';
import {
    type HttpHeaders,
    httpRequestBlock,
    httpResponseBlock,
    httpRevisitBlock,
    payloadOffsetOf,
    sha1Digest,
    type WarcRecord,
    warcFields,
    warcRecord,
} from './warcRecord.js';

/** One capture's records, compressed, and what its index lines say of them. */
export interface EncodedCapture {
    records: EncodedRecord[];
    /** For a page: what its index entry says; its place runs from its response record to its last record. */
    page?: Pick<PageCapture, 'key' | 'url' | 'fetchedAt'>;
}

export interface EncodedRecord {
    /** The record as one gzip member. */
    member: Buffer;
    /** Its CDXJ line's fields, when it has a line. */
    indexed?: IndexedRecord;
    /** The response record of a page: where the page's place starts. */
    startsPage?: boolean;
}

type IndexedRecord = Omit<CdxjEntry, 'offset' | 'length' | 'filename'>;

const SOFTWARE = 'dragnet';
const RESPONSE_TYPE = 'application/http; msgtype=response';
const REQUEST_TYPE = 'application/http; msgtype=request';
const FIELDS_TYPE = 'application/warc-fields';
const REVISIT_PROFILES: Record<RevisitCapture['profile'], string> = {
    'server-not-modified': 'http://netpreserve.org/warc/1.1/revisit/server-not-modified',
    'identical-payload-digest': 'http://netpreserve.org/warc/1.1/revisit/identical-payload-digest',
};

/** The `WARC-Payload-Digest` put() writes for a page whose payload is `payload`. */
export function payloadDigestOf(payload: Buffer): string {
    return sha1Digest(payload);
}

/** A page's records: request, response, conversion for a rendered page, metadata. */
export function encodePage(page: PageCapture): EncodedCapture {
    // A rendered page's loaded document may be unreadable (gone with a navigation): its response is then cut.
    const payload = page.payload ?? (page.renderer === 'http' ? encodedBody(page.body, page.charset) : undefined);
    const payloadDigest = page.payload && page.payloadDigest; // a digest given is of the payload given
    const { records, responseId } = exchangeRecords({ ...page, payload, payloadDigest }, page.finalUrl, page.key);
    const date = page.fetchedAt;
    const target = page.finalUrl;
    if (page.renderer !== 'http') {
        const conversion = warcRecord(
            {
                type: 'conversion',
                date,
                targetUri: target,
                contentType: 'text/html; charset=utf-8',
                fields: { 'WARC-Refers-To': responseId },
                payloadOffset: 0,
            },
            Buffer.from(page.body),
        );
        records.push({
            member: compressed(conversion),
            indexed: { url: target, date, mime: 'text/html', status: page.status, digest: conversion.payloadDigest },
        });
    }
    records.push({ member: compressed(metadataRecord(page, target, responseId, page.charset)) });
    return { records, page: { key: page.key, url: page.url, fetchedAt: page.fetchedAt } };
}

/**
 * A request record and its response record, concurrent to each other; `pageKey` makes the response
 * the start of a page. A capture without its payload gets an empty one, said by `WARC-Truncated: unspecified`.
 */
function exchangeRecords(
    capture: RedirectCapture,
    target: string,
    pageKey?: string,
): { records: EncodedRecord[]; responseId: string } {
    const date = capture.fetchedAt;
    const block = httpResponseBlock(capture.status, capture.headers, capture.payload ?? Buffer.alloc(0));
    const response = warcRecord(
        {
            type: 'response',
            date,
            targetUri: target,
            contentType: RESPONSE_TYPE,
            fields: { 'WARC-Truncated': capture.payload ? undefined : 'unspecified' },
            payloadOffset: payloadOffsetOf(block),
            payloadDigest: capture.payload && capture.payloadDigest,
        },
        block,
    );
    const request = requestRecord(target, date, capture.requestHeaders, response.id);
    const mime = (firstHeader(capture.headers, 'content-type') ?? '').split(';')[0]?.trim() || 'unk';
    const indexed = { url: target, date, mime, status: capture.status, digest: response.payloadDigest, key: pageKey };
    return {
        records: [
            { member: compressed(request) },
            { member: compressed(response), indexed, startsPage: pageKey !== undefined },
        ],
        responseId: response.id,
    };
}

/**
 * A revisit's records: its request, the `revisit` record (the response's status line and headers, and
 * the capture it refers to), and a metadata record as a page has, naming the page revisited.
 */
export function encodeRevisit(revisit: RevisitCapture): EncodedCapture {
    if (revisit.profile === 'identical-payload-digest' && !revisit.payloadDigest)
        throw new Error(`a revisit of ${revisit.url} by identical payload digest needs its payload digest`);
    const { url: target, fetchedAt: date } = revisit;
    const record = warcRecord(
        {
            type: 'revisit',
            date,
            targetUri: target,
            contentType: RESPONSE_TYPE,
            fields: {
                'WARC-Profile': REVISIT_PROFILES[revisit.profile],
                'WARC-Refers-To-Target-URI': revisit.refersTo?.url,
                'WARC-Refers-To-Date': revisit.refersTo?.date,
            },
            payloadDigest: revisit.payloadDigest,
        },
        httpRevisitBlock(revisit.status, revisit.headers),
    );
    // As pywb and warcio index a revisit: its own MIME type, the status it holds, the payload's digest.
    const indexed = {
        url: target,
        date,
        mime: 'warc/revisit',
        status: revisit.status,
        digest: record.payloadDigest,
        key: revisit.key,
    };
    return {
        records: [
            { member: compressed(requestRecord(target, date, revisit.requestHeaders, record.id)) },
            { member: compressed(record), indexed },
            { member: compressed(metadataRecord(revisit, target, record.id)) },
        ],
    };
}

/** The request of a capture, concurrent to its response (or revisit) record. */
function requestRecord(
    target: string,
    date: string,
    headers: RedirectCapture['requestHeaders'],
    concurrentTo: string,
): WarcRecord {
    return warcRecord(
        {
            type: 'request',
            date,
            targetUri: target,
            contentType: REQUEST_TYPE,
            fields: { 'WARC-Concurrent-To': concurrentTo },
        },
        httpRequestBlock(target, headers ?? {}),
    );
}

/** What dragnet keeps beside a page's HTTP message, about the record `about`. */
function metadataRecord(
    capture: Pick<PageCapture, 'key' | 'url' | 'label' | 'renderer' | 'fetchedAt'>,
    target: string,
    about: string,
    charset?: string,
): WarcRecord {
    return warcRecord(
        {
            type: 'metadata',
            date: capture.fetchedAt,
            targetUri: target,
            contentType: FIELDS_TYPE,
            fields: { 'WARC-Refers-To': about, 'WARC-Concurrent-To': about },
        },
        warcFields({
            'dragnet-key': capture.key,
            'dragnet-request-url': capture.url,
            'dragnet-label': capture.label,
            'dragnet-renderer': capture.renderer,
            'dragnet-charset': charset,
            'dragnet-fetched-at': capture.fetchedAt,
        }),
    );
}

function firstHeader(headers: HttpHeaders, name: string): string | undefined {
    for (const [key, value] of Object.entries(headers))
        if (key.toLowerCase() === name) return Array.isArray(value) ? value[0] : value;
    return undefined;
}

/** The body as its bytes in `charset`, for a page whose bytes were not kept (a converted store). */
function encodedBody(body: string, charset: string | undefined): Buffer {
    if (!charset || charset === 'UTF-8') return Buffer.from(body);
    return iconv.encode(body, charset);
}

/**
 * One gzip member, compressed here and now: zlib's async call per record costs ~10 times its
 * synchronous one in CPU on these small buffers (its thread-pool round trip), and zlib's fastest
 * level still shrinks a page ~4x alone.
 */
function compressed(record: WarcRecord): Buffer {
    return gzipSync(record.bytes, { level: constants.Z_BEST_SPEED });
}

/** A redirect's request and response: no page. */
export function encodeRedirect(redirect: RedirectCapture): EncodedCapture {
    return { records: exchangeRecords(redirect, redirect.url).records };
}

/** The `warcinfo` record that opens the file `file`, with dragnet's `fields` (the site, the run, …). */
export function warcinfoRecord(file: string, fields: Record<string, string | undefined>): Buffer {
    const block = warcFields({
        software: SOFTWARE,
        format: 'WARC File Format 1.1',
        conformsTo: 'https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/',
        ...fields,
    });
    const record = warcRecord(
        {
            type: 'warcinfo',
            date: new Date().toISOString(),
            contentType: FIELDS_TYPE,
            fields: { 'WARC-Filename': file },
        },
        block,
    );
    return compressed(record);
}
