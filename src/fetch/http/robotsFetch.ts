/**
 * The default fetch of a robots.txt, handed to RobotsPolicy by the wiring: the HTTP client, following
 * at most `maxRedirects` redirects, reading at most `maxBytes` of the body, the whole exchange within
 * `timeoutSecs`. The policy decides what an answer means; this only says what the answer was.
 *
 * - A chain longer than `maxRedirects` answers with its last 3xx (the policy reads that as
 *   unavailable, as RFC 9309 asks past five redirects); no answer at all throws.
 * - A body past `maxBytes` is cut there and the rest not read (RFC 9309: parse at least 500 KiB),
 *   back to the last whole line, so a rule cut mid-path does not disallow more than it says.
 */
import { type Egress, ForbiddenAddressError } from '../egress/egress.js';
import { HttpClient, sentWith } from './httpClient.js';
import type { OutgoingSession } from '../egress/proxyRouting.js';

export interface RobotsFetchOptions {
    /** Redirects followed; RFC 9309 asks for at least five. Default: 5. */
    maxRedirects?: number;
    /** Bytes of the body read; the rest is ignored. Default: 512 000 (500 KiB). */
    maxBytes?: number;
    /** The whole fetch, body included, in seconds; past it the fetch throws. Default: 10. */
    timeoutSecs?: number;
    /**
     * Where the fetch may connect: each hop's URL is checked, each host
     * resolved by its lookup. Default: anywhere, by the system's DNS.
     */
    egress?: Egress;
    /**
     * What it fetches with (the run's, so robots.txt shares the pages'
     * connections). Default: a client of its own, resolving by the egress's lookup.
     */
    client?: HttpClient;
    /**
     * The session each fetch goes out with (one of the site's cheapest tier, so the site sees no
     * other address or browser), asked per fetch. Default: none: direct, with no headers.
     */
    session?: () => OutgoingSession | undefined;
}

/**
 * A robots.txt at an address the egress refuses answers as a 403 would (unavailable: no rules),
 * so the origin's URLs are not held back waiting for it: each is refused when it is fetched and
 * dead-lettered as `forbidden-address` with its own entry.
 */
const FORBIDDEN_ANSWER = { status: 403, body: '' };

function isForbidden(error: unknown): boolean {
    return error instanceof ForbiddenAddressError || (error as { code?: unknown }).code === 'ERR_FORBIDDEN_ADDRESS';
}

export const ROBOTS_FETCH_DEFAULTS = { maxRedirects: 5, maxBytes: 500 * 1024, timeoutSecs: 10 };

export function createRobotsFetch(
    options: RobotsFetchOptions = {},
): (url: string) => Promise<{ status: number; body: string }> {
    const maxRedirects = options.maxRedirects ?? ROBOTS_FETCH_DEFAULTS.maxRedirects;
    const maxBytes = options.maxBytes ?? ROBOTS_FETCH_DEFAULTS.maxBytes;
    const timeoutMs = (options.timeoutSecs ?? ROBOTS_FETCH_DEFAULTS.timeoutSecs) * 1000;
    const { egress } = options;
    const client = options.client ?? new HttpClient({ lookup: egress?.lookup });
    return async (url) => {
        const sent = sentWith(options.session?.());
        try {
            await egress?.preflight(new URL(url), { viaProxy: sent.proxyUrl !== undefined });
            const response = await client.fetchFollowing({
                url,
                ...sent,
                maxRedirects,
                timeoutMs,
                checkHop: (next) => egress?.assertAllowed(next),
            });
            const status = response.statusCode ?? 0;
            // A chain past maxRedirects ends on its last redirect, which the policy reads as unavailable.
            if (status >= 300 && status < 400) {
                response.destroy();
                return { status, body: '' };
            }
            const chunks: Buffer[] = [];
            let size = 0;
            for await (const chunk of response as AsyncIterable<Buffer>) {
                chunks.push(chunk);
                size += chunk.length;
                if (size >= maxBytes) break; // leaving the loop destroys the stream: the rest is never read
            }
            const text = Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8');
            return { status, body: size >= maxBytes ? text.slice(0, text.lastIndexOf('\n') + 1) : text };
        } catch (error) {
            if (isForbidden(error)) return FORBIDDEN_ANSWER;
            throw error;
        }
    };
}
