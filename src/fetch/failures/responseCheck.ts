/**
 * Which responses are pages: a non-redirect response is usable when it is no bot manager's block
 * (the table of signs below), its status is not a failure (failures.ts classes it) and its type is
 * HTML. A redirect is judged here too, for a Location that leads to a challenge page.
 */
import { classifyStatus, FetchFailure } from './failures.js';

/** The media types a route's pages may have unless it names others (`contentTypes`). */
export const DEFAULT_CONTENT_TYPES: readonly string[] = ['text/html', 'application/xhtml+xml'];

/** What a stage saw of a response: enough to tell a block page from a page. */
export interface ResponseSnapshot {
    status: number;
    /** Header names in any case; a repeated header may come as an array. */
    headers: Record<string, string | string[] | undefined>;
    /** The body as text, when the stage has it. */
    body?: string;
    /** The URL that answered, when known: resolves a relative Location (see `isChallengeRedirect`). */
    url?: string;
}

/**
 * Why a non-redirect response cannot be used as a page, or undefined when it can. Given the
 * response's headers and body, a block (see `detectBlock`) is reported before the status and type.
 */
export function checkResponse(
    status: number,
    contentType: string | undefined,
    response?: Omit<ResponseSnapshot, 'status'>,
    contentTypes: readonly string[] = DEFAULT_CONTENT_TYPES,
): FetchFailure | undefined {
    const blocked = response && detectBlock({ ...response, status });
    if (blocked) return blocked;
    const failureClass = classifyStatus(status);
    if (failureClass) return new FetchFailure(failureClass, `HTTP ${status}`, status);
    return contentTypeRefusal(status, contentType, contentTypes);
}

/** A `unsupported-content-type` failure when the response's media type is not one of `contentTypes`. */
export function contentTypeRefusal(
    status: number,
    contentType: string | undefined,
    contentTypes: readonly string[] = DEFAULT_CONTENT_TYPES,
): FetchFailure | undefined {
    const type = contentType?.split(';')[0]?.trim().toLowerCase();
    if (type && contentTypes.includes(type)) return undefined;
    return new FetchFailure(
        'permanent',
        `unsupported content type: ${type || 'none'}`,
        status,
        'unsupported-content-type',
    );
}

/** What a bot manager did: asked for a captcha, ran a (JS or device) challenge, or refused outright. */
type BlockKind = 'captcha' | 'challenge' | 'refusal';

/**
 * How much one sign proves on its own, and so where it counts:
 * - `sure`: only a challenge or refusal carries it — counts on any status;
 * - `page`: text of a vendor's challenge or block page, not found in ordinary pages — counts on a
 *   403, 429 or 503 (what bot managers answer with), and on any other status when the page looks
 *   like an interstitial: small (under INTERSTITIAL_MAX_CHARS) or titled as a check;
 * - `embed`: also found in ordinary pages (a captcha widget in a login or contact form, a header the
 *   vendor puts on every response) — counts on a 403 or 429, and elsewhere only under a title that
 *   names a check. Size alone is not enough: a small contact page with a reCAPTCHA is still a page.
 */
type Proof = 'sure' | 'page' | 'embed';

/**
 * A sign is a response header (lower case) and the value it must have, or a pattern in the body (no
 * flag but `i`: ANY_PAGE_SIGN joins them under that one).
 */
type BlockSign = BlockSignDescription & ({ header: [name: string, value: RegExp] } | { body: RegExp });

interface BlockSignDescription {
    vendor: string;
    kind: BlockKind;
    proof: Proof;
    /** What was seen, for the message. */
    sign: string;
}

/**
 * The signs bot managers leave, most telling first: the first that counts decides the reason.
 * Where each comes from is noted above it; crawlee's `RETRY_CSS_SELECTORS` (@crawlee/utils) and
 * wafw00f's plugins are the public lists these start from.
 */
const BLOCK_SIGNS: readonly BlockSign[] = [
    // Cloudflare sets `cf-mitigated: challenge` on every challenge page, whatever its type, and `challenge` is its
    // only value (developers.cloudflare.com/cloudflare-challenges/challenge-types/challenge-pages/detect-response).
    {
        vendor: 'Cloudflare',
        kind: 'challenge',
        proof: 'sure',
        sign: 'cf-mitigated: challenge',
        header: ['cf-mitigated', /^challenge$/i],
    },
    // AWS WAF: the Challenge action answers 202 with `x-amzn-waf-action: challenge`, the CAPTCHA action 405 with
    // `captcha` (docs.aws.amazon.com/waf/latest/developerguide/waf-captcha-and-challenge-actions.html).
    {
        vendor: 'AWS WAF',
        kind: 'captcha',
        proof: 'sure',
        sign: 'x-amzn-waf-action: captcha',
        header: ['x-amzn-waf-action', /^captcha$/i],
    },
    {
        vendor: 'AWS WAF',
        kind: 'challenge',
        proof: 'sure',
        sign: 'x-amzn-waf-action: challenge',
        header: ['x-amzn-waf-action', /^challenge$/i],
    },
    // DataDome: `x-dd-b` is 1 on a soft challenge (device check), 2 on a hard one (captcha) (docs.datadome.co
    // reference "validate request", as microlinkhq/is-antibot reads it).
    { vendor: 'DataDome', kind: 'captcha', proof: 'sure', sign: 'x-dd-b: 2', header: ['x-dd-b', /^2$/] },
    { vendor: 'DataDome', kind: 'challenge', proof: 'sure', sign: 'x-dd-b: 1', header: ['x-dd-b', /^1$/] },
    // Vercel's attack mode, in Cloudflare's spelling (is-antibot).
    {
        vendor: 'Vercel',
        kind: 'challenge',
        proof: 'sure',
        sign: 'x-vercel-mitigated: challenge',
        header: ['x-vercel-mitigated', /^challenge$/i],
    },

    // Cloudflare's challenge page: its inline `window._cf_chl_opt`, the `/orchestrate/` script it loads, its title.
    // Not the bare `/cdn-cgi/challenge-platform/` path: "JavaScript Detections" inject
    // `/cdn-cgi/challenge-platform/scripts/jsd/main.js` into ordinary pages, error pages included.
    { vendor: 'Cloudflare', kind: 'challenge', proof: 'page', sign: 'cf_chl', body: /cf[_-]chl/i },
    {
        vendor: 'Cloudflare',
        kind: 'challenge',
        proof: 'page',
        sign: 'challenge-platform orchestrate',
        body: /\/cdn-cgi\/challenge-platform\/(?:h\/\w+\/)?orchestrate\//i,
    },
    {
        vendor: 'Cloudflare',
        kind: 'challenge',
        proof: 'page',
        sign: '"Just a moment..." title',
        body: /<title>\s*just a moment(?:\.\.\.|…)\s*<\/title>/i,
    },
    // Cloudflare's Error 1020 page: a firewall rule refused the request.
    {
        vendor: 'Cloudflare',
        kind: 'refusal',
        proof: 'page',
        sign: '"Attention Required! | Cloudflare" title',
        body: /<title>\s*attention required! \| cloudflare\s*<\/title>/i,
    },
    // DataDome's captcha and device-check pages load from captcha-delivery.com (geo., ct.).
    {
        vendor: 'DataDome',
        kind: 'captcha',
        proof: 'page',
        sign: 'captcha-delivery.com',
        body: /captcha-delivery\.com/i,
    },
    // PerimeterX/HUMAN's block page: its captcha container and script (PerimeterX's own block page examples),
    // and its refusal text (wafw00f's perimeterx plugin).
    { vendor: 'PerimeterX', kind: 'captcha', proof: 'page', sign: 'px-captcha', body: /px-captcha|_pxCaptcha/i },
    {
        vendor: 'PerimeterX',
        kind: 'refusal',
        proof: 'page',
        sign: '"Access to this page has been denied"',
        body: /access to this page has been denied/i,
    },
    // Akamai Bot Manager's behavioural challenge (the `sec-if-cpt-container` interstitial), and the edge's "Access
    // Denied" page. Its reference link reaches HTTP clients entity-encoded (`errors&#46;edgesuite&#46;net`), and the
    // edge's other error pages (timeouts, 503 "Zero size object") link the same host, so the title is needed too.
    {
        vendor: 'Akamai',
        kind: 'challenge',
        proof: 'page',
        sign: 'sec-if-cpt-container',
        body: /sec-if-cpt-container|\/_sec\/cp_challenge\//i,
    },
    {
        vendor: 'Akamai',
        kind: 'refusal',
        proof: 'page',
        sign: '"Access Denied" page',
        body: /<title>\s*access denied\s*<\/title>[\s\S]*errors(?:\.|&#46;)edgesuite(?:\.|&#46;)net/i,
    },
    // Imperva (Incapsula): the challenge iframe crawlee's RETRY_CSS_SELECTORS looks for, the bare interstitial (a
    // robots meta, then the resource script, nothing else) and the refusal text (wafw00f's incapsula plugin). The
    // resource script alone is no sign: Imperva injects it into ordinary pages.
    {
        vendor: 'Imperva',
        kind: 'challenge',
        proof: 'page',
        sign: '_Incapsula_Resource iframe',
        body: /<iframe[^>]+_Incapsula_Resource/i,
    },
    {
        vendor: 'Imperva',
        kind: 'challenge',
        proof: 'page',
        sign: '_Incapsula_Resource interstitial',
        body: /noindex,\s*nofollow["']?\s*\/?>\s*<script[^>]+_Incapsula_Resource/i,
    },
    {
        vendor: 'Imperva',
        kind: 'refusal',
        proof: 'page',
        sign: 'Incapsula incident ID',
        body: /incapsula incident id/i,
    },
    // AWS WAF's challenge and captcha pages hand their challenge.js its keys in `window.gokuProps`.
    { vendor: 'AWS WAF', kind: 'challenge', proof: 'page', sign: 'gokuProps', body: /window\.gokuProps/ },
    // Google's "unusual traffic" page (crawlee's `div#infoDiv0` selector), served with a 429 and a reCAPTCHA.
    {
        vendor: 'Google',
        kind: 'captcha',
        proof: 'page',
        sign: 'unusual traffic page',
        body: /id="infoDiv0"|detected unusual traffic from your computer network/i,
    },

    // Captcha widgets (class names from each vendor's embedding docs; crawlee looks for Turnstile's iframe) and
    // DataDome's presence header, which it puts on allowed responses too.
    { vendor: 'reCAPTCHA', kind: 'captcha', proof: 'embed', sign: 'g-recaptcha', body: /\bg-recaptcha\b/i },
    { vendor: 'hCaptcha', kind: 'captcha', proof: 'embed', sign: 'h-captcha', body: /\bh-captcha\b/i },
    {
        vendor: 'Cloudflare Turnstile',
        kind: 'captcha',
        proof: 'embed',
        sign: 'cf-turnstile',
        body: /\bcf-turnstile\b|challenges\.cloudflare\.com\/turnstile/i,
    },
    { vendor: 'DataDome', kind: 'refusal', proof: 'embed', sign: 'x-datadome header', header: ['x-datadome', /./] },
];

/**
 * Every `page` sign in one pattern, tested before them one by one: they count on most ordinary pages
 * (any page under INTERSTITIAL_MAX_CHARS), which show none of them, and one scan of the body is
 * cheaper than one per sign: 37 against 63 µs for detectBlock on a 14.5 KB product page, 64 against
 * 135 on a 24 KB listing. Case-insensitive throughout, so it finds more than the signs do, never
 * less; each sign's own pattern decides.
 */
const ANY_PAGE_SIGN = new RegExp(
    BLOCK_SIGNS.flatMap((sign) => ('body' in sign && sign.proof === 'page' ? [`(?:${sign.body.source})`] : [])).join(
        '|',
    ),
    'i',
);

/** The statuses bot managers refuse with; 503 only for `page` signs (Cloudflare's "under attack" page used it). */
const REFUSAL_STATUSES = new Set([403, 429]);
const PAGE_SIGN_STATUSES = new Set([403, 429, 503]);

/** Challenge interstitials are a few KB (DataDome, Imperva, Akamai, AWS WAF: 1–3 KB); real pages rarely are. */
const INTERSTITIAL_MAX_CHARS = 32 * 1024;

/** Titles that name a check, from the vendors' interstitials (Cloudflare, PerimeterX, AWS WAF, Akamai, Imperva). */
const CHECK_TITLE = new RegExp(
    [
        'just a moment',
        'attention required',
        'checking your browser',
        'robot or human',
        'are you a (?:robot|human)',
        'human verification',
        'verify(?:ing)? (?:that )?you are (?:a )?human',
        'access denied',
        'access to this page has been denied',
        'pardon our interruption',
    ].join('|'),
    'i',
);

const TITLE = /<title[^>]*>([^<]*)<\/title>/i;

/**
 * Whether a response is a bot manager's block, as a `blocked` FetchFailure; undefined when it is not.
 * Reasons: `challenge-redirect` (a 3xx to a challenge page), `captcha`, `challenge`, `http-<status>-blocked`
 * (a vendor's refusal page or header), and `http-403` for a 403 with no sign. A 429 or 503 without signs
 * is not a block (the status classes it transient), nor is a page that merely embeds a captcha in a form.
 */
export function detectBlock(response: ResponseSnapshot): FetchFailure | undefined {
    const { status } = response;
    const header = headerReader(response.headers);
    const location = status >= 300 && status < 400 ? header('location') : undefined;
    if (location && isChallengeRedirect(location, response.url)) {
        return new FetchFailure(
            'blocked',
            `HTTP ${status}: redirect to a challenge page ${location}`,
            status,
            'challenge-redirect',
        );
    }

    const body = response.body ?? '';
    const titledAsCheck = CHECK_TITLE.test(body.match(TITLE)?.[1] ?? '');
    const counts: Record<Proof, boolean> = {
        sure: true,
        page: PAGE_SIGN_STATUSES.has(status) || titledAsCheck || body.length <= INTERSTITIAL_MAX_CHARS,
        embed: REFUSAL_STATUSES.has(status) || titledAsCheck,
    };
    let pageSignMayShow: boolean | undefined;
    const shows = (sign: BlockSign) => {
        if ('header' in sign) return sign.header[1].test(header(sign.header[0])?.trim() ?? '');
        if (sign.proof === 'page') {
            pageSignMayShow ??= ANY_PAGE_SIGN.test(body);
            if (!pageSignMayShow) return false;
        }
        return sign.body.test(body);
    };
    const found = BLOCK_SIGNS.find((sign) => counts[sign.proof] && shows(sign));
    if (found) {
        const reason = found.kind === 'refusal' ? `http-${status}-blocked` : found.kind;
        return new FetchFailure(
            'blocked',
            `HTTP ${status}: ${found.vendor} ${found.kind} (${found.sign})`,
            status,
            reason,
        );
    }
    return status === 403 ? new FetchFailure('blocked', 'HTTP 403', status) : undefined;
}

/** Looks headers up by name in any case; a repeated header's values are joined. */
function headerReader(headers: ResponseSnapshot['headers']): (name: string) => string | undefined {
    const byName = new Map<string, string>();
    for (const [name, value] of Object.entries(headers)) {
        if (value !== undefined) byName.set(name.toLowerCase(), Array.isArray(value) ? value.join(', ') : value);
    }
    return (name) => byName.get(name);
}

/** Hosts that serve nothing but challenges (and their subdomains). */
const CHALLENGE_HOSTS = [
    'captcha-delivery.com', // DataDome's captcha and device check (geo.captcha-delivery.com)
    'perfdrive.com', // Radware Bot Manager / ShieldSquare (validate.perfdrive.com)
    'challenges.cloudflare.com', // Cloudflare's challenge platform and Turnstile
];

/** Paths bot managers mount on the protected site itself (compared in lower case). */
const CHALLENGE_PATH_PREFIXES = [
    '/cdn-cgi/challenge-platform/', // Cloudflare
    '/_incapsula_resource', // Imperva
    '/_sec/cp_challenge/', // Akamai Bot Manager
    '/.well-known/sgcaptcha/', // SiteGround
];

/**
 * A path segment that names a challenge page: the whole segment
 * (`/captcha`, `/challenge.html`), not a slug containing the word.
 */
const CHALLENGE_SEGMENT = /^(?:captcha|challenge)(?:\.[a-z]+)?$/i;

/**
 * Whether a redirect's Location points at a challenge or captcha page. Only the host and path are
 * read: a query value (`?q=challenge`, `?next=/captcha`) or a host that contains the word is no sign.
 * `from`, the URL that answered with the redirect, resolves a relative Location and rules out the
 * generic segment rule when the site is only moving within its own `/challenge/…` section.
 */
export function isChallengeRedirect(location: string, from?: string): boolean {
    const target = parseUrl(location, from ?? 'http://relative.invalid/');
    if (!target || (target.protocol !== 'http:' && target.protocol !== 'https:')) return false;
    const host = target.hostname.toLowerCase();
    if (CHALLENGE_HOSTS.some((challengeHost) => host === challengeHost || host.endsWith(`.${challengeHost}`)))
        return true;
    const path = target.pathname.toLowerCase();
    if (CHALLENGE_PATH_PREFIXES.some((prefix) => path.startsWith(prefix))) return true;
    const segment = path.split('/').find((part) => CHALLENGE_SEGMENT.test(part));
    if (!segment) return false;
    const source = from === undefined ? undefined : parseUrl(from);
    return !source?.pathname.toLowerCase().split('/').includes(segment);
}

function parseUrl(url: string, base?: string): URL | undefined {
    try {
        return new URL(url, base);
    } catch {
        return undefined;
    }
}
