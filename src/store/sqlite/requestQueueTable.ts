/**
 * How one request queue is stored: its rows in the SQLite file and the write transactions that
 * change them, keeping the queue row's counters (requests added, handled, the next position) in
 * step. The queue client (requestQueueClient.ts) says what Crawlee's operations mean; this is the
 * storage they run on: positions at the back or the front, inserts, the head, and who may touch
 * a lock.
 */
import { getRequestId } from '@crawlee/core';
import type { ProcessedRequest, RequestOptions, RequestQueueInfo, RequestSchema } from '@crawlee/types';
import { scrubText } from '../../vocabulary/redact.js';
import type { SqliteDb } from './database.js';
import { type HeadRow, isPending, type PendingRow, type QueueRow, statements } from './requestQueueSql.js';
import { StorageTable, storageInfo } from './storageTable.js';
import { attempt, type Committed, TurnGroup } from './turnGroup.js';

/** One write transaction's view of the queue: positions handed out and counter changes, stored at the end. */
interface Mutation {
    queue: QueueRow;
    now: number;
    nextOrder: number;
    addedCount: number;
    handledCount: number;
    modified: boolean;
}

export class QueueTable {
    private readonly st;
    private readonly queues: StorageTable<QueueRow>;
    private seqCache: number | undefined;
    private readonly turnWrites = new TurnGroup<() => unknown, unknown>(
        (writes) => this.st.transaction.immediate(() => writes.map(attempt)) as Committed<unknown>[],
    );

    constructor(
        db: SqliteDb,
        readonly idOrName: string,
        /** Owner of the locks taken through this table. */
        readonly clientKey: string,
        private readonly randomOrder: boolean,
    ) {
        this.st = statements(db);
        this.queues = StorageTable.of<QueueRow>(db, 'request_queues');
    }

    /** The queue's row, or undefined when there is no such queue. */
    find(): QueueRow | undefined {
        return this.queues.find(this.idOrName);
    }

    rename(name: string): void {
        this.queues.rename(this.queueRow().seq, name);
    }

    /** Deletes the queue and its requests; one of the same name may be made anew. */
    drop(): void {
        const row = this.find();
        this.seqCache = undefined;
        if (!row) return;
        this.st.transaction.immediate(() => {
            this.st.deleteRequests.run(row.seq);
            this.st.deleteQueue.run(row.seq);
        });
    }

    insert(m: Mutation, request: RequestSchema, forefront: boolean): ProcessedRequest {
        const { id, json } = serialize(request);
        const handled = isHandled(request);
        const orderNo = handled ? null : this.position(m, forefront);
        const { uniqueKey } = request;
        if (this.st.insert.run(m.queue.seq, id, orderNo, json).changes === 0) {
            const existing = this.st.state.get(m.queue.seq, id);
            if (!existing)
                throw new Error(`Request with ID ${id} was neither inserted nor found in queue ${this.idOrName}`);
            return { requestId: id, uniqueKey, wasAlreadyPresent: true, wasAlreadyHandled: existing.order_no === null };
        }
        m.addedCount += 1;
        if (handled) m.handledCount += 1;
        m.modified = true;
        // Like memory-storage (and the Apify API): a request added as handled still reports false.
        return { requestId: id, uniqueKey, wasAlreadyPresent: false, wasAlreadyHandled: false };
    }

    /**
     * The next position at the back (+n) or the front (-n): later forefront requests come first.
     * In random order, a place at the back is drawn at random among the pending ones.
     */
    position(m: Mutation, forefront: boolean): number {
        const n = m.nextOrder++;
        m.modified = true;
        if (forefront) return -n;
        return this.randomOrder ? 1 + Math.floor(Math.random() * RANDOM_POSITIONS) : n;
    }

    /** The request, if this client may lock, prolong or unlock it. */
    lockable(m: Mutation, id: string): PendingRow {
        const row = this.st.state.get(m.queue.seq, id);
        if (!row) throw new Error(`Request with ID ${id} not found in queue ${this.idOrName}`);
        if (!isPending(row))
            throw new Error(`Request with ID ${id} has already been handled in queue ${this.idOrName}`);
        if (
            row.locked_by !== null &&
            row.locked_by !== this.clientKey &&
            row.locked_until !== null &&
            row.locked_until > m.now
        ) {
            throw new Error(`Request with ID ${id} is locked by another client in queue ${this.idOrName}`);
        }
        return row;
    }

    /** The first `limit` pending requests free to lock: unlocked ones and those whose lock expired, by position. */
    head(seq: number, now: number, limit: number): HeadRow[] {
        const free = this.st.headFree.all(seq, limit);
        const expired = this.st.headExpired.all(seq, now, limit);
        if (expired.length === 0) return free;
        return [...free, ...expired].sort((a, b) => a.order_no - b.order_no).slice(0, limit);
    }

    /** Runs `change` in one write transaction and then stores the queue row's counters, if it changed anything. */
    mutate<T>(change: (m: Mutation) => T): T {
        return this.st.transaction.immediate(() => {
            const queue = this.queueRow();
            const m: Mutation = {
                queue,
                now: Date.now(),
                nextOrder: queue.next_order,
                addedCount: 0,
                handledCount: 0,
                modified: false,
            };
            const result = change(m);
            if (m.modified) {
                this.st.touch.run({
                    seq: queue.seq,
                    added: m.addedCount,
                    handled: m.handledCount,
                    nextOrder: m.nextOrder,
                    now: m.now,
                    clientKey: this.clientKey,
                });
            }
            return result;
        }) as T;
    }

    /**
     * `mutate`, committed with the other such writes of this turn of the event loop, each in a
     * savepoint of its own (turnGroup.ts): most pages add a link or two, and as one commit per turn
     * they cost a fraction of a commit each. Reads and the other writes run at once: Crawlee waits
     * for an add or a lock release to resolve before it asks about that request again.
     */
    mutateInTurn<T>(change: (m: Mutation) => T): Promise<T> {
        return this.turnWrites.add(() => this.mutate(change)) as Promise<T>;
    }

    seq(): number {
        this.seqCache ??= this.queues.require(this.idOrName).seq;
        return this.seqCache;
    }

    queueRow(): QueueRow {
        const row = this.queues.findBySeq(this.seq());
        if (!row) throw new Error(`${this.queues.label} with id "${this.idOrName}" does not exist.`);
        return row;
    }
}

export function toQueueInfo(row: QueueRow): RequestQueueInfo {
    return {
        ...storageInfo(row),
        totalRequestCount: row.total_count,
        handledRequestCount: row.handled_count,
        pendingRequestCount: row.total_count - row.handled_count,
        hadMultipleClients: row.had_multiple_clients === 1,
        stats: {},
    };
}

/**
 * The request as its row stores it. Its URL is kept whole (it is fetched with it); the error
 * messages Crawlee adds to it are scrubbed (vocabulary/redact.ts), as one may name a proxy or a
 * database with its password.
 */
export function serialize(request: RequestSchema): { id: string; json: string } {
    const id = requestIdOf(request);
    const errorMessages = request.errorMessages?.length ? { errorMessages: request.errorMessages.map(scrubText) } : {};
    return { id, json: JSON.stringify({ ...request, id, ...errorMessages }) };
}

/** The request's id, derived from its uniqueKey as Crawlee derives it; throws when the request does not agree. */
export function requestIdOf(request: RequestSchema): string {
    if (typeof request.url !== 'string' || typeof request.uniqueKey !== 'string') {
        throw new Error('A request needs a string "url" and "uniqueKey".');
    }
    const id = getRequestId(request.uniqueKey);
    if (request.id && request.id !== id) throw new Error('Request ID does not match its uniqueKey.');
    return id;
}

export function isHandled(request: RequestSchema): boolean {
    return Boolean(request.handledAt);
}

/** Positions a random-order request can draw: far more than requests, so ties are rare (and harmless). */
const RANDOM_POSITIONS = 2 ** 48;

/** The request's retry time when it is still to come. */
export function waitingUntil(request: RequestSchema, now: number): number | undefined {
    const retryAt = (request.userData as { retryAt?: unknown } | undefined)?.retryAt;
    return typeof retryAt === 'number' && retryAt > now ? retryAt : undefined;
}

/** The stored request, without null fields (as memory-storage returns it). */
export function parseRequest<T = RequestOptions>(json: string): T {
    const request = JSON.parse(json) as Record<string, unknown>;
    for (const key of Object.keys(request)) if (request[key] === null) delete request[key];
    return request as T;
}
