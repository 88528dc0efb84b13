/**
 * The HTTP stage's crawler (fetch/crawlerHooks.ts) overrides a few of Crawlee's HttpCrawler methods
 * by name. An upgrade that renames one would leave the override dead and silently bring back what it
 * replaced, so their names are checked here, and the cookie override's contract with them.
 */
import assert from 'node:assert/strict';
import { HttpCrawler } from '@crawlee/http';
import { describe, it } from 'node:test';
import { HookedHttpCrawler } from '../../src/fetch/crawlerHooks.js';

type CookieMerger = { _applyCookies(context: object, gotOptions: { headers?: Record<string, unknown> }, pre: string, post: string): void };

describe("the HTTP stage's crawler", () => {
    it("overrides only methods Crawlee's HttpCrawler has", () => {
        for (const name of ['_abortDownloadOfBody', '_applyCookies', '_parseResponse', '_runRequestHandler', '_requestFunctionErrorHandler']) {
            assert.equal(typeof (HttpCrawler.prototype as unknown as Record<string, unknown>)[name], 'function', `HttpCrawler.prototype.${name}`);
        }
    });

    it('sends the cookie header its pre-navigation hook set, as Crawlee merges it, and leaves a request without one alone', () => {
        const crawler = new HookedHttpCrawler({ requestHandler: async () => undefined }) as unknown as CookieMerger;
        const request = { url: 'http://127.0.0.1:1/', headers: {} };
        const withCookie = { headers: { cookie: 'session=abc; theme=dark', accept: 'text/html' } };
        crawler._applyCookies({ request }, withCookie, '', '');
        assert.deepEqual(withCookie.headers, { accept: 'text/html', Cookie: 'session=abc; theme=dark' });

        const withoutCookie = { headers: { accept: 'text/html' } };
        crawler._applyCookies({ request }, withoutCookie, '', '');
        assert.deepEqual(withoutCookie.headers, { accept: 'text/html' });

        const fromRequest = { headers: { accept: 'text/html' } };
        crawler._applyCookies({ request }, fromRequest, 'given=1', 'given=1');
        assert.deepEqual(fromRequest.headers, { accept: 'text/html', Cookie: 'given=1' });
    });
});
