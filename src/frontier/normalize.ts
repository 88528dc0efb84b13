/**
 * URL normalization: the one form a URL takes before it enters the frontier, so the same page is
 * never fetched twice however it was linked.
 *
 * Parsing is left to the WHATWG `URL` parser, which already lower-cases scheme and host, converts
 * IDN hosts to punycode, drops the default port and resolves dot segments (including `%2e`). The
 * rules below are what it does not do. Where this differs from Crawlee's `normalizeUrl` and
 * w3lib's `canonicalize_url`:
 * - the query is never re-serialized through `URLSearchParams`/`urlencode`: that rewrites bytes the
 *   server sees (`a=b/c` becomes `a=b%2Fc`, `?flag` becomes `?flag=`, `%20` becomes `+`);
 * - params are sorted by name only, stably, so `?id=2&id=1` keeps its order (lists are ordered);
 * - only unreserved characters are percent-decoded; reserved ones such as `%2F` stay encoded;
 * - the trailing slash is folded in the dedup key (`urlKey`) but not in the URL that is fetched,
 *   so we never request `/a` from a server that only answers `/a/`;
 * - non-http(s) links are rejected with a reason rather than returned as null or passed through.
 */

/**
 * Query parameters dropped by default, in the `trackingParams` syntax (exact names, or `prefix*`):
 * every `utm_*` plus well-known click ids and analytics/referral tags that never change the page.
 */
export const DEFAULT_TRACKING_PARAMS: readonly string[] = Object.freeze([
    'utm_*', // Google Analytics campaign tags (utm_source, utm_medium, utm_campaign, ...)
    'fbclid', // Facebook
    'gclid',
    'gclsrc',
    'dclid',
    'gbraid',
    'wbraid',
    '_ga',
    '_gl',
    'srsltid', // Google Ads / Analytics / Merchant
    'msclkid', // Microsoft Ads
    'yclid', // Yandex
    'twclid', // X / Twitter
    'ttclid', // TikTok
    'li_fat_id', // LinkedIn
    'igshid', // Instagram share
    'mc_cid',
    'mc_eid', // Mailchimp
    '_hsenc',
    '_hsmi', // HubSpot
    'mkt_tok', // Marketo
    'spm', // Alibaba / Taobao
    'ref',
    'ref_src',
    'ref_url', // referral tags
]);

/** A URL that cannot enter the frontier; `reason` says why in words a user can act on. */
export class InvalidUrlError extends Error {
    constructor(
        readonly url: string,
        reason: string,
    ) {
        // JSON.stringify quotes the URL and escapes newlines, keeping the message on one line;
        // long inputs (data: URIs) are cut so a log line stays readable; `url` keeps it whole.
        const shown = url.length > 200 ? `${url.slice(0, 200)}…` : url;
        super(`invalid URL ${JSON.stringify(shown)}: ${reason}`);
        this.name = 'InvalidUrlError';
    }
}

export interface NormalizeOptions {
    /** Resolve relative links against this page URL. Default: none, so relative links throw. */
    base?: string | URL;
    /**
     * Extra query parameter names that never change the page (exact names, or `prefix*`), dropped
     * in addition to {@link DEFAULT_TRACKING_PARAMS}. Default: none. The matcher is compiled once
     * per array, so pass the same array on every call rather than a fresh literal.
     */
    trackingParams?: readonly string[];
}

/**
 * The URL to fetch: http(s) only; scheme and host lower-cased (IDN → punycode), default port dropped,
 * fragment dropped, tracking params dropped, remaining query params sorted by name (stable: repeated
 * names keep their relative order), empty query `?` dropped, dot segments resolved, percent-encoding
 * normalized (hex upper-cased, unreserved characters A-Z a-z 0-9 - . _ ~ decoded, everything else left
 * encoded as the server may rely on it). Throws InvalidUrlError for unparsable input, a relative URL
 * without base, a non-http(s) scheme (mailto:, javascript:, ftp:, data:), a missing host, or more
 * than MAX_URL_LENGTH characters.
 */
export function normalizeUrl(raw: string, options: NormalizeOptions = {}): string {
    const url = parse(raw, options.base);
    const isTracking = trackingMatcher(options.trackingParams);
    const path = normalizePercentEncoding(url.pathname);
    const query = normalizeQuery(normalizePercentEncoding(url.search), isTracking);
    const userinfo = url.username || url.password ? `${url.username}${url.password ? `:${url.password}` : ''}@` : '';
    return `${url.protocol}//${userinfo}${url.host}${path}${query}`;
}

/**
 * The dedup identity of a normalized URL: `normalizeUrl` output with a trailing slash folded
 * (`/a/b/` and `/a/b` are the same page; the root `/` stays). The fetch form keeps the slash the
 * server uses; only the seen-set compares keys. The input is not re-parsed: pass `normalizeUrl` output.
 */
export function urlKey(normalizedUrl: string): string {
    // In normalized form the host cannot hold `/` or `?` and there is no fragment, so the path runs
    // from the first `/` after `scheme://` to the first `?`.
    const pathStart = normalizedUrl.indexOf('/', normalizedUrl.indexOf('//') + 2);
    if (pathStart < 0) return normalizedUrl;
    const queryStart = normalizedUrl.indexOf('?', pathStart);
    const pathEnd = queryStart < 0 ? normalizedUrl.length : queryStart;
    let end = pathEnd;
    while (end - 1 > pathStart && normalizedUrl[end - 1] === '/') end--;
    return end === pathEnd ? normalizedUrl : normalizedUrl.slice(0, end) + normalizedUrl.slice(pathEnd);
}

const FETCHABLE_SCHEMES = new Set(['http:', 'https:']);

/** Parses `raw` (trimmed) against `base`, or throws an InvalidUrlError saying what is wrong. */
/**
 * The longest URL the frontier takes, in characters (as a link or a Location gives it). 2 KiB:
 * the limit browsers and CDNs were long held to; longer ones are traps or payloads, not pages.
 */
export const MAX_URL_LENGTH = 2048;

function parse(raw: string, base: string | URL | undefined): URL {
    const input = raw.trim();
    if (input.length > MAX_URL_LENGTH)
        throw new InvalidUrlError(raw, `longer than ${MAX_URL_LENGTH} characters (${input.length})`);
    let url: URL;
    try {
        url = new URL(input, typeof base === 'string' ? base.trim() : base);
    } catch {
        throw new InvalidUrlError(raw, parseFailureReason(input, base));
    }
    if (!FETCHABLE_SCHEMES.has(url.protocol)) {
        throw new InvalidUrlError(raw, `unsupported scheme "${url.protocol}" (only http and https are crawled)`);
    }
    // WHATWG already refuses an empty host for http(s); this guards the promise, not a known case.
    if (!url.hostname) throw new InvalidUrlError(raw, 'missing host');
    return url;
}

/** Only reached on the error path, so the extra parses here cost nothing on good links. */
function parseFailureReason(input: string, base: string | URL | undefined): string {
    if (input === '') return 'empty';
    if (base === undefined) {
        // Parsable against some base means it is a relative reference (`/x`, `../x`, `not a url`).
        return URL.canParse(input, 'http://base.invalid/')
            ? 'not an absolute URL, and no base URL was given to resolve it against'
            : 'cannot be parsed';
    }
    if (typeof base === 'string' && !URL.canParse(base.trim())) {
        return `the base URL ${JSON.stringify(base)} is not a valid absolute URL`;
    }
    return 'cannot be parsed (bad host, port or IPv6 address?)';
}

const PERCENT_ESCAPE = /%[0-9a-fA-F]{2}/g;
const UNRESERVED = /[A-Za-z0-9\-._~]/;

/**
 * `%7e` and `~` are the same URL (RFC 3986 §6.2.2.2), so unreserved characters are decoded and
 * hex is upper-cased. Reserved characters stay encoded: `/a%2Fb` and `/a/b` can be different pages.
 */
function normalizePercentEncoding(part: string): string {
    if (!part.includes('%')) return part;
    return part.replace(PERCENT_ESCAPE, (sequence) => {
        const char = String.fromCharCode(parseInt(sequence.slice(1), 16));
        return UNRESERVED.test(char) ? char : sequence.toUpperCase();
    });
}

/**
 * Drops tracking params and empty pairs (`&&`), then sorts by name. The pairs are kept byte for
 * byte: only their order changes. Sorting by name alone (stable) keeps `?id=2&id=1` in order,
 * as servers read repeated names as an ordered list.
 */
function normalizeQuery(search: string, isTracking: (name: string) => boolean): string {
    if (search.length <= 1) return ''; // '' or a bare '?'
    const pairs: { name: string; pair: string }[] = [];
    for (const pair of search.slice(1).split('&')) {
        if (pair === '') continue;
        const eq = pair.indexOf('=');
        const name = eq < 0 ? pair : pair.slice(0, eq);
        if (!isTracking(name)) pairs.push({ name, pair });
    }
    if (pairs.length === 0) return '';
    pairs.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return `?${pairs.map((p) => p.pair).join('&')}`;
}

/** Compiles `trackingParams` syntax (exact names, or `prefix*`) into a predicate. */
function compileMatcher(patterns: readonly string[]): (name: string) => boolean {
    const exact = new Set<string>();
    const prefixes: string[] = [];
    for (const pattern of patterns) {
        if (pattern.endsWith('*')) prefixes.push(pattern.slice(0, -1));
        else exact.add(pattern);
    }
    return (name) => exact.has(name) || prefixes.some((prefix) => name.startsWith(prefix));
}

const defaultMatcher = compileMatcher(DEFAULT_TRACKING_PARAMS);
const customMatchers = new WeakMap<readonly string[], (name: string) => boolean>();

/** The matcher for defaults plus `extra`, compiled once per `extra` array. */
function trackingMatcher(extra: readonly string[] | undefined): (name: string) => boolean {
    if (!extra || extra.length === 0) return defaultMatcher;
    let matcher = customMatchers.get(extra);
    if (!matcher) {
        matcher = compileMatcher([...DEFAULT_TRACKING_PARAMS, ...extra]);
        customMatchers.set(extra, matcher);
    }
    return matcher;
}
