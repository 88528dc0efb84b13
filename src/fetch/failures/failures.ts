/**
 * The one place that decides what a failure is, with responseCheck.ts (which responses are pages).
 * Every stage asks here; nothing else interprets status codes, error messages or block pages.
 *
 * - transient: the same request may well succeed later (timeouts, resets, a TLS record damaged on the way, 5xx,
 *   a 429 rate limit) — retried;
 * - blocked: the site's bot defence refused this client — retried on a fresh session/proxy, and a signal
 *   to that layer. It is a 403; or a challenge, captcha or vendor refusal page on any status (Cloudflare,
 *   DataDome, PerimeterX/HUMAN, Akamai, Imperva, AWS WAF, and captcha widgets on an interstitial), which
 *   also turns a 429 or 503 that shows such signs into a block; or a redirect to a challenge page.
 *   `detectBlock` and `isChallengeRedirect` decide it, from the table of signs in responseCheck.ts;
 * - permanent: asking again will not help (404, 410, 400, 401, unsupported content, a forbidden address, a body
 *   past the size cap, a response that breaks HTTP's syntax, a TLS handshake the site and client cannot agree
 *   on or a certificate a verifying client refuses: `tls-failure`) — dead-lettered at once;
 * - invalid: the page was fetched but its records fail the route's schema — quarantined;
 * - exit: the proxy failed, not the site — a 407, a refused or failed CONNECT (Chromium's
 *   ERR_PROXY_* and ERR_TUNNEL_*), a proxy's 590 (its upstream proxy refused the CONNECT) or 597
 *   (its upstream proxy refused its credentials), as an answer or to CONNECT — not 593-596, which
 *   proxy-chain and Apify's proxy give when the *site* is unreachable, refuses or resets,
 *   or, through a proxy, a connection that never reached it (refused, unreachable, or timed out
 *   before the TCP connect). Retried on another exit without an attempt charged; the exit goes on
 *   a breaker (exitBreaker.ts). A proxy that accepts the connection and then hangs looks like a
 *   slow site: that is a timeout, transient.
 */
import type { ClassifiedFailure, FailureClass } from '../../vocabulary/failure.js';

/** A failure with its class decided; thrown by the stages so the crawler's error path can read it back. */
export class FetchFailure extends Error {
    override readonly name = 'FetchFailure';
    /** How long the site asked us to wait before asking again (its `Retry-After`), in ms. */
    retryAfterMs?: number;

    constructor(
        readonly failureClass: FailureClass,
        message: string,
        readonly status?: number,
        /** The stable reason; default: `http-<status>`, else the message. */
        readonly reason = status && status >= 400 ? `http-${status}` : message,
    ) {
        super(message);
    }
}

const PERMANENT_STATUSES = new Set([400, 401, 404, 405, 406, 410, 414, 451, 501]);

/** What a stage knows of an attempt that classifying it needs. */
export interface AttemptContext {
    /** The attempt went through a proxy: its connection errors and upstream statuses are the exit's. */
    viaProxy?: boolean;
}

/**
 * The statuses a proxy answers with when its own upstream proxy failed
 * (proxy-chain's badGatewayStatusCodes NON_200 and AUTH_FAILED).
 */
const isProxyUpstreamStatus = (status: number) => status === 590 || status === 597;

/** The class of an HTTP status, or undefined when the response can be used (2xx, 3xx). */
export function classifyStatus(status: number, { viaProxy = false }: AttemptContext = {}): FailureClass | undefined {
    if (status < 400) return undefined;
    if (status === 407 || (viaProxy && isProxyUpstreamStatus(status))) return 'exit';
    if (status === 403) return 'blocked';
    if (status === 408 || status === 425 || status === 429 || status >= 500) {
        return PERMANENT_STATUSES.has(status) ? 'permanent' : 'transient';
    }
    return 'permanent';
}

const TRANSIENT_ERROR_CODES = new Set([
    'ECONNRESET',
    'ECONNREFUSED',
    'ECONNABORTED',
    'EPIPE',
    'ETIMEDOUT',
    'ESOCKETTIMEDOUT',
    'EAI_AGAIN',
    'EHOSTUNREACH',
    'ENETUNREACH',
    'ERR_STREAM_PREMATURE_CLOSE',
    'UND_ERR_SOCKET',
]);

/**
 * Errors only a proxy gives: Chromium's proxy and tunnel errors.
 * (The HTTP client's refused CONNECT is read by `tunnelRefusal`.)
 */
const PROXY_ERROR = new RegExp(
    [
        'proxy server rejected',
        'proxy authentication required',
        'ERR_PROXY_',
        'ERR_TUNNEL_CONNECTION_FAILED',
        'ERR_NO_SUPPORTED_PROXIES',
    ].join('|'),
    'i',
);

/**
 * TLS failures a retry cannot cure: the site's TLS and ours share no version or cipher, it refuses the name or
 * wants a client certificate, or it sends something malformed. Chromium's `net::ERR_SSL_*` and
 * `ERR_BAD_SSL_CLIENT_AUTH_CERT` (net_error_list.h), Node's `ERR_SSL_*` (OpenSSL's reason), and, for a client
 * that verifies (neither stage does), Chromium's `ERR_CERT_*` and Node's certificate codes.
 */
const TLS_FAILURE = /^(?:ERR_SSL_|ERR_CERT_|ERR_CERTIFICATE_|ERR_BAD_SSL_CLIENT_AUTH_CERT$)/;

/**
 * Of those, two are the connection's, not the site's, and stay transient: a record that arrived damaged (a bad
 * record MAC: net_error_list.h blames servers' TLS compression, which is gone, and that leaves damage on the way)
 * and a connection cut short (OpenSSL's unexpected EOF, a reset by another name).
 */
const TRANSIENT_TLS = /BAD_RECORD_MAC|UNEXPECTED_EOF/;

/** Node's certificate verification codes (OpenSSL's X509_V_ERR_* names), and its host name check. */
const CERT_ERROR_CODES = new Set([
    'UNABLE_TO_GET_ISSUER_CERT',
    'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
    'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
    'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
    'CERT_SIGNATURE_FAILURE',
    'CERT_NOT_YET_VALID',
    'CERT_HAS_EXPIRED',
    'ERROR_IN_CERT_NOT_BEFORE_FIELD',
    'ERROR_IN_CERT_NOT_AFTER_FIELD',
    'DEPTH_ZERO_SELF_SIGNED_CERT',
    'SELF_SIGNED_CERT_IN_CHAIN',
    'CERT_CHAIN_TOO_LONG',
    'CERT_REVOKED',
    'INVALID_CA',
    'PATH_LENGTH_EXCEEDED',
    'INVALID_PURPOSE',
    'CERT_UNTRUSTED',
    'CERT_REJECTED',
    'HOSTNAME_MISMATCH',
    'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** Errors of a connection that never reached its peer: through a proxy, that peer is the proxy. */
const CONNECT_ERROR_CODES = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);

/** Classifies anything a stage or the HTTP client threw. Unknown errors are transient: retrying is capped. */
export function classifyError(error: unknown, context: AttemptContext = {}): ClassifiedFailure {
    const message = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').trim();
    if (error instanceof FetchFailure) {
        return {
            failureClass: error.failureClass,
            reason: error.reason,
            status: error.status,
            message,
            retryAfterMs: error.retryAfterMs,
        };
    }
    const tunnel = error as { code?: unknown; status?: unknown } | undefined;
    if (tunnel?.code === 'ERR_TUNNEL_REFUSED')
        return tunnelRefusal(typeof tunnel.status === 'number' ? tunnel.status : undefined, message);
    const exitFault = exitFaultReason(error, message, context);
    if (exitFault) return { failureClass: 'exit', reason: exitFault, message };
    // The egress refused the address a host resolved to (egress.ts); the client and Crawlee pass its message on.
    if (/\bforbidden-address:/.test(message))
        return { failureClass: 'permanent', reason: 'forbidden-address', message };
    // The HTTP client's parser refused the response: it breaks
    // HTTP/1.1's syntax (llhttp's HPE_* codes) or its head is too large.
    const parserCode = firstCode(error);
    if (parserCode?.startsWith('HPE_') || parserCode === 'UND_ERR_HEADERS_OVERFLOW')
        return { failureClass: 'permanent', reason: 'malformed-response', message };
    if (isTlsFailure(error, message)) return { failureClass: 'permanent', reason: 'tls-failure', message };
    const code = errorCode(error);
    if (code && TRANSIENT_ERROR_CODES.has(code)) {
        return { failureClass: 'transient', reason: code.toLowerCase().replace(/_/g, '-'), message };
    }
    if (/timed? ?out|timeout/i.test(message)) return { failureClass: 'transient', reason: 'timeout', message };
    if (/served Content-Type/i.test(message))
        return { failureClass: 'permanent', reason: 'unsupported-content-type', message };
    // A client's "Redirected 10 times", Chromium's ERR_TOO_MANY_REDIRECTS; not any message that mentions
    // redirects (a browser's launch log lists flags with the word in them).
    if (/redirected \d+ times|too many redirects|ERR_TOO_MANY_REDIRECTS|redirect loop/i.test(message)) {
        return { failureClass: 'permanent', reason: 'redirect-loop', message };
    }
    return { failureClass: 'transient', reason: 'error', message };
}

/**
 * The first error code on an error or its causes (a client may wrap the socket error), or named in
 * its message (Crawlee re-throws connection errors as a SessionError with only the message).
 */
function errorCode(error: unknown): string | undefined {
    for (let current = error, depth = 0; current && depth < 5; depth++) {
        const { code, cause } = current as { code?: unknown; cause?: unknown };
        if (typeof code === 'string' && TRANSIENT_ERROR_CODES.has(code)) return code;
        current = cause;
    }
    const message = error instanceof Error ? error.message : String(error);
    return message.match(/\b(?:E[A-Z_]{3,}|UND_ERR_[A-Z_]+)\b/g)?.find((word) => TRANSIENT_ERROR_CODES.has(word));
}

/**
 * Whether the error is a TLS failure a retry cannot cure: its code or a cause's, or a code named in the
 * message (Chromium's `net::ERR_…`; Crawlee may keep only the message), or OpenSSL's reason in the message
 * (`…:SSL routines:<function>:<reason>:…`), which is what Node makes its `ERR_SSL_*` code of.
 */
function isTlsFailure(error: unknown, message: string): boolean {
    const codes: string[] = message.match(/\b[A-Z][A-Z0-9_]{5,}\b/g) ?? [];
    for (let current = error, depth = 0; current && depth < 5; depth++) {
        const { code, cause } = current as { code?: unknown; cause?: unknown };
        if (typeof code === 'string') codes.push(code);
        current = cause;
    }
    const openSslReason = message.match(/SSL routines:[^:]*:([^:]+)/)?.[1];
    if (openSslReason) codes.push(`ERR_SSL_${openSslReason.trim().toUpperCase().replace(/\W+/g, '_')}`);
    return codes.some((code) => (TLS_FAILURE.test(code) && !TRANSIENT_TLS.test(code)) || CERT_ERROR_CODES.has(code));
}

/**
 * A proxy's answer to CONNECT (connector.ts), read as its answer to a request would be: a 407, or
 * the 590/597 of an upstream proxy, is the exit's; the 593-596 a proxy gives when the site is
 * unreachable, refuses or resets are the site's, transient; any other status is classed as the
 * site's own would be. An answer that is not HTTP is the proxy's fault.
 */
function tunnelRefusal(status: number | undefined, message: string): ClassifiedFailure {
    if (status === undefined) return { failureClass: 'exit', reason: 'proxy-refused', message };
    const failureClass = classifyStatus(status, { viaProxy: true }) ?? 'transient';
    if (failureClass === 'exit')
        return { failureClass, reason: status === 407 ? 'proxy-auth' : 'proxy-refused', message, status };
    return { failureClass, reason: `http-${status}`, message, status };
}

/** Why the attempt's proxy, not the site, failed it; undefined when it did not. */
function exitFaultReason(error: unknown, message: string, { viaProxy = false }: AttemptContext): string | undefined {
    if (PROXY_ERROR.test(message)) return /407|auth/i.test(message) ? 'proxy-auth' : 'proxy-refused';
    if (!viaProxy) return undefined;
    const code = firstCode(error);
    if (code && CONNECT_ERROR_CODES.has(code)) return `proxy-${code.toLowerCase()}`;
    // The HTTP client's connection to the proxy timed out (the tunnel's own connection is the proxy's to time).
    if (code === 'UND_ERR_CONNECT_TIMEOUT') return 'proxy-timeout';
    return undefined;
}

function firstCode(error: unknown): string | undefined {
    for (let current = error, depth = 0; current && depth < 5; depth++) {
        const { code, cause } = current as { code?: unknown; cause?: unknown };
        if (typeof code === 'string') return code;
        current = cause;
    }
    return undefined;
}
