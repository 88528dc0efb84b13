/**
 * A page a recrawl knows from the site's earlier runs (store/pageHistory.ts): what its request
 * carries (RequestData.known) to be fetched conditionally and compared.
 */

/** What the history says about one page's checks, for the revisit policy (frontier/revisitPolicy.ts). */
export interface CheckHistory {
    /** Times the page was looked at after its first capture. */
    checks: number;
    /** How many of those found it changed. */
    changes: number;
    /** When it was first and last fetched (ms since the epoch). */
    firstCheckedAt: number;
    lastCheckedAt: number;
}

/** Within what a recrawl sets each page's next due time (frontier/revisitPolicy.ts). */
export interface RevisitBounds {
    /** The shortest interval between two fetches of a page, in ms. Default: 0. */
    revisitMin?: number;
    /** The longest, in ms: a page quiet for ever is still looked at this often. Default: 7 days. */
    revisitMax?: number;
}

/** What a run needs of a known page to fetch it again: the request, the validators, the last capture. */
export interface KnownPage extends CheckHistory {
    /** The URL key (frontier/normalize.ts urlKey) of the page's request. */
    key: string;
    url: string;
    label?: string;
    /** A listing: it yields links, not items, and is fetched on every recrawl so new items are found. */
    navigation: boolean;
    etag?: string;
    lastModified?: string;
    /** The last capture's payload digest, as the archive writes it (`sha1:BASE32`). */
    digest?: string;
    /** When the last full capture was made (ISO), which a revisit record refers to. */
    capturedAt?: string;
    /** The last full capture's URL (the final URL the page was read from). */
    capturedUrl?: string;
    /** How many items it yielded when last parsed. */
    items: number;
    /**
     * A navigation page's links the frontier routes, as it last read them: queued again when the page
     * is found unchanged, so what it leads to is found without a parse.
     */
    links?: { url: string; label?: string }[];
    /** The URL key of the canonical URL the page claimed, when not its own. */
    canonical?: string;
}
