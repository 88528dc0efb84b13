/**
 * A session's cookies, in its jar (tough-cookie): sent and kept by the HTTP stage (Crawlee hands
 * its HTTP client no cookie jar, it sets the Cookie header itself, so the stage does as much), and moved to and
 * from a browser context (Playwright's cookie objects), so both stages of one session show the
 * site the same cookies.
 */
import type { Cookie as BrowserCookie } from 'playwright';
import { Cookie, CookieJar, type ErrorCallback, MemoryCookieStore } from 'tough-cookie';

/**
 * tough-cookie's in-memory store, which knows whether it was ever given a cookie. Most sites set
 * none, and reading an empty jar still parses the URL and walks its domain's suffixes (~10 µs a
 * request); `cookieHeader` skips a jar of this store that was never given one.
 */
export class SessionCookieStore extends MemoryCookieStore {
    /** False until a cookie is stored (tough-cookie's `updateCookie` stores through `putCookie` too). */
    everGiven = false;

    override putCookie(cookie: Cookie): Promise<void>;
    override putCookie(cookie: Cookie, callback: ErrorCallback): void;
    override putCookie(cookie: Cookie, callback?: ErrorCallback): Promise<void> | void {
        this.everGiven = true;
        return callback ? super.putCookie(cookie, callback) : super.putCookie(cookie);
    }
}

/** A session's cookie jar: tough-cookie's, on a `SessionCookieStore`. */
export function sessionCookieJar(): CookieJar {
    return new CookieJar(new SessionCookieStore());
}

/** The Cookie header for `url`: the jar's cookies after those the site's own headers give (`site.headers.cookie`). */
export async function cookieHeader(jar: CookieJar, url: URL, given?: string): Promise<string | undefined> {
    const neverGiven = jar.store instanceof SessionCookieStore && !jar.store.everGiven;
    const fromJar = neverGiven ? '' : await jar.getCookieString(url.href);
    return [given, fromJar].filter(Boolean).join('; ') || undefined;
}

/** Keeps the cookies a response set. */
export async function keepResponseCookies(
    jar: CookieJar,
    url: URL,
    setCookie: string | string[] | undefined,
): Promise<void> {
    for (const cookie of [setCookie ?? []].flat()) await jar.setCookie(cookie, url.href, { ignoreError: true });
}

const SAME_SITE: Record<string, BrowserCookie['sameSite']> = { strict: 'Strict', lax: 'Lax', none: 'None' };

/** The jar's cookies for `url`, as `context.addCookies` takes them. */
export async function cookiesForBrowser(jar: CookieJar, url: URL): Promise<BrowserCookie[]> {
    const cookies = await jar.getCookies(url.href);
    return cookies.map((cookie) => {
        // Max-Age or Expires, whichever the cookie came with; a session cookie is -1.
        const expiry = cookie.expiryTime();
        return {
            name: cookie.key,
            value: cookie.value,
            domain: cookie.hostOnly ? (cookie.domain ?? url.hostname) : `.${cookie.domain}`,
            path: cookie.path ?? '/',
            expires: expiry !== undefined && Number.isFinite(expiry) ? expiry / 1000 : -1,
            httpOnly: cookie.httpOnly,
            secure: cookie.secure,
            sameSite: SAME_SITE[String(cookie.sameSite).toLowerCase()] ?? 'Lax',
        };
    });
}

/** Puts a browser context's cookies into the jar, as if the site had set them on a response to the HTTP stage. */
export async function keepBrowserCookies(jar: CookieJar, cookies: readonly BrowserCookie[]): Promise<void> {
    for (const cookie of cookies) {
        const hostOnly = !cookie.domain.startsWith('.');
        const domain = cookie.domain.replace(/^\./, '');
        const stored = new Cookie({
            key: cookie.name,
            value: cookie.value,
            domain,
            path: cookie.path,
            expires: cookie.expires > 0 ? new Date(cookie.expires * 1000) : 'Infinity',
            httpOnly: cookie.httpOnly,
            secure: cookie.secure,
            sameSite: cookie.sameSite.toLowerCase(),
            hostOnly,
        });
        const scheme = cookie.secure ? 'https' : 'http';
        await jar.setCookie(stored, `${scheme}://${domain}${cookie.path}`, { ignoreError: true });
    }
}
