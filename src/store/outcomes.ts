/**
 * Where each request ends: its items and quarantine entries, or its dead-letter entry, stored
 * before its queue lets go of it, so a request is never done without its records (lost). Two
 * backends: the embedded one stores an outcome and marks the request handled in one SQLite
 * transaction (sqlite/outcomes.ts); the distributed one commits it to PostgreSQL, idempotently by
 * request key, before the stage completes the request's job (postgres/outcomes.ts) — a page done
 * twice after a lost job lock is stored once.
 */
import type { RequestSchema } from '@crawlee/types';
import type { RunStats } from '../monitor/stats.js';
import type { DeadLetterEntry } from '../vocabulary/failure.js';
import type { FrontierQueue } from '../vocabulary/queue.js';
import type { PageRecord } from './pageHistory.js';
import type { QuarantineEntry, StoredItem } from './records.js';

/** What became of one request. Every field is optional: a redirect, say, stores nothing but is counted. */
export interface Outcome {
    items?: readonly StoredItem[];
    quarantine?: readonly QuarantineEntry[];
    deadLetter?: DeadLetterEntry;
    /**
     * What the page's history learns (store/pageHistory.ts). An `unchanged` page's stored items are
     * carried into the run's dataset by the same commit.
     */
    page?: PageRecord;
    /** The canonical URL key the page claimed, when it is not the request's own (see RunState). */
    claim?: string;
    /** Counts the outcome in the run's stats, once it is stored. */
    count?: (stats: RunStats) => void;
}

export interface Outcomes {
    /**
     * Stores the outcome of `request`, taken from `queue`; resolves once it is committed. Rejects,
     * storing nothing of it and leaving the request as it was, when the outcome cannot be stored.
     */
    settle(queue: FrontierQueue, request: RequestSchema, outcome: Outcome): Promise<void>;
}
