/**
 * A site's dead-letter, to inspect and re-queue (`npm run dead-letter`). Re-queueing undoes what
 * outcomes.ts did when the request was given up on, in one transaction: the request is pending
 * again in its stage's queue with a fresh set of attempts, its entry leaves the dead-letter, and
 * the saved counters no longer count it. Pending requests make the next run of the site resume
 * (wiring/open.ts), so that run fetches exactly those. Like a crawl, it needs the site's stores to
 * itself (siteLock.ts): it refuses while a run crawls the site, which would not see its requests
 * come back.
 */
import { getRequestId } from '@crawlee/core';
import type { RequestSchema } from '@crawlee/types';
import type { StatsSnapshot } from '../monitor/stats.js';
import type { DeadLetterEntry, FailureClass } from '../vocabulary/failure.js';
import { hasStoredDataset, type StoreNames, storeNames } from './datasets.js';
import { RunState } from './runState.js';
import { lockSite } from './siteLock.js';
import { openDatabase, releaseDatabase, type SqliteDb } from './sqlite/database.js';
import { iterateItems, SqliteDatasetClient } from './sqlite/datasetClient.js';
import { SqliteRequestQueueClient } from './sqlite/requestQueueClient.js';
import type { QueueRow } from './sqlite/requestQueueSql.js';
import { StorageTable } from './sqlite/storageTable.js';

/** Which entries: every given field must match (none given: all entries). */
export interface DeadLetterFilter {
    failureClass?: FailureClass;
    label?: string;
    reason?: string;
}

export function matchesFilter(entry: DeadLetterEntry, filter: DeadLetterFilter): boolean {
    return (
        (filter.failureClass === undefined || entry.failureClass === filter.failureClass) &&
        (filter.label === undefined || entry.label === filter.label) &&
        (filter.reason === undefined || entry.reason === filter.reason)
    );
}

export interface RequeueResult {
    /** The entries taken out of the dead-letter, in their order there. */
    entries: DeadLetterEntry[];
    /** Requests made pending, by queue name (requests missing from their queue and added back included). */
    byQueue: Record<string, number>;
    /** Of those, requests that were missing from their queue and were added. */
    added: number;
    /** Entries whose request was pending already (left as it was). */
    alreadyPending: number;
}

export class DeadLetterStore {
    readonly names: StoreNames;
    private readonly deadLetter: SqliteDatasetClient<DeadLetterEntry>;
    private closed = false;

    private constructor(
        private readonly db: SqliteDb,
        private readonly storageDir: string,
        readonly site: string,
    ) {
        this.names = storeNames(site);
        this.deadLetter = new SqliteDatasetClient<DeadLetterEntry>(db, this.names.deadLetter);
    }

    /**
     * The dead-letter of `site` in `storageDir`, or undefined when there is none there (no
     * database, or no run of the site in it); then nothing was created. `close()` when done.
     */
    static open(storageDir: string, site: string): DeadLetterStore | undefined {
        if (!hasStoredDataset(storageDir, storeNames(site).deadLetter)) return undefined;
        return new DeadLetterStore(openDatabase(storageDir), storageDir, site);
    }

    /** The entries that match, in order, read a batch at a time. */
    async *entries(filter: DeadLetterFilter = {}): AsyncGenerator<DeadLetterEntry> {
        for await (const entry of iterateItems<DeadLetterEntry>(this.db, this.names.deadLetter)) {
            if (matchesFilter(entry, filter)) yield entry;
        }
    }

    /**
     * Re-queues the entries that match, in one transaction: each request pending again in its
     * stage's queue with a fresh set of attempts (added when missing), the entries out of the
     * dead-letter (the rest keep their order), and the run's saved counters without them.
     */
    requeue(filter: DeadLetterFilter = {}): RequeueResult {
        const lock = lockSite(this.db, this.site, 'requeue');
        try {
            return this.requeueLocked(filter);
        } finally {
            lock.release();
        }
    }

    private requeueLocked(filter: DeadLetterFilter): RequeueResult {
        const run = this.db.transaction((): RequeueResult => {
            const entries = this.deadLetter.removeItems((entry) => matchesFilter(entry, filter));
            const result: RequeueResult = { entries, byQueue: {}, added: 0, alreadyPending: 0 };
            const queues = new Map<string, SqliteRequestQueueClient>();
            for (const entry of entries) {
                const name = entry.stage === 'browser' ? this.names.browserQueue : this.names.httpQueue;
                let queue = queues.get(name);
                if (!queue) {
                    queue = this.queue(name);
                    queues.set(name, queue);
                }
                // The frontier queues every request with its URL as the uniqueKey; an entry whose URL
                // is stored masked (store/records.ts) has the request's id instead.
                const stored = queue.readRequest(entry.requestId ?? getRequestId(entry.url));
                const outcome = queue.requeue(stored ? freshAttempts(stored) : newRequest(entry));
                if (outcome === 'pending') {
                    result.alreadyPending += 1;
                    continue;
                }
                if (outcome === 'added') result.added += 1;
                result.byQueue[name] = (result.byQueue[name] ?? 0) + 1;
            }
            const runState = new RunState(this.db, this.site);
            const saved = runState.loadStats();
            if (saved && entries.length > 0) runState.saveStats(withoutDeadLetters(saved, entries));
            return result;
        });
        return run.immediate();
    }

    /** Lets go of the database (closed once the last user in this process lets go). */
    close(): void {
        if (this.closed) return;
        this.closed = true;
        releaseDatabase(this.storageDir);
    }

    /** The queue called `name`, created when a run never opened it. */
    private queue(name: string): SqliteRequestQueueClient {
        StorageTable.of<QueueRow>(this.db, 'request_queues').getOrCreate(name);
        return new SqliteRequestQueueClient(this.db, name);
    }
}

/**
 * The stored request as it was before its first attempt: not handled, no attempts counted, no
 * error messages, no retry or first-failure time, no session rotations (Crawlee gives up on a request whose
 * rotations are used up, as on one whose retries are).
 */
export function freshAttempts(stored: RequestSchema): RequestSchema {
    const { handledAt: _handledAt, ...request } = stored;
    const {
        retryAt: _retryAt,
        firstFailedAt: _firstFailedAt,
        ...userData
    } = (request.userData ?? {}) as Record<string, unknown>;
    const crawlee = userData.__crawlee as Record<string, unknown> | undefined;
    if (crawlee) {
        const { sessionRotationCount: _rotations, ...rest } = crawlee;
        userData.__crawlee = rest;
    }
    return { ...request, retryCount: 0, noRetry: false, errorMessages: [], userData };
}

/**
 * A request for an entry whose request is not in its queue, as the frontier queues one. An entry
 * stored with its URL's password masked gets the masked URL: its fetch fails and it comes back
 * here, rather than being dropped.
 */
function newRequest(entry: DeadLetterEntry): RequestSchema {
    return {
        url: entry.url,
        uniqueKey: entry.url,
        method: 'GET',
        userData: entry.label === undefined ? {} : { label: entry.label },
    };
}

/**
 * The counters without these entries: `deadLettered` and the entries' reasons go down. Errors by
 * class stay: those errors happened.
 */
export function withoutDeadLetters(snapshot: StatsSnapshot, entries: readonly DeadLetterEntry[]): StatsSnapshot {
    const counters = { ...snapshot.counters };
    const reasons = { ...(counters.deadLetterReasons as Record<string, number> | undefined) };
    for (const { reason } of entries) {
        const left = (reasons[reason] ?? 0) - 1;
        if (left > 0) reasons[reason] = left;
        else delete reasons[reason];
    }
    counters.deadLetterReasons = reasons;
    if (typeof counters.deadLettered === 'number')
        counters.deadLettered = Math.max(0, counters.deadLettered - entries.length);
    return { ...snapshot, counters };
}
