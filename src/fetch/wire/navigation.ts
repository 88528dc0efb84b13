/**
 * One request of the chrome wire profile (chromeWire.ts): a top-level navigation of a tab, paused
 * by CDP's Fetch domain once its response's headers are in. Its status and headers are handed on
 * with its body as a stream read from Chromium as it is consumed; when the body has been read or let
 * go of, the navigation is aborted, so the tab never commits the page and nothing is parsed,
 * rendered or run. Redirects are not followed (the stages do that), and Chromium's net errors are
 * given the codes Node's client gives for the same fault, so failures.ts classes both profiles alike.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import type { Protocol } from 'devtools-protocol';
import type { DevtoolsPipe } from './devtoolsPipe.js';

/** A tab of a session's browser context, attached over a flat CDP session. */
export interface Tab {
    sessionId: string;
    targetId: string;
    /** The extra headers set on it, as JSON, when any are. */
    extraHeaders?: string;
}

/**
 * How much of a body one read asks Chromium for. A read of a body Chromium decodes (gzip, br) costs it
 * more per byte the larger the read; 64 KiB keeps that low, and plain bodies read no slower for it.
 */
const READ_BYTES = 64 * 1024;

interface Exchange {
    status: number;
    headers: IncomingHttpHeaders;
    body: Readable;
    /** Settles once the navigation has ended: with whether the tab can be used again. */
    done: Promise<boolean>;
}

/**
 * One navigation of `tab` to `url`, paused at its response: the status, headers and a body stream.
 * The navigation ends (aborted by us) when the body has been read or let go of.
 */
export async function navigate(
    browser: DevtoolsPipe,
    tab: Tab,
    url: URL,
    signal: AbortSignal,
    timeoutMs: number,
    viaProxy: boolean,
): Promise<Exchange> {
    const { sessionId } = tab;
    let onPaused!: (event: Protocol.Fetch.RequestPausedEvent) => void;
    const paused = new Promise<Protocol.Fetch.RequestPausedEvent>((resolve) => {
        onPaused = (event) => {
            // Only the navigation itself is asked for: a tab that never commits loads nothing else.
            if (event.resourceType === 'Document') resolve(event);
            else
                void browser
                    .send('Fetch.continueRequest', { requestId: event.requestId }, sessionId)
                    .catch(() => undefined);
        };
    });
    browser.on(sessionId, 'Fetch.requestPaused', onPaused);
    const navigated = browser.send('Page.navigate', { url: url.href }, sessionId);
    const ended = navigated.then(
        () => true,
        () => false,
    );
    const stop = (requestId?: string) => {
        browser.off(sessionId, 'Fetch.requestPaused', onPaused);
        if (requestId)
            void browser
                .send('Fetch.failRequest', { requestId, errorReason: 'Aborted' }, sessionId)
                .catch(() => undefined);
    };
    const abandoned = new Promise<never>((_, reject) => {
        const onAbort = () => reject(abortError(signal, timeoutMs));
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
    });
    let event: Protocol.Fetch.RequestPausedEvent;
    try {
        const first = await Promise.race([paused, navigated.then((result) => ({ result })), abandoned]);
        if ('result' in first)
            throw netError(first.result.errorText ?? 'the navigation ended without a response', url, viaProxy);
        event = first;
        if (event.responseErrorReason) {
            // Let Chromium fail the navigation with its own, precise net error.
            void browser
                .send('Fetch.continueRequest', { requestId: event.requestId }, sessionId)
                .catch(() => undefined);
            const { errorText } = await Promise.race([navigated, abandoned]);
            throw netError(errorText ?? `net::ERR_FAILED (${event.responseErrorReason})`, url, viaProxy);
        }
    } catch (error) {
        stop();
        void navigated.catch(() => undefined);
        // A tab stuck in a navigation we gave up on is not reused.
        throw Object.assign(error as Error, { reusable: false });
    }
    const status = event.responseStatusCode ?? 0;
    const headers = nodeHeaders(event.responseHeaders ?? []);
    const requestId = event.requestId;
    const bodyless = (status >= 300 && status < 400) || status === 204 || status === 304;
    if (bodyless) {
        stop(requestId);
        return { status, headers, body: Readable.from([]), done: ended };
    }
    const { stream } = await browser
        .send('Fetch.takeResponseBodyAsStream', { requestId }, sessionId)
        .catch((error: Error) => {
            stop(requestId);
            throw error;
        });
    let reusable = true;
    // Chromium's stream ends a body cut short as if it were whole: the connection's net error does not reach it.
    // Where the bytes read are the wire's (no content coding) and their length was declared, a short body is caught.
    const declared = wireLength(event.responseHeaders ?? []);
    let received = 0;
    const body = new Readable({
        read() {
            browser.send('IO.read', { handle: stream, size: READ_BYTES }, sessionId).then(
                ({ data, base64Encoded, eof }) => {
                    if (data) {
                        const chunk = Buffer.from(data, base64Encoded ? 'base64' : 'utf8');
                        received += chunk.length;
                        body.push(chunk);
                    }
                    if (!eof) return;
                    if (declared !== undefined && received < declared) {
                        const cut = `net::ERR_CONTENT_LENGTH_MISMATCH (${received} of ${declared} bytes)`;
                        body.destroy(netError(cut, url, viaProxy));
                    } else body.push(null);
                },
                (error: Error) => body.destroy(error),
            );
        },
        destroy(error, callback) {
            if (error) reusable = false;
            signal.removeEventListener('abort', onAbort);
            void browser.send('IO.close', { handle: stream }, sessionId).catch(() => undefined);
            stop(requestId);
            callback(error);
        },
    });
    const onAbort = () => body.destroy(abortError(signal, timeoutMs));
    signal.addEventListener('abort', onAbort, { once: true });
    body.once('end', () => body.destroy());
    // A body let go of unread fails when its time is up; that is not an error of the process (its readers get every one).
    body.on('error', () => undefined);
    return { status, headers, body, done: ended.then((ok) => ok && reusable) };
}

/**
 * A response's header entries as Node gives them: lower-case names, `set-cookie` a list, other repeats joined.
 * `content-length` stays, as Node's client keeps it over a body it decodes: the size cap refuses a declared
 * length past it before a byte is read (responseBody.ts).
 */
function nodeHeaders(entries: Protocol.Fetch.HeaderEntry[]): IncomingHttpHeaders {
    const headers: IncomingHttpHeaders = {};
    for (const { name, value } of entries) {
        const key = name.toLowerCase();
        // The body is handed over decoded: it has no content coding left.
        if (key === 'content-encoding') continue;
        if (key === 'set-cookie') headers['set-cookie'] = [...(headers['set-cookie'] ?? []), ...value.split('\n')];
        else headers[key] = headers[key] === undefined ? value : `${headers[key]}, ${value}`;
    }
    return headers;
}

/** The length of the body as read when it is the wire's: declared, not chunked, and under no content coding. */
function wireLength(entries: Protocol.Fetch.HeaderEntry[]): number | undefined {
    const value = (name: string) => entries.find((entry) => entry.name.toLowerCase() === name)?.value.trim();
    const coding = value('content-encoding')?.toLowerCase();
    if ((coding && coding !== 'identity') || value('transfer-encoding') !== undefined) return undefined;
    const length = Number(value('content-length') ?? Number.NaN);
    return Number.isSafeInteger(length) && length >= 0 ? length : undefined;
}

/** Chromium's net errors, as the codes Node's client gives for the same fault (failures.ts reads those). */
const NODE_CODES: Record<string, string> = {
    'net::ERR_CONNECTION_REFUSED': 'ECONNREFUSED',
    'net::ERR_CONNECTION_RESET': 'ECONNRESET',
    'net::ERR_CONNECTION_CLOSED': 'ECONNRESET',
    'net::ERR_EMPTY_RESPONSE': 'ECONNRESET',
    'net::ERR_HTTP2_PROTOCOL_ERROR': 'ECONNRESET',
    // A body cut short: undici's "other side closed", node:http's reset.
    'net::ERR_CONTENT_LENGTH_MISMATCH': 'ECONNRESET',
    'net::ERR_INCOMPLETE_CHUNKED_ENCODING': 'ECONNRESET',
    // A body its content coding cannot undo: zlib's code for it in Node's client.
    'net::ERR_CONTENT_DECODING_FAILED': 'Z_DATA_ERROR',
    'net::ERR_CONNECTION_ABORTED': 'ECONNABORTED',
    'net::ERR_TIMED_OUT': 'ETIMEDOUT',
    'net::ERR_CONNECTION_TIMED_OUT': 'ETIMEDOUT',
    'net::ERR_NAME_NOT_RESOLVED': 'ENOTFOUND',
    'net::ERR_ADDRESS_UNREACHABLE': 'EHOSTUNREACH',
};

function netError(errorText: string, url: URL, viaProxy: boolean): Error {
    const netCode = errorText.split(' ')[0] ?? errorText;
    // On a direct exit the tunnel is our own egress proxy's: its failure is the site not answering, not a proxy fault.
    if (!viaProxy && netCode === 'net::ERR_TUNNEL_CONNECTION_FAILED')
        return Object.assign(new Error(`could not connect to ${url.host} (through the egress proxy)`), {
            code: 'ECONNREFUSED',
        });
    const code = NODE_CODES[netCode];
    return Object.assign(new Error(`${errorText} at ${url.href}`), code ? { code } : {});
}

function abortError(signal: AbortSignal, timeoutMs: number): Error {
    const reason = signal.reason as Error | undefined;
    if (reason?.name === 'TimeoutError')
        return Object.assign(new Error(`request timeout: no whole answer within ${Math.round(timeoutMs)} ms`), {
            code: 'ETIMEDOUT',
        });
    return reason instanceof Error ? reason : new Error('the request was aborted');
}
