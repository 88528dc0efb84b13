/**
 * A bot manager that fingerprints TLS, in front of a shop: an HTTPS front on 127.0.0.1 (the wire
 * recorder, wireRecorder.ts, which reads each connection's ClientHello) forwarding every request to
 * the shop over plain HTTP, except that a request under `gatedPrefix` on a connection whose
 * ClientHello carries no GREASE gets Cloudflare's Error 1020 refusal (src/demo/blockPages.ts), a
 * 403 dragnet's classifier calls blocked. Chrome puts GREASE values in its cipher suites,
 * extensions, groups and signature algorithms; OpenSSL, and so Node's clients, never does: the
 * cheapest tell of a non-browser client a JA3/JA4 rule can use.
 *
 * The front is a reverse proxy: the shop's absolute URLs in its HTML (its `<link rel=canonical>`)
 * and in a `location` are rewritten to the front's origin, so a crawl stays on the front.
 */
import { Agent, request } from 'undici';
import { refusal } from '../../src/demo/blockPages.js';
import { type RecordedRequest, startWireRecorder, type WireRecorder, type WireReply } from './wireRecorder.js';

export interface HandshakeGateOptions {
    /** The shop's origin, `http://127.0.0.1:PORT`: requests that pass go there, path and query kept. */
    upstream: string;
    /** Requests whose path starts with this (`/premium/`) are refused to a handshake without GREASE. */
    gatedPrefix: string;
    /** The name the front is reached by (a test DNS maps it to 127.0.0.1), in its origin. Default: `127.0.0.1`. */
    hostname?: string;
}

/** What the front did with one section's requests. */
export interface GateSectionCounts {
    requests: number;
    /** Of them, those on a connection whose ClientHello carried GREASE. */
    grease: number;
    /** Refused with the block page. */
    gated: number;
    /** Forwarded to the shop. */
    passed: number;
}

export interface HandshakeGate {
    /** `https://HOSTNAME:PORT`, no trailing slash. */
    origin: string;
    port: number;
    /** The front's record of every connection and request. */
    recorder: WireRecorder;
    /** By section: the first segment of the request's path (`/premium`, `/products`, `/`). */
    counts: Record<string, GateSectionCounts>;
    /** Closes the front and its connections to the shop (not the shop). */
    close(): Promise<void>;
}

/**
 * Request headers the front does not pass on: hop-by-hop ones (RFC 9110 §7.6.1), `host` (the
 * upstream's own is sent), and `accept-encoding`, so the shop's bodies come as they are re-sent.
 */
const NOT_FORWARDED = new Set([
    'connection',
    'keep-alive',
    'proxy-connection',
    'proxy-authorization',
    'te',
    'trailer',
    'transfer-encoding',
    'upgrade',
    'host',
    'accept-encoding',
    'content-length',
]);

/** The shop's response headers the front passes back. */
const RETURNED = ['content-type', 'location', 'set-cookie', 'retry-after'];

export async function startHandshakeGate(options: HandshakeGateOptions): Promise<HandshakeGate> {
    const upstream = options.upstream.replace(/\/$/, '');
    const hostname = options.hostname ?? '127.0.0.1';
    const agent = new Agent({ keepAliveTimeout: 10_000 });
    const counts: Record<string, GateSectionCounts> = {};
    let origin = '';
    // Set once the front listens; no request arrives before.
    let front: WireRecorder | undefined;

    const handler = async (received: RecordedRequest): Promise<WireReply> => {
        const { pathname } = new URL(received.url, 'https://front.invalid');
        const section = `/${pathname.split('/')[1] ?? ''}`;
        counts[section] ??= { requests: 0, grease: 0, gated: 0, passed: 0 };
        const tally = counts[section];
        tally.requests += 1;
        const grease = Object.values(front!.connections[received.connection]!.grease).some(Boolean);
        if (grease) tally.grease += 1;
        if (pathname.startsWith(options.gatedPrefix) && !grease) {
            tally.gated += 1;
            const { status, body, headers } = refusal(hostname);
            return { status, body, headers: lowerCased(headers) };
        }
        tally.passed += 1;
        return forward(received);
    };

    const forward = async (received: RecordedRequest): Promise<WireReply> => {
        const headers = Object.fromEntries(
            Object.entries(received.headers).filter(([name]) => !NOT_FORWARDED.has(name)),
        );
        let response: Awaited<ReturnType<typeof request>>;
        try {
            response = await request(`${upstream}${received.url}`, {
                method: received.method as 'GET',
                headers,
                dispatcher: agent,
            });
        } catch (error) {
            return { status: 502, body: `bad gateway: ${(error as Error).message}` };
        }
        const returned: Record<string, string | string[]> = {};
        for (const name of RETURNED) {
            const value = response.headers[name];
            if (value !== undefined) returned[name] = value;
        }
        if (typeof returned.location === 'string') returned.location = returned.location.replace(upstream, origin);
        const body = Buffer.from(await response.body.arrayBuffer());
        const html = /^text\/html\b/.test(String(returned['content-type'] ?? ''));
        return {
            status: response.statusCode,
            headers: returned,
            body: html ? body.toString('utf8').replaceAll(upstream, origin) : body,
        };
    };

    front = await startWireRecorder({ handler });
    origin = `https://${hostname}:${front.port}`;
    const recorder = front;
    return {
        origin,
        port: recorder.port,
        recorder,
        counts,
        close: async () => {
            await recorder.close();
            await agent.close();
        },
    };
}

function lowerCased(headers: Record<string, string>): Record<string, string> {
    return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}
