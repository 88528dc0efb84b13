/**
 * Where raw pages are kept, whatever keeps them: the WARC archive (archive/archiveStore.ts) on one
 * machine, or its files indexed in PostgreSQL (postgres/indexedRawPages.ts) when many workers crawl
 * one site. These are the methods the crawl and reparse use; ArchiveStore has them as it is.
 */
import type { PageCapture, RawPage, RedirectCapture, RevisitCapture } from './archive/rawPage.js';

export interface RawPages {
    /** Archives a page: resolves once it is written. */
    put(page: PageCapture): Promise<void>;
    /** Archives a redirect's response, which is no page: resolves once it is written. */
    putRedirect(redirect: RedirectCapture): Promise<void>;
    /** Archives a revisit of a page the site sent as it was, which is no page: resolves once it is written. */
    putRevisit(revisit: RevisitCapture): Promise<void>;
    /** Resolves once every page put so far is written (or its write has failed). */
    flush(): Promise<void>;
    /** The newest stored response of every page, in the order they were stored. */
    pages(): AsyncGenerator<RawPage>;
    /** The newest stored response of the page with this key. */
    get(key: string): Promise<RawPage | undefined>;
}
