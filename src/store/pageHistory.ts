/**
 * The runs of a site are a series, and the page history is what one run leaves the next: for each
 * page that gave a page outcome, its URL and route, its validators (ETag, Last-Modified), its
 * payload's digest, its items, and how often it was found changed. A recrawl starts from it
 * (wiring/recrawl.ts): known pages are fetched conditionally, unchanged ones keep their items
 * without a parse, and what the history holds that the recrawl does not find again is removed.
 *
 * A page's history is written with its request's outcome, in the same transaction (outcomes.ts),
 * so a killed run resumes with the history it committed. Two backends: SQLite in the storage dir
 * (sqlite/pageHistory.ts) and PostgreSQL (postgres/pageHistory.ts).
 */
import type { KnownPage, RevisitBounds } from '../vocabulary/knownPage.js';
import type { StoredItem } from './records.js';

export type { KnownPage } from '../vocabulary/knownPage.js';

/** The series' place of a run: its number and whether it starts from a history. */
export interface SeriesRun {
    /** 1 for a site's first run, counting up with each recrawl. */
    run: number;
    mode: 'first' | 'recrawl';
}

/** What a page's check found. */
export type Change = 'new' | 'changed' | 'unchanged' | 'removed';

/** Why a known page is gone. */
export interface Removal {
    /** `http-404`, `http-410`, or `moved` (a redirect to another page). */
    reason: string;
    /** Where a moved page went. */
    movedTo?: string;
}

/** When a page is next due, and its estimated change rate (frontier/revisitPolicy.ts). */
export interface Schedule {
    nextDueAt: number;
    /** Changes per ms; undefined before there is an interval to judge by. */
    rate?: number;
}

/** What an outcome tells the history about its page (see Outcome.page). */
export type PageRecord =
    /** Fetched and parsed: its state now, and its items (stored as they are, without change fields). */
    | { kind: 'fetched'; page: KnownPage; schedule: Schedule; items: readonly StoredItem[] }
    /** Fetched and found unchanged: its state now; its stored items are carried into this run's dataset. */
    | { kind: 'unchanged'; page: KnownPage; schedule: Schedule }
    /** Gone: its items leave the dataset and are reported removed. */
    | { kind: 'removed'; key: string; removal: Removal }
    /**
     * Settled without items of its own this time (dead-lettered for another reason than a 404, or a
     * duplicate of a page that claimed its canonical URL): its items are not carried, as the request
     * is elsewhere, but the page stays known for the next run.
     */
    | { kind: 'withoutItems'; key: string };

/** An item of the previous run whose page is gone, as the change log reports it. */
export type RemovedItem = StoredItem & { _change: 'removed'; _removedBecause: string; _movedTo?: string };

export function removedItem(item: StoredItem, removal: Removal): RemovedItem {
    return {
        ...item,
        _change: 'removed',
        _removedBecause: removal.reason,
        ...(removal.movedTo ? { _movedTo: removal.movedTo } : {}),
    };
}

export interface PageHistory {
    /**
     * The keys of the live pages due by `now`, each one's next due time kept within `bounds` (the
     * run's own, which may not be those it was set under): navigation pages first, then the rest most likely
     * changed first (frontier/revisitPolicy.ts), then in the order they were first stored.
     */
    dueKeys(now: number, bounds: Required<RevisitBounds>): Promise<string[]>;
    /** The keys of the live pages not due by `now`. */
    notDueKeys(now: number, bounds: Required<RevisitBounds>): Promise<string[]>;
    /** The pages with these keys, in the keys' order (unknown keys left out). */
    pages(keys: readonly string[]): Promise<KnownPage[]>;
    /** How many live pages the history holds. */
    count(): Promise<number>;
    /** Whether run `run` settled any page: a run that did not may be started again as the same run. */
    settledAny(run: number): Promise<boolean>;
    /** The canonical URL keys live pages claimed, other than their own, with the claiming page's key. */
    canonicalClaims(): Promise<{ key: string; canonical: string }[]>;
    /** The items the page yielded when last parsed; undefined for a page the history does not know. */
    items(key: string): Promise<readonly StoredItem[] | undefined>;
    /**
     * At the end of a complete recrawl: each live page this run did not settle (not due, or
     * out of budget) keeps its items, stored in this run's dataset as unchanged, and is
     * marked this run's. Returns how many items were carried, by route.
     */
    carryUnsettled(run: number): Promise<Record<string, number>>;
    /** The keys of the pages removed in any run: re-parse leaves their archived pages out. */
    removedKeys(): Promise<string[]>;
    /** The items of the pages removed in `run`, as the change log reports them. */
    removed(run: number): AsyncIterable<RemovedItem>;
}
