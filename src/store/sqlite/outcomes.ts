/**
 * The embedded backend's outcomes (see store/outcomes.ts): a request's items and quarantine
 * entries, or its dead-letter entry, stored in the same SQLite transaction that marks the
 * request handled in its queue and saves the run's counters. A process killed at any moment
 * leaves all of it or none of it, so a request is never handled without its records (lost) nor
 * stored while still pending (stored twice when it is fetched again after a resume).
 *
 * Outcomes are committed in groups (turnGroup.ts): every outcome settled in one turn of the event
 * loop goes in one transaction at the end of that turn, each in a savepoint of its own, so an
 * outcome that cannot be stored fails alone and the others are committed (one commit per page was
 * ~5% of the crawling thread). `settle()` resolves once its outcome is committed: Crawlee's own
 * `markRequestHandled`, which follows, finds the request handled and writes nothing.
 */
import type { RequestQueue } from '@crawlee/core';
import type { RequestSchema } from '@crawlee/types';
import type { RunStats } from '../../monitor/stats.js';
import type { FrontierQueue } from '../../vocabulary/queue.js';
import type { StoreNames } from '../datasets.js';
import type { Outcome, Outcomes } from '../outcomes.js';
import type { SeriesRun } from '../pageHistory.js';
import type { SqlitePageHistory } from './pageHistory.js';
import { storedDeadLetter } from '../records.js';
import type { RunState } from '../runState.js';
import { SqliteDatasetClient } from './datasetClient.js';
import { type SqliteRequestQueueClient, sqliteClientOf } from './requestQueueClient.js';
import { requestIdOf } from './requestQueueTable.js';
import type { SqliteStorageClient } from './storageClient.js';
import { attempt, TurnGroup } from './turnGroup.js';

export interface SqliteOutcomesOptions {
    storage: SqliteStorageClient;
    names: StoreNames;
    stats: RunStats;
    runState: RunState;
    /** The site's page history. */
    history: SqlitePageHistory;
    /** The run of the site's series this is. */
    series: SeriesRun;
}

interface Settling {
    queue: SqliteRequestQueueClient;
    request: RequestSchema;
    outcome: Outcome;
}

export class SqliteOutcomes implements Outcomes {
    private readonly items: SqliteDatasetClient;
    private readonly quarantine: SqliteDatasetClient;
    private readonly deadLetter: SqliteDatasetClient;
    /** Outcomes settled in this turn of the event loop, committed at its end. */
    private readonly settling: TurnGroup<Settling, void>;

    constructor(options: SqliteOutcomesOptions) {
        const { storage, names, stats, runState, history, series } = options;
        this.items = new SqliteDatasetClient(storage.db, names.items);
        this.quarantine = new SqliteDatasetClient(storage.db, names.quarantine);
        this.deadLetter = new SqliteDatasetClient(storage.db, names.deadLetter);
        // Called inside the group's transaction, a better-sqlite3
        // transaction is a savepoint: rolled back alone when it throws.
        const store = storage.db.transaction(({ queue, request, outcome }: Settling) => {
            // Its outcome is stored already: this is a second attempt of one request, which stores nothing more.
            if (queue.markHandled(request) === 'handled-already') return;
            this.items.appendItems(outcome.items ?? []);
            this.quarantine.appendItems(outcome.quarantine ?? []);
            // Without secrets; the request's id leads a requeue back to it should the URL be masked.
            if (outcome.deadLetter)
                this.deadLetter.appendItems([storedDeadLetter(outcome.deadLetter, requestIdOf(request))]);
            if (outcome.page) history.record(outcome.page, series.run);
            if (outcome.claim) runState.addClaim(outcome.claim);
            outcome.count?.(stats);
        });
        const commitGroup = storage.db.transaction((group: Settling[]) => {
            const results = group.map((settling) => attempt(() => store(settling)));
            runState.saveStats(stats.snapshot());
            return results;
        });
        this.settling = new TurnGroup((group) => commitGroup.immediate(group));
    }

    /**
     * Stores the outcome and marks `request` handled in `queue`, in one transaction with the other
     * outcomes settled in this turn of the event loop; resolves once that is committed. A request
     * handled already stores nothing more and counts nothing: each request has one outcome, as
     * in the PostgreSQL sink.
     */
    settle(queue: FrontierQueue, request: RequestSchema, outcome: Outcome): Promise<void> {
        return this.settling.add({ queue: sqliteClientOf(queue as RequestQueue), request, outcome });
    }
}
