/**
 * The anti-bot mode's answers (antiBot.ts): a rate-limit page, Cloudflare's Error 1020 refusal and a
 * JS challenge in the shape of Cloudflare's "Just a moment..." interstitial, trimmed renditions of
 * what Cloudflare serves (the same shapes test/fetch/failures/failures.test.ts feeds dragnet's classifier).
 */
import { randomBytes } from 'node:crypto';

/** A page the anti-bot layer answers with instead of the shop's own. */
export interface BlockReply {
    status: number;
    body: string;
    headers: Record<string, string>;
}

const HTML = 'text/html; charset=utf-8';

/** Where Cloudflare's ray ids end: the edge's airport code. */
const EDGE = 'LHR';

/** A plain 429 with `Retry-After`: no bot manager's sign, so a client takes it as transient and waits. */
export function tooManyRequests(retryAfterSecs: number): BlockReply {
    const body =
        '<!DOCTYPE html><html><head><title>Too Many Requests</title></head>' +
        '<body><h1>Too Many Requests</h1><p>Please slow down and try again later.</p></body></html>';
    return { status: 429, body, headers: { 'Content-Type': HTML, 'Retry-After': String(retryAfterSecs) } };
}

/** Cloudflare's Error 1020 ("Access denied"): a firewall rule refused the request. */
export function refusal(host: string): BlockReply {
    const ray = rayId();
    const body = `<!DOCTYPE html>
<html lang="en-US"><head><title>Attention Required! | Cloudflare</title><meta charset="UTF-8"></head>
<body><div id="cf-wrapper"><div id="cf-error-details">
<h1>Sorry, you have been blocked</h1>
<h2>You are unable to access ${escapeHtml(host)}</h2>
<p>This website is using a security service to protect itself from online attacks. Error 1020.</p>
<p>Cloudflare Ray ID: <strong>${ray}</strong></p>
</div></div></body></html>`;
    return { status: 403, body, headers: { 'Content-Type': HTML, Server: 'cloudflare', 'CF-RAY': `${ray}-${EDGE}` } };
}

/** The JS challenge: a script sets `js_ok=<token>` and reloads; a client that runs no script stays here. */
export function jsChallenge(token: string): BlockReply {
    const ray = rayId();
    const body = `<!DOCTYPE html>
<html lang="en-US"><head><title>Just a moment...</title><meta charset="UTF-8"></head>
<body><h1>Checking your browser before accessing the shop.</h1>
<p>This process is automatic. Your browser will redirect to your requested content shortly.</p>
<p>Ray ID: ${ray}</p>
<script>document.cookie = "js_ok=${token}; path=/"; location.reload();</script>
</body></html>`;
    return {
        status: 403,
        body,
        headers: {
            'Content-Type': HTML,
            Server: 'cloudflare',
            'CF-RAY': `${ray}-${EDGE}`,
            'cf-mitigated': 'challenge',
            'Cache-Control': 'no-store',
        },
    };
}

function rayId(): string {
    return randomBytes(8).toString('hex');
}

function escapeHtml(text: string): string {
    return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
