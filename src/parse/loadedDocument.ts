/**
 * A page loaded into cheerio for as long as a synchronous read of it takes, and released after.
 *
 * Why release: cheerio's `load()` (1.0.0-rc.12, the one Crawlee ships) defines a class per
 * document, and that class's methods close over the document. V8 keeps a class's prototype in the
 * old generation from birth, and a young-generation collection counts every old object as alive,
 * so until the next full collection each one keeps its whole DOM alive: a page's DOM that died a
 * millisecond after its parse is copied by the next scavenge and promoted by the one after. On the
 * real-weight shop's product pages that promoted ~150 KB a page, and the old generation then needed
 * a full collection every ~100 pages. Emptying the document's children after the read cuts the DOM
 * loose from that class: parsing a product page 1,500 times promotes ~3 KB a page instead
 * (test/parse/loadedDocument.test.ts measures both), and the bench's cpu suite crawled a quarter
 * faster at a quarter less CPU a page, half of V8's background GC threads' time gone.
 */
import { type Cheerio, type CheerioAPI, type CheerioOptions, load } from 'cheerio';
import type { AnyNode } from 'domhandler';
import { compiledSelector, documentOf, selectUnder } from '../site/selectors.js';

/**
 * Runs `read` on `html` loaded into cheerio, then empties the document. `read` must take what it
 * needs out of the DOM before it returns (strings, numbers, plain objects): elements or a `$` kept
 * past it see an empty document.
 */
export function readDocument<T>(html: string, options: CheerioOptions | undefined, read: ($: CheerioAPI) => T): T {
    const $ = load(html, options);
    findWithCompiledSelectors($);
    try {
        return read($);
    } finally {
        documentOf($).children = [];
    }
}

/**
 * `$(selector)` and `.find(selector)` of this document through selectors compiled once
 * (site/selectors.ts, `compiledSelector`) rather than anew on every call; what cheerio alone handles
 * (relative and positional selectors, elements, HTML) still goes to cheerio. `$.fn` is the
 * prototype of this document's own class (see above), so no other document is touched.
 */
function findWithCompiledSelectors($: CheerioAPI): void {
    const cheerioFind = $.fn.find;
    $.fn.find = function find(this: Cheerio<AnyNode>, selectorOrHaystack) {
        const query = typeof selectorOrHaystack === 'string' ? compiledSelector(selectorOrHaystack) : null;
        return query ? this._make(selectUnder(query, this.toArray())) : cheerioFind.call(this, selectorOrHaystack);
    } as typeof cheerioFind;
}
