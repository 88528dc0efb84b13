/**
 * What travels through the frontier and the stages: a link on its way in, the data every request
 * carries, and the stage a request is in.
 */
import type { KnownPage } from './knownPage.js';

/** The two stages, each with its queue: the cheap HTTP fetch and the browser. */
export type Stage = 'http' | 'browser';

/** A URL on its way in: from a start URL, a page's link, or a redirect. */
export interface Link {
    url: string;
    /** The route to handle it; without one, the site's `match` patterns decide. */
    label?: string;
    userData?: Record<string, unknown>;
}

/** What the stages keep on every request. */
export interface RequestData extends Record<string, unknown> {
    /** Why the page went to the browser: what the cheap fetch missed, or that its route learned to render. */
    escalation?: string;
    /** The page's canonical URL was checked already (in the cheap stage), so the browser stage does not again. */
    canonicalChecked?: boolean;
    /** Redirect hops behind this request. */
    redirects?: number;
    /** The URLs those hops came from, so a redirect back to one is a loop (`a` → `b` → `a`). */
    redirectedFrom?: string[];
    /** When a failed request is due to be retried (ms since the epoch); it waits in its queue until then. */
    retryAt?: number;
    /** When its first attempt failed. */
    firstFailedAt?: string;
    /** The lowest proxy tier it may take: one above the tier it was last blocked on. */
    tierFloor?: number;
    /**
     * The session (fetch/egress/identities.ts) it must go out with:
     * a JS challenge met in the HTTP stage, for the browser to pass.
     */
    session?: string;
    /** Uncharged retries after exit faults (a proxy's failure, not the site's). */
    exitRetries?: number;
    /** A recrawl's known page: what the last run saw of it, to fetch it conditionally and compare. */
    known?: KnownPage;
}
