/**
 * The fetch of a sitemap, handed to the sitemap reader (frontier/sitemaps.ts) by the wiring:
 * the HTTP client, out by the site's cheapest tier and the egress's rules, as robotsFetch.ts does, the
 * body streamed as fast as the reader takes it.
 *
 * - Where it may go: the sitemap's URL and every redirect hop are checked by the egress (a direct
 *   fetch connects to the address the egress's lookup checked) and by the site's scope, so a
 *   sitemap elsewhere fails as `forbidden-address`, `offsite` or `offsite-redirect`.
 * - Decompressed: the client undoes a Content-Encoding; a body that is itself gzip (a `.gz` file) is
 *   gunzipped here, known by its first two bytes rather than by its name or Content-Type, which
 *   servers get wrong both ways.
 * - Bounded: `maxBytes` counts the bytes after both, so a gzip bomb stops there as `too-large`
 *   (a declared Content-Length past it is refused before a byte is read); `timeoutSecs` bounds the
 *   whole exchange, body included.
 * - Failures are FetchFailures classed by failures.ts; the reader retries the transient ones.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { SitemapFetch } from '../../frontier/sitemaps.js';
import type { Egress } from '../egress/egress.js';
import { classifyError, classifyStatus, FetchFailure } from '../failures/failures.js';
import { HttpClient, sentWith } from './httpClient.js';
import type { OutgoingSession } from '../egress/proxyRouting.js';
import type { ResponseStream } from './responseBody.js';

export interface SitemapFetchOptions {
    /**
     * Bytes of a body read, decompressed; past them the fetch fails as
     * `too-large`. Default: 10 MiB (the run passes `--max-response-mb`).
     */
    maxBytes?: number;
    /**
     * The whole fetch, body included, in seconds. The body is read only as fast as the frontier
     * queues its URLs, so this covers that too. Default: 120 — a 50,000-URL sitemap (the
     * protocol's most) streams into the frontier in well under it.
     */
    timeoutSecs?: number;
    /** Redirects followed. Default: 5. */
    maxRedirects?: number;
    /**
     * Where the fetch may connect: each hop's URL is checked, each host
     * resolved by its lookup. Default: anywhere, by the system's DNS.
     */
    egress?: Egress;
    /** What it fetches with (the run's). Default: a client of its own, resolving by the egress's lookup. */
    client?: HttpClient;
    /** Whether a URL is on the site's hosts (frontier/scope.ts). Default: every host is. */
    inScope?: (url: URL) => boolean;
    /**
     * The session each fetch goes out with (one of the site's cheapest tier), asked per fetch.
     * Default: none: direct, with no headers.
     */
    session?: () => OutgoingSession | undefined;
}

export const SITEMAP_FETCH_DEFAULTS = { maxBytes: 10 * 1024 * 1024, timeoutSecs: 120, maxRedirects: 5 };

const GZIP_MAGIC = [0x1f, 0x8b];

export function createSitemapFetch(options: SitemapFetchOptions = {}): SitemapFetch {
    const maxBytes = options.maxBytes ?? SITEMAP_FETCH_DEFAULTS.maxBytes;
    const timeoutMs = (options.timeoutSecs ?? SITEMAP_FETCH_DEFAULTS.timeoutSecs) * 1000;
    const maxRedirects = options.maxRedirects ?? SITEMAP_FETCH_DEFAULTS.maxRedirects;
    const { egress } = options;
    const client = options.client ?? new HttpClient({ lookup: egress?.lookup });
    const assertInScope = (url: URL, reason: 'offsite' | 'offsite-redirect') => {
        if (options.inScope && !options.inScope(url))
            throw new FetchFailure(
                'permanent',
                `${reason}: ${url.host} is not one of the site's hosts`,
                undefined,
                reason,
            );
    };
    return async (url, signal) => {
        const target = new URL(url);
        const sent = sentWith(options.session?.());
        const viaProxy = sent.proxyUrl !== undefined;
        let response: ResponseStream;
        try {
            assertInScope(target, 'offsite');
            await egress?.preflight(target, { viaProxy });
            response = await client.fetchFollowing({
                url: target,
                ...sent,
                maxRedirects,
                timeoutMs,
                signal,
                checkHop: (next) => {
                    egress?.assertAllowed(next);
                    assertInScope(next, 'offsite-redirect');
                },
            });
        } catch (error) {
            throw classified(error, viaProxy);
        }
        const status = response.statusCode ?? 0;
        const refusal =
            status >= 300 && status < 400
                ? new FetchFailure(
                      'permanent',
                      `redirect-loop: more than ${maxRedirects} redirects from ${url}`,
                      status,
                      'redirect-loop',
                  )
                : status < 200 || status >= 300
                  ? new FetchFailure(
                        classifyStatus(status, { viaProxy }) ?? 'permanent',
                        `the sitemap answered ${status}`,
                        status,
                        `http-${status}`,
                    )
                  : Number(response.headers['content-length']) > maxBytes
                    ? tooLarge(`Content-Length ${response.headers['content-length']}`, maxBytes, status)
                    : undefined;
        if (refusal) {
            response.destroy();
            throw refusal;
        }
        return cappedBody(response, maxBytes, status, viaProxy);
    };
}

/**
 * The body's bytes, gunzipped when they are gzip, at most `maxBytes`
 * of them; the stream is destroyed when the reader stops.
 */
async function* cappedBody(
    stream: ResponseStream,
    maxBytes: number,
    status: number,
    viaProxy: boolean,
): AsyncGenerator<Buffer> {
    let size = 0;
    try {
        for await (const chunk of gunzipped(stream)) {
            size += chunk.length;
            if (size > maxBytes) throw tooLarge(`more than ${maxBytes} bytes decompressed`, maxBytes, status);
            yield chunk;
        }
    } catch (error) {
        throw classified(error, viaProxy);
    } finally {
        stream.destroy();
    }
}

/** `body`, gunzipped when its first two bytes are gzip's; its chunks are pulled only as the result is read. */
async function* gunzipped(body: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    const chunks = body[Symbol.asyncIterator]();
    let head = Buffer.alloc(0);
    while (head.length < GZIP_MAGIC.length) {
        const next = await chunks.next();
        if (next.done) break;
        head = Buffer.concat([head, next.value]);
    }
    const whole = (async function* () {
        if (head.length > 0) yield head;
        for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
    })();
    if (head[0] !== GZIP_MAGIC[0] || head[1] !== GZIP_MAGIC[1]) return yield* whole;
    const gunzip = createGunzip();
    // A failure on either side destroys the other, so the loop below ends with it.
    pipeline(Readable.from(whole), gunzip).catch(() => undefined);
    yield* gunzip;
}

/** An error as a FetchFailure with its class: a zlib error is a malformed gzip; the rest failures.ts decides. */
function classified(error: unknown, viaProxy: boolean): FetchFailure {
    if (error instanceof FetchFailure) return error;
    const code = (error as { code?: unknown }).code;
    const message = error instanceof Error ? error.message : String(error);
    if (typeof code === 'string' && code.startsWith('Z_'))
        return new FetchFailure('permanent', `malformed: not valid gzip (${message})`, undefined, 'malformed');
    const { failureClass, reason, status } = classifyError(error, { viaProxy });
    return new FetchFailure(failureClass, message, status, reason);
}

function tooLarge(what: string, maxBytes: number, status: number): FetchFailure {
    const cap = `${(maxBytes / 1024 / 1024).toFixed(1).replace(/\.0$/, '')} MiB`;
    return new FetchFailure(
        'permanent',
        `too-large: ${what}, past the ${cap} cap (--max-response-mb)`,
        status,
        'too-large',
    );
}
