/**
 * A known page fetched again asks the server whether it changed: `If-None-Match` with its last
 * ETag, `If-Modified-Since` with its last Last-Modified, and a `304 Not Modified` answers no.
 * http-cache-semantics reads the caching headers (RFC 9111: which validators a response gives, a
 * weak ETag kept for If-None-Match only, a 304 whose ETag is not the one asked about is a change),
 * as a browser's cache does.
 */
import CachePolicy from 'http-cache-semantics';
import type { KnownPage } from '../../store/pageHistory.js';

type Validators = Pick<KnownPage, 'url' | 'etag' | 'lastModified'>;
type Headers = Record<string, string | string[] | undefined>;

/** The conditional headers for fetching `page` again; none when it had no validator. */
export function revalidationHeaders(page: Validators): Record<string, string> {
    if (page.etag === undefined && page.lastModified === undefined) return {};
    const headers = policyOf(page).revalidationHeaders(requestOf(page.url));
    const conditional: Record<string, string> = {};
    for (const name of ['if-none-match', 'if-modified-since']) {
        const value = headers[name];
        if (typeof value === 'string') conditional[name] = value;
    }
    return conditional;
}

/**
 * Whether a response to the conditional request says the page is as it was: a 304 whose
 * validators match the ones asked about. A 304 that names none is taken at its word (RFC 9110
 * §15.4.5: the condition was false), as many servers send it bare.
 */
export function isNotModified(page: Validators, status: number, headers: Headers): boolean {
    if (status !== 304 || (page.etag === undefined && page.lastModified === undefined)) return false;
    if (headers.etag === undefined && headers['last-modified'] === undefined) return true;
    return policyOf(page).revalidatedPolicy(requestOf(page.url), { status, headers }).matches;
}

function policyOf(page: Validators): CachePolicy {
    const headers: Record<string, string> = {};
    if (page.etag !== undefined) headers.etag = page.etag;
    if (page.lastModified !== undefined) headers['last-modified'] = page.lastModified;
    return new CachePolicy(requestOf(page.url), { status: 200, headers }, { shared: false });
}

function requestOf(url: string): CachePolicy.Request {
    const { pathname, search, host } = new URL(url);
    return { url: `${pathname}${search}`, method: 'GET', headers: { host } };
}
