/**
 * A Crawlee `RequestQueueClient` on SQLite. Every operation is a handful of index lookups, so its
 * cost does not grow with the queue; a write is committed before it is acknowledged (adds and lock
 * releases with the turn's), so a killed process leaves the queue as its last acknowledged write did.
 *
 * Semantics follow @crawlee/memory-storage (the reference Crawlee's `RequestQueue` is written
 * against): ids derived from uniqueKey, `wasAlreadyPresent`/`wasAlreadyHandled`, a request added or
 * updated with `handledAt` is handled, reclaiming or unlocking moves a request to the back (or, with
 * `forefront`, the front), later forefront requests come first. Representation differs in two ways:
 * - A position (`order_no`) is a per-queue counter, +n at the back and -n at the front, instead of
 *   a millisecond timestamp: same order, but no ties between requests added in one millisecond.
 * - A lock is its own column instead of being folded into the position, so a request whose lock
 *   expires is offered again from its old place, and the head index never holds locked requests.
 * Locks belong to a client key: another client cannot prolong or delete a lock until it expires.
 *
 * Two additions for dragnet's retry policy and outcome commits:
 * - A request updated back to pending with `userData.retryAt` (ms since the epoch) in the future
 *   waits until then, locked by no client (`RETRY_WAIT`): it holds no crawler slot, the head skips
 *   it, and the queue is not finished while it waits (Crawlee's `isFinished()` reads
 *   `queueHasLockedRequests`). It waits at the front of the queue, so it is fetched when its wait
 *   is over — the delay the retry policy chose — not after everything queued meanwhile (on a queue
 *   of millions, hours later; and at the end of any crawl, where retries would pile up).
 * - `markHandled()` marks a request handled synchronously, so it can share one transaction with
 *   the request's outcome (outcomes.ts); Crawlee's own mark that follows finds it handled and
 *   writes nothing.
 */
import { randomUUID } from 'node:crypto';
import type {
    BatchAddRequestsResult,
    DeleteRequestLockOptions,
    ListAndLockHeadResult,
    ListAndLockOptions,
    ListOptions,
    ProlongRequestLockOptions,
    ProlongRequestLockResult,
    QueueHead,
    QueueOperationInfo,
    RequestOptions,
    RequestQueueClient,
    RequestQueueCollectionClient,
    RequestQueueHeadItem,
    RequestQueueInfo,
    RequestQueueOptions,
    RequestSchema,
    UpdateRequestSchema,
} from '@crawlee/types';
import type { SqliteDb } from './database.js';
import { type ListedRequest, ListedRequests } from './listedRequests.js';
import { type QueueRow, RETRY_WAIT, type RequestRow, statements } from './requestQueueSql.js';
import {
    isHandled,
    parseRequest,
    QueueTable,
    requestIdOf,
    serialize,
    toQueueInfo,
    waitingUntil,
} from './requestQueueTable.js';
import { StorageTable } from './storageTable.js';

export interface SqliteRequestQueueOptions {
    /**
     * Hand out requests added at the back (not `forefront`) in random order instead of the order
     * they were added, so failures of one part of a site spread over the run. Default: false.
     */
    randomOrder?: boolean;
}

export class SqliteRequestQueueClient implements RequestQueueClient {
    private readonly st;
    private readonly table: QueueTable;
    private readonly listed = new ListedRequests();

    constructor(
        db: SqliteDb,
        idOrName: string,
        options: RequestQueueOptions = {},
        { randomOrder = false }: SqliteRequestQueueOptions = {},
    ) {
        this.st = statements(db);
        // Locks belong to a client key: Crawlee's `RequestQueue` passes its own.
        this.table = new QueueTable(db, idOrName, options.clientKey ?? randomUUID(), randomOrder);
    }

    async get(): Promise<RequestQueueInfo | undefined> {
        const row = this.table.find();
        return row && toQueueInfo(row);
    }

    async update(newFields: { name?: string }): Promise<Partial<RequestQueueInfo> | undefined> {
        if (newFields.name) this.table.rename(newFields.name);
        return toQueueInfo(this.table.queueRow());
    }

    async delete(): Promise<void> {
        this.listed.clear();
        this.table.drop();
    }

    /** The first pending requests not locked by anyone, without locking them. */
    async listHead(options: ListOptions = {}): Promise<QueueHead> {
        const limit = options.limit ?? 100;
        const queue = this.table.queueRow();
        return {
            limit,
            queueModifiedAt: new Date(queue.modified_at),
            hadMultipleClients: queue.had_multiple_clients === 1,
            items: this.table
                .head(queue.seq, Date.now(), limit)
                .map((row) => parseRequest<RequestQueueHeadItem>(row.json)),
        };
    }

    async listAndLockHead(options: ListAndLockOptions): Promise<ListAndLockHeadResult & { clientKey: string }> {
        const { limit = 25, lockSecs } = options;
        return this.table.mutate((m) => {
            const rows = this.table.head(m.queue.seq, m.now, limit);
            const lockedUntil = m.now + lockSecs * 1000;
            for (const row of rows) this.st.setLock.run(row.order_no, lockedUntil, this.table.clientKey, row.rowid);
            return {
                limit,
                lockSecs,
                clientKey: this.table.clientKey,
                queueModifiedAt: new Date(m.queue.modified_at),
                hadMultipleClients: m.queue.had_multiple_clients === 1,
                // Locks held by anyone, this client included: Crawlee's isFinished() is false while any are.
                queueHasLockedRequests: this.st.anyLocked.get(m.queue.seq, m.now) !== undefined,
                items: rows.map((row) => this.listed.remember(parseRequest<ListedRequest>(row.json), lockedUntil)),
            };
        });
    }

    /**
     * Extends this client's lock to `lockSecs` from now (never shortening it), taking it when free.
     * (memory-storage adds `lockSecs` to the current expiry instead, so each prolong stacks.)
     * Crawlee prolongs every lock right after `listAndLockHead` took it; a prolong that would move
     * the expiry by less than a tenth of `lockSecs` (at most 1 s) keeps the lock as it is and
     * writes nothing — that saves one commit per fetched request (and, right after the listing, a read).
     */
    async prolongRequestLock(id: string, options: ProlongRequestLockOptions): Promise<ProlongRequestLockResult> {
        const slack = Math.min(1000, options.lockSecs * 100);
        const fresh = (lockedUntil: number, now: number) =>
            !options.forefront && lockedUntil >= now + options.lockSecs * 1000 - slack;
        // A lock this client holds and that is fresh enough to keep as it is.
        const keep = (row: RequestRow | undefined, now: number): row is RequestRow & { locked_until: number } =>
            row !== undefined &&
            row.order_no !== null &&
            row.locked_by === this.table.clientKey &&
            row.locked_until !== null &&
            fresh(row.locked_until, now);
        const listedUntil = this.listed.lockedUntil(id) ?? 0;
        if (fresh(listedUntil, Date.now())) return { lockExpiresAt: new Date(listedUntil) };
        // Read first, outside a write transaction: only this client can change a lock it holds.
        const current = this.st.state.get(this.table.seq(), id);
        if (keep(current, Date.now())) return { lockExpiresAt: new Date(current.locked_until) };
        this.listed.forget(id);
        return this.table.mutate((m) => {
            const row = this.table.lockable(m, id);
            if (keep(row, m.now)) return { lockExpiresAt: new Date(row.locked_until) };
            const lockedUntil = Math.max(row.locked_until ?? 0, m.now + options.lockSecs * 1000);
            const orderNo = options.forefront ? this.table.position(m, true) : row.order_no;
            this.st.setLock.run(orderNo, lockedUntil, this.table.clientKey, row.rowid);
            return { lockExpiresAt: new Date(lockedUntil) };
        });
    }

    /**
     * Releases this client's lock and moves the request to the back,
     * or the front with `forefront`; committed with the turn's.
     */
    deleteRequestLock(id: string, options: DeleteRequestLockOptions = {}): Promise<void> {
        this.listed.forget(id);
        return this.table.mutateInTurn((m) => {
            const row = this.table.lockable(m, id);
            if (row.locked_until === null || row.locked_until <= m.now) {
                throw new Error(`Request with ID ${id} is not locked in queue ${this.table.idOrName}`);
            }
            this.st.setLock.run(this.table.position(m, options.forefront ?? false), null, null, row.rowid);
        });
    }

    async addRequest(request: RequestSchema, options: RequestOptions = {}): Promise<QueueOperationInfo> {
        const [result] = (await this.batchAddRequests([request], options)).processedRequests;
        if (!result) throw new Error('batchAddRequests gave no result for the one request it was given');
        const { requestId, wasAlreadyPresent, wasAlreadyHandled } = result;
        return { requestId, wasAlreadyPresent, wasAlreadyHandled };
    }

    /** Adds the whole batch: all of it is stored, or (on a crash) none of it. Committed at the end of the turn. */
    async batchAddRequests(requests: RequestSchema[], options: RequestOptions = {}): Promise<BatchAddRequestsResult> {
        const forefront = options.forefront === true;
        const processedRequests = await this.table.mutateInTurn((m) =>
            requests.map((request) => this.table.insert(m, request, forefront)),
        );
        return { processedRequests, unprocessedRequests: [] };
    }

    async getRequest(id: string): Promise<RequestOptions | undefined> {
        const listed = this.listed.take(id, Date.now());
        if (listed) return listed;
        const row = this.st.json.get(this.table.seq(), id);
        return row && parseRequest(row.json);
    }

    /**
     * Stores the request as given. With `handledAt` it becomes handled (how `markRequestHandled`
     * works); without, it is pending again at the back (or front) of the queue and unlocked (how
     * `reclaimRequest` works), or waiting for its `userData.retryAt`. A request not in the queue is
     * added. A request handled already stays as it was stored when it was handled.
     */
    async updateRequest(request: UpdateRequestSchema, options: RequestOptions = {}): Promise<QueueOperationInfo> {
        // Crawlee's `markRequestHandled` follows every outcome commit (outcomes.ts),
        // which has marked the request handled already: answered from one read, with no
        // write transaction (a handled request stays as it was stored when handled).
        const handledId = isHandled(request) ? requestIdOf(request) : undefined;
        if (handledId && this.st.state.get(this.table.seq(), handledId)?.order_no === null)
            return { requestId: handledId, wasAlreadyPresent: true, wasAlreadyHandled: true };
        return this.table.mutate((m) => {
            const { id, json } = serialize(request);
            this.listed.forget(id);
            const existing = this.st.state.get(m.queue.seq, id);
            if (!existing) {
                const { requestId, wasAlreadyPresent, wasAlreadyHandled } = this.table.insert(
                    m,
                    request,
                    options.forefront === true,
                );
                return { requestId, wasAlreadyPresent, wasAlreadyHandled };
            }
            const handled = isHandled(request);
            const wasHandled = existing.order_no === null;
            if (handled && wasHandled) return { requestId: id, wasAlreadyPresent: true, wasAlreadyHandled: true };
            const retryAt = handled ? undefined : waitingUntil(request, m.now);
            const orderNo = handled
                ? null
                : this.table.position(m, options.forefront === true || retryAt !== undefined);
            this.st.rewrite.run(orderNo, retryAt ?? null, retryAt ? RETRY_WAIT : null, json, existing.rowid);
            m.handledCount += Number(handled) - Number(wasHandled);
            m.modified = true;
            return { requestId: id, wasAlreadyPresent: true, wasAlreadyHandled: wasHandled };
        });
    }

    /**
     * Marks the request handled now, inside the caller's transaction when there is one (outcomes.ts
     * commits a request's records with it), or says why not: handled already, or not in this queue.
     */
    markHandled(request: RequestSchema): 'marked' | 'handled-already' | 'not-here' {
        return this.table.mutate((m) => {
            const { id, json } = serialize({
                ...request,
                handledAt: request.handledAt ?? new Date(m.now).toISOString(),
            });
            this.listed.forget(id);
            const existing = this.st.state.get(m.queue.seq, id);
            if (!existing || existing.order_no === null) return existing ? 'handled-already' : 'not-here';
            this.st.rewrite.run(null, null, null, json, existing.rowid);
            m.handledCount += 1;
            m.modified = true;
            return 'marked';
        });
    }

    /** `getRequest`, synchronously: inside the caller's transaction, it reads what that transaction wrote. */
    readRequest(id: string): RequestSchema | undefined {
        const row = this.st.json.get(this.table.seq(), id);
        return row && parseRequest<RequestSchema>(row.json);
    }

    /**
     * Makes a handled request pending again at the back of the queue, unlocked and stored as given
     * (without `handledAt`), or adds it when it is not here; a pending one is left as it is.
     * Synchronous, so it can share the caller's transaction (re-queueing a dead-letter entry with
     * its removal, store/deadLetterStore.ts).
     */
    requeue(request: RequestSchema): 'requeued' | 'added' | 'pending' {
        if (isHandled(request)) throw new Error('A request to re-queue must not have handledAt.');
        return this.table.mutate((m) => {
            const { id, json } = serialize(request);
            this.listed.forget(id);
            const existing = this.st.state.get(m.queue.seq, id);
            if (!existing) {
                this.table.insert(m, request, false);
                return 'added';
            }
            if (existing.order_no !== null) return 'pending';
            const retryAt = waitingUntil(request, m.now);
            this.st.rewrite.run(
                this.table.position(m, false),
                retryAt ?? null,
                retryAt ? RETRY_WAIT : null,
                json,
                existing.rowid,
            );
            m.handledCount -= 1;
            m.modified = true;
            return 'requeued';
        });
    }

    async deleteRequest(id: string): Promise<void> {
        this.listed.forget(id);
        this.table.mutate((m) => {
            const existing = this.st.state.get(m.queue.seq, id);
            if (!existing) return;
            this.st.remove.run(existing.rowid);
            m.addedCount -= 1;
            if (existing.order_no === null) m.handledCount -= 1;
            m.modified = true;
        });
    }

    /**
     * Frees every lock in this queue except retry waits: for a run resuming after its process died
     * holding them. Never while another process crawls from this queue. Returns how many.
     */
    releaseLocks(): number {
        this.listed.clear();
        return this.table.mutate(() => this.st.releaseQueueLocks.run(this.table.seq(), RETRY_WAIT).changes);
    }

    /** The URL of every request in the queue, handled or not, read lazily. */
    urls(): IterableIterator<string> {
        return this.st.urls.iterate(this.table.seq()) as IterableIterator<string>;
    }
}

/** The SQLite client behind a Crawlee RequestQueue; throws when the queue is on another storage. */
export function sqliteClientOf(queue: { client: unknown; name?: string; id: string }): SqliteRequestQueueClient {
    if (!(queue.client instanceof SqliteRequestQueueClient))
        throw new Error(`queue ${queue.name ?? queue.id} is not on the SQLite storage`);
    return queue.client;
}
export class SqliteRequestQueueCollectionClient implements RequestQueueCollectionClient {
    constructor(private readonly db: SqliteDb) {}

    async list() {
        const items = StorageTable.of<QueueRow>(this.db, 'request_queues').list().map(toQueueInfo);
        return { total: items.length, count: items.length, offset: 0, limit: items.length, desc: false, items };
    }

    async getOrCreate(name?: string): Promise<RequestQueueInfo> {
        return toQueueInfo(StorageTable.of<QueueRow>(this.db, 'request_queues').getOrCreate(name));
    }
}
