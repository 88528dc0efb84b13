/**
 * Where each request ends: its items and quarantine entries, or its dead-letter entry, stored in
 * the same SQLite transaction that marks the request handled in its queue and saves the run's
 * counters. A process killed at any moment leaves all of it or none of it, so a request is never
 * handled without its records (lost) nor stored while still pending (stored twice when it is
 * fetched again after a resume).
 *
 * This replaces batching for those records: the transaction is the one that marks the request
 * handled anyway, so storing them adds no commit. Crawlee's own `markRequestHandled` that follows
 * finds the request handled and writes nothing.
 */
import type { RequestQueue } from '@crawlee/core';
import type { RequestSchema } from '@crawlee/types';
import type { DeadLetterEntry } from '../frontier/deadLetter.js';
import type { RunStats } from '../monitor/stats.js';
import type { StoreNames } from './datasets.js';
import type { QuarantineEntry, StoredItem } from './records.js';
import type { RunState } from './runState.js';
import { SqliteDatasetClient } from './sqlite/datasetClient.js';
import { type SqliteRequestQueueClient, sqliteClientOf } from './sqlite/requestQueueClient.js';
import type { SqliteStorageClient } from './sqlite/storageClient.js';

/** What became of one request. Every field is optional: a redirect, say, stores nothing but is counted. */
export interface Outcome {
    items?: readonly StoredItem[];
    quarantine?: readonly QuarantineEntry[];
    deadLetter?: DeadLetterEntry;
    /** The canonical URL key the page claimed, when it is not the request's own (see RunState). */
    claim?: string;
    /** Counts the outcome in the run's stats; runs inside the commit, so saved counters agree with the stores. */
    count?: (stats: RunStats) => void;
}

export interface OutcomesOptions {
    storage: SqliteStorageClient;
    names: StoreNames;
    stats: RunStats;
    runState: RunState;
}

export class Outcomes {
    private readonly items: SqliteDatasetClient;
    private readonly quarantine: SqliteDatasetClient;
    private readonly deadLetter: SqliteDatasetClient;
    private readonly commit: (queue: SqliteRequestQueueClient, request: RequestSchema, outcome: Outcome) => void;

    constructor(private readonly options: OutcomesOptions) {
        const { storage, names, stats, runState } = options;
        this.items = new SqliteDatasetClient(storage.db, names.items);
        this.quarantine = new SqliteDatasetClient(storage.db, names.quarantine);
        this.deadLetter = new SqliteDatasetClient(storage.db, names.deadLetter);
        const transaction = storage.db.transaction((queue: SqliteRequestQueueClient, request: RequestSchema, outcome: Outcome) => {
            this.items.appendItems(outcome.items ?? []);
            this.quarantine.appendItems(outcome.quarantine ?? []);
            if (outcome.deadLetter) this.deadLetter.appendItems([outcome.deadLetter]);
            if (outcome.claim) runState.addClaim(outcome.claim);
            queue.markHandled(request);
            outcome.count?.(stats);
            runState.saveStats(stats.snapshot());
        });
        this.commit = (queue, request, outcome) => transaction.immediate(queue, request, outcome);
    }

    /**
     * Stores the outcome and marks `request` handled in `queue`, in one transaction. A request
     * handled already gets its records all the same.
     */
    settle(queue: RequestQueue, request: RequestSchema, outcome: Outcome): void {
        this.commit(sqliteClientOf(queue), request, outcome);
    }
}
