/**
 * Reading WARC files, gzipped per record or not, written by dragnet or any other tool, with
 * webrecorder's `warcio` parser. A record cut short (a crash mid-write, a file copied in part) is
 * skipped and said: one whose block is shorter than its `Content-Length`, or bytes past the last
 * record that parse as none.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { WARCParser, type WARCRecord } from 'warcio';

export interface ArchivedRecord {
    type: string;
    id: string;
    date: string;
    targetUri?: string;
    /** `WARC-Refers-To`: the record a conversion or metadata record is about. */
    refersTo?: string;
    contentType?: string;
    /** An HTTP response's status and headers (names lower-cased; a repeated one gives its values in order). */
    status?: number;
    httpHeaders?: Record<string, string | string[]>;
    /** The payload: an HTTP message's body (content and transfer codings undone), else the whole block. */
    content: Buffer;
    /** `WARC-Payload-Digest`, when the record has one. */
    payloadDigest?: string;
    /** `WARC-Truncated` when the writer cut the block (`length`, `time`, …). */
    truncated?: string;
    /** Where the record is in its file (compressed bytes, when gzipped). */
    offset: number;
    length: number;
}

/** A record that could not be read, and why. */
export interface SkippedRecord {
    file: string;
    offset: number;
    reason: 'cut-short';
    detail: string;
}

export interface WarcReadOptions {
    /** Told of every record skipped because it is cut short. */
    onSkipped?: (skipped: SkippedRecord) => void;
    /** The name `onSkipped` gives the source. Default: `path`, else `WARC`. */
    name?: string;
}

/** A WARC file's name: `.warc`, or `.warc.gz` for one gzipped per record. */
export const WARC_FILE = /\.warc(?:\.gz)?$/;

/** Every whole record of the WARC file at `path`, in file order. */
export async function* warcFileRecords(path: string, options: WarcReadOptions = {}): AsyncGenerator<ArchivedRecord> {
    const { size } = await stat(path);
    yield* warcRecords(createReadStream(path), size, { name: path, ...options });
}

/**
 * Every whole record of `source` (an open stream or the bytes of a range of records), `size` bytes
 * long, in order. Offsets count from the start of `source`.
 */
export async function* warcRecords(
    source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    size: number,
    options: WarcReadOptions = {},
): AsyncGenerator<ArchivedRecord> {
    const name = options.name ?? 'WARC';
    // The HTTP message is read here, from the block as stored: warcio reads a cut block without complaint.
    const parser = new WARCParser(source, { parseHttp: false });
    let end = 0;
    for await (const record of parser) {
        const block = Buffer.from(await record.readFully(false));
        const offset = parser.offset;
        end = offset + parser.recordLength;
        if (block.length < Number(record.warcContentLength)) {
            options.onSkipped?.({
                file: name,
                offset,
                reason: 'cut-short',
                detail: `a ${record.warcType} record of ${record.warcTargetURI ?? 'no URI'} is cut short`,
            });
            continue;
        }
        yield archived(record, block, offset, parser.recordLength);
    }
    // A gzip member cut short ends the parse quietly: its bytes are past the last record read.
    if (end < size)
        options.onSkipped?.({
            file: name,
            offset: end,
            reason: 'cut-short',
            detail: `${size - end} bytes at the end are no whole record`,
        });
}

function archived(record: WARCRecord, block: Buffer, offset: number, length: number): ArchivedRecord {
    const type = record.warcType ?? '';
    const contentType = record.warcContentType ?? undefined;
    const common = {
        type,
        id: record.warcHeader('WARC-Record-ID') ?? '',
        date: record.warcDate ?? '',
        targetUri: record.warcTargetURI ?? undefined,
        refersTo: record.warcHeader('WARC-Refers-To') ?? undefined,
        contentType,
        payloadDigest: record.warcPayloadDigest ?? undefined,
        truncated: record.warcHeader('WARC-Truncated') ?? undefined,
        offset,
        length,
    };
    if (!contentType?.startsWith('application/http')) return { ...common, content: block };
    const message = httpMessage(block);
    return { ...common, ...message, status: type === 'response' ? message.status : undefined };
}

/** An HTTP message's status, headers and body, its transfer and content codings undone. */
function httpMessage(block: Buffer): Pick<ArchivedRecord, 'status' | 'httpHeaders' | 'content'> {
    const headEnd = block.indexOf('\r\n\r\n');
    const head = block.subarray(0, headEnd === -1 ? block.length : headEnd).toString('latin1');
    const [startLine = '', ...lines] = head.split(/\r?\n/);
    const httpHeaders: Record<string, string | string[]> = {};
    for (const line of lines) {
        const colon = line.indexOf(':');
        if (colon <= 0) continue;
        const name = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim();
        const before = httpHeaders[name];
        httpHeaders[name] = before === undefined ? value : [before, value].flat();
    }
    const header = (name: string) => [httpHeaders[name] ?? []].flat().join(', ');
    let content = headEnd === -1 ? Buffer.alloc(0) : block.subarray(headEnd + 4);
    if (/chunked/i.test(header('transfer-encoding'))) content = dechunked(content);
    content = decoded(content, header('content-encoding'));
    return { status: Number(startLine.split(' ')[1]) || undefined, httpHeaders, content };
}

/** A chunked body's data; what follows a malformed chunk size is left out. */
function dechunked(body: Buffer): Buffer {
    const chunks: Buffer[] = [];
    let at = 0;
    while (at < body.length) {
        const lineEnd = body.indexOf('\r\n', at);
        const size = Number.parseInt(body.subarray(at, lineEnd).toString('latin1'), 16);
        if (lineEnd === -1 || !(size > 0)) break;
        chunks.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
        at = lineEnd + 2 + size + 2;
    }
    return Buffer.concat(chunks);
}

/** A body with its content codings (gzip, deflate, br) undone; one that does not decode is kept as stored. */
function decoded(body: Buffer, contentEncoding: string | undefined): Buffer {
    const codings = (contentEncoding ?? '')
        .split(',')
        .map((coding) => coding.trim().toLowerCase())
        .filter((coding) => coding && coding !== 'identity')
        .reverse();
    try {
        for (const coding of codings) body = DECODERS[coding]?.(body) ?? body;
        return body;
    } catch {
        return body;
    }
}

const DECODERS: Record<string, (body: Buffer) => Buffer> = {
    gzip: gunzipSync,
    'x-gzip': gunzipSync,
    deflate: inflateSync,
    br: brotliDecompressSync,
};
