/**
 * The HTTP client: every request of the HTTP stage (through Crawlee's `httpClient` seam), every
 * robots.txt and every sitemap goes out here, on one of two wire profiles (vocabulary/wire.ts):
 * `chrome` hands the request to the Chromium on the machine (fetch/wire/chromeWire.ts); `fast`, the
 * default, sends it with undici, Node's own HTTP client, in place of Crawlee's default got-scraping:
 * on the bench's real-weight pages got-scraping cost ~0.65 ms of CPU per request against undici's
 * ~0.18 (loopback, 20 KB bodies, concurrency 50), and its per-request objects were a tenth of what
 * the crawling thread allocated per page.
 *
 * What a `fast` request gets, whatever its exit:
 * - One connection pool per exit (direct, or one per proxy), kept alive, so a session's requests
 *   leave by its own exit and reuse its connections (got-scraping opened a CONNECT tunnel per
 *   https request through a proxy). HTTP/2 where the server offers it (ALPN), else HTTP/1.1.
 * - Direct connections resolve hosts with the given `lookup` (the egress's, which checks each
 *   address and is the only resolution: the connection is made to what it checked). Through a
 *   proxy the proxy resolves the host; the stage checks the host's addresses first (egress.ts).
 * - Chrome's TLS settings as far as OpenSSL goes (tlsProfile.ts); the headers as given, in their
 *   order, the names in Chrome's HTTP/1.1 casing (`User-Agent`, but `sec-ch-ua`); HTTP/2 sends them lower-case.
 * - http:// targets through a proxy go as absolute-form requests (as browsers and got did: some
 *   proxies allow CONNECT to port 443 only), https:// ones through a CONNECT tunnel (connector.ts).
 * - The body decompressed (gzip, deflate, br) as it is read: what `readBody` counts against the
 *   size cap is the decompressed bytes.
 * - `timeoutMs` covers the whole exchange, body included: past it the request fails with code
 *   `ETIMEDOUT`, so a server that trickles a byte a second fails like one that never answers.
 * - Redirects are never followed here: the stage sends their targets through the frontier, and
 *   robots.txt and sitemaps follow theirs with `fetchFollowing`, checking each hop.
 *
 * Known differences of `fast` from a browser, kept (docs/identities.md): no GREASE and OpenSSL's
 * extension order in the handshake, undici's HTTP/2 SETTINGS and pseudo-header order, `host` and
 * `connection` in lower case on HTTP/1.1, and a strict parser: a response that breaks HTTP/1.1's
 * syntax (got-scraping parsed those leniently) fails with an `HPE_*` code, dead-lettered as
 * `malformed-response` (failures.ts).
 */
import type { BaseHttpClient, HttpRequest, HttpResponse, ResponseTypes, StreamingHttpResponse } from '@crawlee/core';
import { pipeline, type Readable, type Transform } from 'node:stream';
import zlib, { constants, createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { Agent, type Dispatcher, Pool } from 'undici';
import { connector } from './connector.js';
import type { LookupFunction } from '../egress/egress.js';
import type { Identity } from '../egress/identities.js';
import type { OutgoingSession } from '../egress/proxyRouting.js';
import type { WireProfile } from '../../vocabulary/wire.js';
import type { ResponseStream } from './responseBody.js';

export interface HttpClientOptions {
    /** Resolves the hosts of direct connections, with `dns.lookup`'s signature. Default: `dns.lookup`. */
    lookup?: LookupFunction;
    /**
     * Idle connections are closed after this long, unless the server's
     * Keep-Alive asks for less. Default: 4,000 ms (undici's).
     */
    keepAliveTimeoutMs?: number;
    /** For a connection, its proxy tunnel and its TLS handshake together. Default: 10,000 ms (undici's). */
    connectTimeoutMs?: number;
    /** Sends the requests of the `chrome` wire profile (wire/chromeWire.ts). Default: none, and such a request fails. */
    chrome?: ChromeSender;
}

export const HTTP_CLIENT_DEFAULTS = { keepAliveTimeoutMs: 4_000, connectTimeoutMs: 10_000 };

/**
 * Where requests through one proxy go: https:// targets through
 * its tunnels, http:// ones to it as absolute-form requests.
 */
interface ProxyExit {
    tunnels: Dispatcher;
    forward: Dispatcher;
    authorization?: string;
}

export interface ClientRequest {
    url: URL | string;
    /** Default: GET. */
    method?: string;
    /** In the order they are to be sent. */
    headers?: Record<string, string | string[] | undefined>;
    body?: string | Buffer;
    /** The proxy to go out by (`http://user:password@host:port`); undefined: direct. */
    proxyUrl?: string;
    /** The whole exchange, body included. */
    timeoutMs: number;
    /** Aborts the request, or the reading of its body. */
    signal?: AbortSignal;
    /** Default: `fast`. */
    wire?: WireProfile;
    /** The session the request goes out with: the `chrome` profile sends it in that session's browser context. */
    identity?: Identity;
}

/** A response: its body as a stream, with its status, headers and when its headers came. */
export type ClientResponse = ResponseStream & {
    url: string;
    /** `performance.now()` when the request was sent, and when its response's headers arrived. */
    timings: { start: number; response: number };
};

/** What sends the requests of the `chrome` wire profile: wire/chromeWire.ts. */
export interface ChromeSender {
    fetch(request: ClientRequest & { identity: Identity }): Promise<ClientResponse>;
    close(): Promise<void>;
}

/** What a request sent with `session` carries: its exit, its headers, its wire profile. None: direct, bare, `fast`. */
export function sentWith(
    session: OutgoingSession | undefined,
): Pick<ClientRequest, 'proxyUrl' | 'headers' | 'wire' | 'identity'> {
    if (!session) return {};
    const { identity, wire } = session;
    return { proxyUrl: identity.exit.proxyUrl, headers: identity.headers, wire, identity };
}

export class HttpClient implements BaseHttpClient {
    private readonly direct: Dispatcher;
    private readonly proxies = new Map<string, ProxyExit>();
    private readonly keepAliveTimeout: number;
    private readonly connectTimeout: number;
    private readonly chrome?: ChromeSender;

    constructor(options: HttpClientOptions = {}) {
        this.keepAliveTimeout = options.keepAliveTimeoutMs ?? HTTP_CLIENT_DEFAULTS.keepAliveTimeoutMs;
        this.connectTimeout = options.connectTimeoutMs ?? HTTP_CLIENT_DEFAULTS.connectTimeoutMs;
        this.direct = this.pools(connector({ lookup: options.lookup, timeoutMs: this.connectTimeout }));
        this.chrome = options.chrome;
    }

    /** Sends the request; resolves once the response's headers are in, its body left to read. */
    async fetch(request: ClientRequest): Promise<ClientResponse> {
        if (request.wire !== 'chrome') return this.fetchFast(request);
        if (!this.chrome) throw new Error('the chrome wire profile is not available: this client has no Chromium');
        const { identity } = request;
        if (!identity) throw new Error('a request on the chrome wire profile needs the session it goes out with');
        return this.chrome.fetch({ ...request, identity });
    }

    private async fetchFast(request: ClientRequest): Promise<ClientResponse> {
        const url = typeof request.url === 'string' ? new URL(request.url) : request.url;
        const controller = new AbortController();
        let expiry: NodeJS.Immediate | undefined;
        const timer = setTimeout(() => {
            // Judged once the I/O waiting to be read has been: when this thread was busy past the timeout (a browser
            // starting, a burst of parsing), the answer may be in the socket already, and a request the site answered
            // in time must not fail (and be fetched again) for it. setImmediate runs after that I/O.
            expiry = setImmediate(() => controller.abort(timedOut(request.timeoutMs)));
        }, request.timeoutMs);
        const external = request.signal;
        const forwardAbort = () => controller.abort(external?.reason);
        external?.addEventListener('abort', forwardAbort, { once: true });
        const settle = () => {
            clearTimeout(timer);
            clearImmediate(expiry);
            external?.removeEventListener('abort', forwardAbort);
        };
        if (external?.aborted) forwardAbort();
        const start = performance.now();
        try {
            const exit = request.proxyUrl ? this.proxyExit(request.proxyUrl) : undefined;
            const forwarded = exit !== undefined && url.protocol === 'http:';
            const headers = chromeCased(request.headers);
            const response = await (forwarded ? exit.forward : (exit?.tunnels ?? this.direct)).request({
                origin: url.origin,
                path: forwarded ? url.href : `${url.pathname}${url.search}`,
                method: (request.method ?? 'GET') as Dispatcher.HttpMethod,
                headers: forwarded
                    ? {
                          Host: url.host,
                          ...headers,
                          ...(exit.authorization ? { 'Proxy-Authorization': exit.authorization } : {}),
                      }
                    : headers,
                body: request.body,
                signal: controller.signal,
            });
            const body = decoded(response.body, response.headers['content-encoding']) as ClientResponse;
            body.once('close', settle);
            // undici's body fails with an AbortError when its reader destroys it; a reader letting go of a body is
            // not an error. Its readers still get every real one (their own 'error' listener, or `for await`).
            body.on('error', () => undefined);
            body.statusCode = response.statusCode;
            body.headers = response.headers;
            body.url = url.href;
            body.timings = { start, response: performance.now() };
            return body;
        } catch (error) {
            settle();
            throw error;
        }
    }

    /**
     * Fetches `url`, following up to `maxRedirects` redirects, each hop's URL given to `checkHop`
     * before it is asked (it throws to refuse the hop). A chain longer than that answers with its
     * last redirect, unread. `timeoutMs` covers the whole chain.
     */
    async fetchFollowing(
        request: ClientRequest & { maxRedirects: number; checkHop?: (url: URL) => void | Promise<void> },
    ): Promise<ClientResponse> {
        let url = typeof request.url === 'string' ? new URL(request.url) : request.url;
        const deadline = performance.now() + request.timeoutMs;
        for (let hop = 0; ; hop++) {
            const response = await this.fetch({
                ...request,
                url,
                timeoutMs: Math.max(1, deadline - performance.now()),
            });
            const location = response.headers.location;
            const status = response.statusCode ?? 0;
            if (status < 300 || status >= 400 || !location || hop === request.maxRedirects) return response;
            response.destroy();
            url = new URL(location, url);
            await request.checkHop?.(url);
        }
    }

    /** Crawlee's HttpCrawler fetches through this: its request options, the stage's hooks' settings among them. */
    async stream(request: HttpRequest): Promise<StreamingHttpResponse> {
        const response = await this.fetch(fromCrawlee(request));
        return { ...crawleeResponse(request, response), stream: response as Readable, complete: false };
    }

    /** Crawlee's `sendRequest` of a crawling context: the whole body, as text, JSON or a buffer. */
    async sendRequest<T extends keyof ResponseTypes = 'text'>(request: HttpRequest<T>): Promise<HttpResponse<T>> {
        const response = await this.fetch(fromCrawlee(request));
        const chunks: Buffer[] = [];
        for await (const chunk of response) chunks.push(chunk as Buffer);
        const bytes = Buffer.concat(chunks);
        const text = () => bytes.toString(request.encoding ?? 'utf8');
        const body =
            request.responseType === 'buffer' ? bytes : request.responseType === 'json' ? JSON.parse(text()) : text();
        return {
            ...crawleeResponse(request, response),
            complete: true,
            body: body as ResponseTypes[T],
        };
    }

    /** Closes every pool, and the chrome profile's browser; requests in flight fail. */
    async close(): Promise<void> {
        await this.chrome?.close();
        const dispatchers = [
            this.direct,
            ...[...this.proxies.values()].flatMap(({ tunnels, forward }) => [tunnels, forward]),
        ];
        await Promise.all(dispatchers.map((dispatcher) => dispatcher.destroy()));
    }

    /** Connection pools, one per origin, each connection made by `connect`. */
    private pools(connect: ReturnType<typeof connector>): Dispatcher {
        return new Agent({ allowH2: true, keepAliveTimeout: this.keepAliveTimeout, connect });
    }

    private proxyExit(proxyUrl: string): ProxyExit {
        let exit = this.proxies.get(proxyUrl);
        if (!exit) {
            const proxy = new URL(proxyUrl);
            const credentials = proxy.username
                ? `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`
                : undefined;
            exit = {
                tunnels: this.pools(connector({ proxyUrl, timeoutMs: this.connectTimeout })),
                forward: new Pool(proxy.origin, {
                    keepAliveTimeout: this.keepAliveTimeout,
                    connect: { timeout: this.connectTimeout, rejectUnauthorized: false },
                }),
                authorization: credentials && `Basic ${Buffer.from(credentials).toString('base64')}`,
            };
            this.proxies.set(proxyUrl, exit);
        }
        return exit;
    }
}

/** Node's zstd decoder where its zlib has one (22.15 and later): the identities offer zstd only then. */
const createZstdDecompress = (zlib as { createZstdDecompress?: () => Transform }).createZstdDecompress;

/**
 * The decoders of the encodings the identities accept (`gzip, deflate, br`). Like a browser, they
 * give what a body cut short holds instead of failing at its end.
 */
const DECODERS: Record<string, () => Transform> = {
    gzip: () => createGunzip({ finishFlush: constants.Z_SYNC_FLUSH }),
    'x-gzip': () => createGunzip({ finishFlush: constants.Z_SYNC_FLUSH }),
    deflate: () => createInflate({ finishFlush: constants.Z_SYNC_FLUSH }),
    br: () => createBrotliDecompress({ finishFlush: constants.BROTLI_OPERATION_FLUSH }),
    ...(createZstdDecompress ? { zstd: createZstdDecompress } : {}),
};

/** As curl and urllib3 limit them. */
const MAX_CODINGS = 5;

/**
 * The body decoded as it streams, by its Content-Encoding (the last coding applied first). A body
 * with a coding it does not know, or more than `MAX_CODINGS` of them (a decoder bomb), is left as it
 * came: binary, which the stage refuses. Destroying what this returns destroys the body, and so
 * ends the request.
 */
function decoded(body: Readable, contentEncoding: string | string[] | undefined): Readable {
    const codings = String(contentEncoding ?? '')
        .toLowerCase()
        .split(',')
        .map((coding) => coding.trim())
        .filter((coding) => coding && coding !== 'identity');
    if (codings.length === 0 || codings.length > MAX_CODINGS || !codings.every((coding) => coding in DECODERS))
        return body;
    const decoders = codings.reverse().map(decoderFor);
    // biome-ignore lint/plugin/noDoubleCast: pipeline() returns its last stream, a decoder, typed as a writable
    return pipeline([body, ...decoders], () => undefined) as unknown as Readable;
}

/** A new decoder for a coding that `decoded` has checked is one of DECODERS. */
function decoderFor(coding: string): Transform {
    const make = DECODERS[coding];
    if (!make) throw new Error(`no decoder for the content coding ${coding}`);
    return make();
}

/**
 * What Crawlee's response shapes (streamed and whole) share,
 * from a response of ours. Redirects are never followed here.
 */
function crawleeResponse<T extends HttpRequest<keyof ResponseTypes>>(request: T, response: ClientResponse) {
    return {
        request,
        url: response.url,
        redirectUrls: [],
        statusCode: response.statusCode ?? 0,
        headers: response.headers,
        trailers: {},
        downloadProgress: { percent: 0, transferred: 0 },
        uploadProgress: { percent: 0, transferred: 0 },
    };
}

/** What the HTTP stage's hooks set on Crawlee's request options, as a client request. */
function fromCrawlee(
    request: HttpRequest<keyof ResponseTypes> & Pick<ClientRequest, 'wire' | 'identity'>,
): ClientRequest {
    const timeout = request.timeout as { request?: number } | undefined;
    if (!timeout?.request) throw new Error('HttpClient: a request needs timeout.request, the whole exchange in ms');
    return {
        url: request.url,
        method: request.method,
        headers: request.headers,
        body: typeof request.body === 'string' || Buffer.isBuffer(request.body) ? request.body : undefined,
        proxyUrl: request.proxyUrl,
        timeoutMs: timeout.request,
        signal: request.signal,
        wire: request.wire,
        identity: request.identity,
    };
}

function timedOut(timeoutMs: number): Error {
    return Object.assign(new Error(`request timeout: no whole answer within ${Math.round(timeoutMs)} ms`), {
        code: 'ETIMEDOUT',
    });
}

/**
 * Header names as Chrome writes them on HTTP/1.1: `User-Agent`,
 * `Accept-Language`, but the client hints (`sec-ch-ua…`) lower-case.
 */
const casedNames = new Map<string, string>();

function chromeCased(headers: ClientRequest['headers']): Record<string, string | string[]> | undefined {
    if (!headers) return undefined;
    const cased: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(headers)) {
        if (value === undefined) continue;
        let casedName = casedNames.get(name);
        if (casedName === undefined) {
            const lower = name.toLowerCase();
            casedName = lower.startsWith('sec-ch-')
                ? lower
                : lower.replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => dash + letter.toUpperCase());
            // Header names come from a handful of header sets and the
            // sites' own; the cap only bounds a stream of odd ones.
            if (casedNames.size < 1_000) casedNames.set(name, casedName);
        }
        cased[casedName] = value;
    }
    return cased;
}
