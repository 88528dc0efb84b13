/**
 * Where raw pages are kept, whatever keeps them: the WARC archive (archive/archiveStore.ts) on one
 * machine, or its files indexed in PostgreSQL (postgres/indexedRawPages.ts) when many workers crawl
 * one site. These are the methods the crawl and reparse use; ArchiveStore has them as it is.
 */
import type { PageCapture, RawPage, RedirectCapture } from './archive/rawPage.js';

export interface RawPages {
    /** Archives a page: resolves once it is written. */
    put(page: PageCapture): Promise<void>;
    /** Archives a redirect's response, which is no page: resolves once it is written. */
    putRedirect(redirect: RedirectCapture): Promise<void>;
    /** Resolves once every page put so far is written (or its write has failed). */
    flush(): Promise<void>;
    /** Every stored page, oldest first. */
    pages(): AsyncGenerator<RawPage>;
    /** The newest stored page with this key. */
    get(key: string): Promise<RawPage | undefined>;
}
