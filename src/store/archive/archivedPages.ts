/**
 * The pages of dragnet's own archive, read back from its records: a page is a response (and, for a
 * rendered page, its conversion) completed by the metadata record that refers to it.
 */
import { decode } from 'whatwg-encoding';
import type { Renderer } from '../../site/site.js';
import type { RawPage } from './rawPage.js';
import type { ArchivedRecord } from './warcReader.js';
import { DECODED_PREFIX, type HttpHeaders } from './warcRecord.js';

/**
 * The pages in a stream of dragnet's records: each completed by its metadata record. The responses at
 * the offsets `passOver` are left out, and so are their pages.
 */
export async function* archivedPages(
    records: AsyncIterable<ArchivedRecord>,
    passOver: ReadonlySet<number> = new Set(),
): AsyncGenerator<RawPage> {
    // The records of a page are written together: only the page being read is held.
    let response: ArchivedRecord | undefined;
    let conversion: ArchivedRecord | undefined;
    for await (const record of records) {
        if (record.type === 'response')
            [response, conversion] = [passOver.has(record.offset) ? undefined : record, undefined];
        else if (record.type === 'conversion' && record.refersTo === response?.id) conversion = record;
        else if (record.type === 'metadata' && response && record.refersTo === response.id) {
            const fields = parseWarcFields(record.content);
            const page = pageOf(response, conversion, fields);
            if (page) yield page;
            response = undefined;
        }
    }
}

function pageOf(
    response: ArchivedRecord,
    conversion: ArchivedRecord | undefined,
    fields: Record<string, string>,
): RawPage | undefined {
    const key = fields['dragnet-key'];
    const renderer = fields['dragnet-renderer'] as Renderer | undefined;
    if (!key || !renderer) return undefined;
    const charset = fields['dragnet-charset'];
    const body = conversion
        ? conversion.content.toString('utf8')
        : charset && charset !== 'UTF-8'
          ? decode(response.content, charset)
          : response.content.toString('utf8');
    return {
        key,
        url: fields['dragnet-request-url'] ?? response.targetUri ?? '',
        finalUrl: response.targetUri ?? '',
        status: response.status ?? 0,
        headers: receivedHeaders(response.httpHeaders ?? {}),
        fetchedAt: fields['dragnet-fetched-at'] ?? response.date,
        renderer,
        label: fields['dragnet-label'] ?? '',
        body,
        ...(charset ? { charset } : {}),
    };
}

/** The headers as the site sent them: the adjustments of httpResponseBlock undone. */
function receivedHeaders(stored: HttpHeaders): HttpHeaders {
    const headers: HttpHeaders = {};
    for (const [name, value] of Object.entries(stored)) {
        if (name === 'content-length') continue;
        headers[name.startsWith(DECODED_PREFIX) ? name.slice(DECODED_PREFIX.length) : name] = value;
    }
    return headers;
}

function parseWarcFields(content: Buffer): Record<string, string> {
    const fields: Record<string, string> = {};
    for (const line of content.toString('utf8').split('\r\n')) {
        const colon = line.indexOf(':');
        if (colon > 0) fields[line.slice(0, colon)] = line.slice(colon + 1).trim();
    }
    return fields;
}
