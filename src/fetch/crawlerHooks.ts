/**
 * A question each stage asks before it fetches a request: is the fetch needed at all? The page
 * of a route that learned to need the browser goes there directly, and the page of a route the
 * drift breaker stopped goes to dead-letter — without an HTTP request or a browser page.
 */
import { CheerioCrawler } from '@crawlee/cheerio';
import type { Request } from '@crawlee/core';
import { PlaywrightCrawler } from '@crawlee/playwright';

/** Deals with the request without fetching it and returns true, or returns false to fetch as usual. */
export type PreFetchCheck = (request: Request) => Promise<boolean>;

// A mixin's constructor must take any arguments; the crawlers' own signatures are kept by the classes below.
type CrawlerClass = new (...args: any[]) => { _runRequestHandler(context: { request: Request }): Promise<void> };

function checkedBeforeFetch<C extends CrawlerClass>(Crawler: C) {
    return class extends Crawler {
        preFetchCheck: PreFetchCheck = async () => false;

        override async _runRequestHandler(context: { request: Request }): Promise<void> {
            if (await this.preFetchCheck(context.request)) return;
            await super._runRequestHandler(context);
        }
    };
}

export interface PreFetchChecked {
    preFetchCheck: PreFetchCheck;
}

// Crawlee's `_runRequestHandler` is protected, so the mixin is typed loosely inside and precisely outside.
export const CheckedCheerioCrawler = checkedBeforeFetch(CheerioCrawler as unknown as CrawlerClass) as unknown as new (
    ...args: ConstructorParameters<typeof CheerioCrawler>
) => CheerioCrawler & PreFetchChecked;

export const CheckedPlaywrightCrawler = checkedBeforeFetch(PlaywrightCrawler as unknown as CrawlerClass) as unknown as new (
    ...args: ConstructorParameters<typeof PlaywrightCrawler>
) => PlaywrightCrawler & PreFetchChecked;
