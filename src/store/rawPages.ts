/**
 * Where raw pages are kept, whatever keeps them: the file store (rawStore.ts) on one machine, or
 * its segment files indexed in PostgreSQL (postgres/indexedRawPages.ts) when many workers crawl
 * one site. These are the methods the crawl and reparse use; RawStore has them as it is.
 */
import type { RawPage } from './rawStore.js';

export interface RawPages {
    /** Stores a page: resolves once it is written. */
    put(page: RawPage): Promise<void>;
    /** Resolves once every page put so far is written (or its write has failed). */
    flush(): Promise<void>;
    /** Every stored page, oldest first. */
    pages(): AsyncGenerator<RawPage>;
    /** The newest stored page with this key. */
    get(key: string): Promise<RawPage | undefined>;
}
