/**
 * WARC/1.1 records (ISO 28500:2017) as bytes: the named fields, a block, and the digests Common
 * Crawl writes (`sha1:` and the SHA-1 in base32). Written here rather than with webrecorder's
 * `warcio`, which reads them in the tests and in `reparse --warc`: its serializer streams every
 * record through web streams and a WebAssembly hasher: over ten times the CPU per record of this
 * writer (`npm run bench -- warc`, docs/benchmarks.md), more than the rest of a crawl spends on a page.
 */
import { createHash, randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import { redactHeaders } from '../../vocabulary/redact.js';

export type WarcType = 'warcinfo' | 'request' | 'response' | 'revisit' | 'metadata' | 'conversion';

export interface WarcRecordFields {
    type: WarcType;
    /** `WARC-Date`: when the capture began (ISO 8601). */
    date: string;
    targetUri?: string;
    contentType: string;
    /** Further named fields, written in this order after the standard ones (`WARC-Concurrent-To`, …). */
    fields?: Record<string, string | undefined>;
    /**
     * Where the payload starts in the block: past the HTTP headers of a request or response. Given, the
     * record gets a `WARC-Payload-Digest`. Default: no payload digest.
     */
    payloadOffset?: number;
    /**
     * The `WARC-Payload-Digest` of a payload the block does not hold (a revisit's), or of the one it
     * holds from `payloadOffset` when the caller has it already. Default: computed from `payloadOffset`.
     */
    payloadDigest?: string;
}

export interface WarcRecord {
    /** `WARC-Record-ID`, `<urn:uuid:…>`. */
    id: string;
    /** The record, uncompressed: fields, block and the closing CRLF CRLF. */
    bytes: Buffer;
    /** `WARC-Payload-Digest`, when the record has one. */
    payloadDigest?: string;
}

export type HttpHeaders = Record<string, string | string[] | undefined>;

const CRLF = '\r\n';
/** What a header the payload no longer fits is kept as (Common Crawl's name), lower-cased as read back. */
export const DECODED_PREFIX = 'x-crawler-';
const RECORD_END = Buffer.from(CRLF + CRLF);

export function warcRecord(fields: WarcRecordFields, block: Buffer): WarcRecord {
    const id = `<urn:uuid:${randomUUID()}>`;
    const payloadDigest =
        fields.payloadDigest ??
        (fields.payloadOffset === undefined ? undefined : sha1Digest(block.subarray(fields.payloadOffset)));
    const named: Record<string, string | undefined> = {
        'WARC-Type': fields.type,
        'WARC-Record-ID': id,
        'WARC-Date': fields.date,
        'WARC-Target-URI': fields.targetUri,
        ...fields.fields,
        'WARC-Block-Digest': sha1Digest(block),
        'WARC-Payload-Digest': payloadDigest,
        'Content-Type': fields.contentType,
        'Content-Length': String(block.length),
    };
    let head = `WARC/1.1${CRLF}`;
    for (const [name, value] of Object.entries(named)) if (value !== undefined) head += `${name}: ${value}${CRLF}`;
    return { id, payloadDigest, bytes: Buffer.concat([Buffer.from(head + CRLF), block, RECORD_END]) };
}

/**
 * An HTTP response as a response record's block: its status line and headers, credentials masked
 * (vocabulary/redact.ts), and `payload`, the body as read after content decoding. The headers say so
 * as Common Crawl's do: `Content-Encoding`, `Transfer-Encoding` and `Content-Length` are kept as
 * `X-Crawler-…` and a `Content-Length` of the payload is added.
 */
export function httpResponseBlock(status: number, headers: HttpHeaders, payload: Buffer): Buffer {
    return httpBlock(
        statusLine(status),
        { ...storedHeaders(headers), 'Content-Length': String(payload.length) },
        payload,
    );
}

/**
 * A revisit record's block: the response's status line and headers as httpResponseBlock writes them,
 * without a payload (the one revisited is another record's, decoded as it was stored).
 */
export function httpRevisitBlock(status: number, headers: HttpHeaders): Buffer {
    return httpBlock(statusLine(status), storedHeaders(headers), Buffer.alloc(0));
}

function statusLine(status: number): string {
    return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`.trimEnd();
}

/** Response headers as stored beside a decoded payload: credentials masked, the codings' headers renamed. */
function storedHeaders(headers: HttpHeaders): HttpHeaders {
    const stored: HttpHeaders = {};
    for (const [name, value] of Object.entries(redactHeaders(headers))) {
        const lower = name.toLowerCase();
        const decodedAway = lower === 'content-encoding' || lower === 'transfer-encoding' || lower === 'content-length';
        stored[decodedAway ? `${DECODED_PREFIX}${name}` : name] = value;
    }
    return stored;
}

/** A GET of `url` with `headers` (credentials masked) as a request record's block. */
export function httpRequestBlock(url: string, headers: HttpHeaders): Buffer {
    const { host, pathname, search } = new URL(url);
    // One Host line, the URL's: a browser's request headers carry their own `host`.
    const sent = Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'host'));
    return httpBlock(`GET ${pathname}${search} HTTP/1.1`, { Host: host, ...redactHeaders(sent) }, Buffer.alloc(0));
}

/** Named fields as `application/warc-fields`: one `name: value` line each. */
export function warcFields(fields: Record<string, string | undefined>): Buffer {
    let text = '';
    for (const [name, value] of Object.entries(fields)) if (value !== undefined) text += `${name}: ${value}${CRLF}`;
    return Buffer.from(text);
}

/** Where the payload of an HTTP block starts: past the blank line that ends its headers. */
export function payloadOffsetOf(block: Buffer): number {
    return block.indexOf(CRLF + CRLF) + 4;
}

function httpBlock(startLine: string, headers: HttpHeaders, payload: Buffer): Buffer {
    let head = startLine + CRLF;
    for (const [name, value] of Object.entries(headers)) {
        if (value === undefined) continue;
        // A value may not span lines in a record (a header folded by the server, say).
        for (const one of Array.isArray(value) ? value : [value])
            head += `${name}: ${one.replace(/[\r\n]+/g, ' ')}${CRLF}`;
    }
    return Buffer.concat([Buffer.from(head + CRLF, 'latin1'), payload]);
}

/** `sha1:` and the SHA-1 of `bytes` in base32 (RFC 4648, no padding: 20 bytes are 32 characters). */
export function sha1Digest(bytes: Buffer): string {
    return `sha1:${base32(createHash('sha1').update(bytes).digest())}`;
}

const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

function base32(bytes: Buffer): string {
    let text = '';
    let bits = 0;
    let value = 0;
    for (const byte of bytes) {
        value = ((value << 8) | byte) & 0xfff;
        bits += 8;
        while (bits >= 5) {
            text += BASE32_ALPHABET[(value >>> (bits - 5)) & 31];
            bits -= 5;
        }
    }
    if (bits > 0) text += BASE32_ALPHABET[(value << (5 - bits)) & 31];
    return text;
}
