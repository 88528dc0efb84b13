/**
 * A Crawlee `RequestQueueClient` on SQLite. Every operation is a handful of index lookups, so its
 * cost does not grow with the queue; every call that writes is one transaction, so a process killed
 * at any moment leaves the queue exactly as the last acknowledged call left it.
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
    ProcessedRequest,
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
import { getRequestId } from '@crawlee/core';
import type { SqliteDb } from './database.js';
import { type HeadRow, type QueueRow, type RequestRow, RETRY_WAIT, statements } from './requestQueueSql.js';
import { StorageTable } from './storageTable.js';

/** One write transaction's view of the queue: positions handed out and counter changes, stored at the end. */
export interface SqliteRequestQueueOptions {
    /**
     * Hand out requests added at the back (not `forefront`) in random order instead of the order
     * they were added, so failures of one part of a site spread over the run. Default: false.
     */
    randomOrder?: boolean;
}

interface Mutation {
    queue: QueueRow;
    now: number;
    nextOrder: number;
    addedCount: number;
    handledCount: number;
    modified: boolean;
}

export class SqliteRequestQueueClient implements RequestQueueClient {
    private readonly st;
    private readonly queues: StorageTable<QueueRow>;
    /** Owner of the locks this client takes; Crawlee's `RequestQueue` passes its own. */
    private readonly clientKey: string;
    private readonly randomOrder: boolean;
    private seqCache: number | undefined;

    constructor(
        db: SqliteDb,
        private readonly idOrName: string,
        options: RequestQueueOptions = {},
        { randomOrder = false }: SqliteRequestQueueOptions = {},
    ) {
        this.st = statements(db);
        this.queues = StorageTable.of<QueueRow>(db, 'request_queues');
        this.clientKey = options.clientKey ?? randomUUID();
        this.randomOrder = randomOrder;
    }

    async get(): Promise<RequestQueueInfo | undefined> {
        const row = this.queues.find(this.idOrName);
        return row && toQueueInfo(row);
    }

    async update(newFields: { name?: string }): Promise<Partial<RequestQueueInfo> | undefined> {
        const row = this.queueRow();
        if (newFields.name) this.queues.rename(row.seq, newFields.name);
        return toQueueInfo(this.queueRow());
    }

    async delete(): Promise<void> {
        const row = this.queues.find(this.idOrName);
        this.seqCache = undefined;
        if (!row) return;
        this.st.transaction.immediate(() => {
            this.st.deleteRequests.run(row.seq);
            this.st.deleteQueue.run(row.seq);
        });
    }

    /** The first pending requests not locked by anyone, without locking them. */
    async listHead(options: ListOptions = {}): Promise<QueueHead> {
        const limit = options.limit ?? 100;
        const queue = this.queueRow();
        return {
            limit,
            queueModifiedAt: new Date(queue.modified_at),
            hadMultipleClients: queue.had_multiple_clients === 1,
            items: this.head(queue.seq, Date.now(), limit).map((row) => parseRequest<RequestQueueHeadItem>(row.json)),
        };
    }

    async listAndLockHead(options: ListAndLockOptions): Promise<ListAndLockHeadResult & { clientKey: string }> {
        const { limit = 25, lockSecs } = options;
        return this.mutate((m) => {
            const rows = this.head(m.queue.seq, m.now, limit);
            const lockedUntil = m.now + lockSecs * 1000;
            for (const row of rows) this.st.setLock.run(row.order_no, lockedUntil, this.clientKey, row.rowid);
            return {
                limit,
                lockSecs,
                clientKey: this.clientKey,
                queueModifiedAt: new Date(m.queue.modified_at),
                hadMultipleClients: m.queue.had_multiple_clients === 1,
                // Locks held by anyone, this client included: Crawlee's isFinished() is false while any are.
                queueHasLockedRequests: this.st.anyLocked.get(m.queue.seq, m.now) !== undefined,
                items: rows.map((row) => parseRequest<RequestQueueHeadItem>(row.json)),
            };
        });
    }

    /**
     * Extends this client's lock to `lockSecs` from now (never shortening it), taking it when free.
     * (memory-storage adds `lockSecs` to the current expiry instead, so each prolong stacks.)
     * Crawlee prolongs every lock right after `listAndLockHead` took it; a prolong that would move
     * the expiry by less than a tenth of `lockSecs` (at most 1 s) keeps the lock as it is and
     * writes nothing — that saves one commit per fetched request.
     */
    async prolongRequestLock(id: string, options: ProlongRequestLockOptions): Promise<ProlongRequestLockResult> {
        const slack = Math.min(1000, options.lockSecs * 100);
        const keep = (row: RequestRow | undefined, now: number) =>
            !options.forefront &&
            row?.order_no !== null &&
            row?.locked_by === this.clientKey &&
            row.locked_until! >= now + options.lockSecs * 1000 - slack;
        // Read first, outside a write transaction: only this client can change a lock it holds.
        const current = this.st.state.get(this.seq(), id);
        if (keep(current, Date.now())) return { lockExpiresAt: new Date(current!.locked_until!) };
        return this.mutate((m) => {
            const row = this.lockable(m, id);
            if (keep(row, m.now)) return { lockExpiresAt: new Date(row.locked_until!) };
            const lockedUntil = Math.max(row.locked_until ?? 0, m.now + options.lockSecs * 1000);
            const orderNo = options.forefront ? this.position(m, true) : row.order_no!;
            this.st.setLock.run(orderNo, lockedUntil, this.clientKey, row.rowid);
            return { lockExpiresAt: new Date(lockedUntil) };
        });
    }

    /** Releases this client's lock and moves the request to the back of the queue, or the front with `forefront`. */
    async deleteRequestLock(id: string, options: DeleteRequestLockOptions = {}): Promise<void> {
        this.mutate((m) => {
            const row = this.lockable(m, id);
            if (row.locked_until === null || row.locked_until <= m.now) {
                throw new Error(`Request with ID ${id} is not locked in queue ${this.idOrName}`);
            }
            this.st.setLock.run(this.position(m, options.forefront ?? false), null, null, row.rowid);
        });
    }

    async addRequest(request: RequestSchema, options: RequestOptions = {}): Promise<QueueOperationInfo> {
        const [result] = (await this.batchAddRequests([request], options)).processedRequests;
        const { requestId, wasAlreadyPresent, wasAlreadyHandled } = result!;
        return { requestId, wasAlreadyPresent, wasAlreadyHandled };
    }

    /** Adds the whole batch in one transaction: all of it is stored, or (on a crash) none of it. */
    async batchAddRequests(requests: RequestSchema[], options: RequestOptions = {}): Promise<BatchAddRequestsResult> {
        const forefront = options.forefront === true;
        const processedRequests = this.mutate((m) => requests.map((request) => this.insert(m, request, forefront)));
        return { processedRequests, unprocessedRequests: [] };
    }

    async getRequest(id: string): Promise<RequestOptions | undefined> {
        const row = this.st.json.get(this.seq(), id);
        return row && parseRequest(row.json);
    }

    /**
     * Stores the request as given. With `handledAt` it becomes handled (how `markRequestHandled`
     * works); without, it is pending again at the back (or front) of the queue and unlocked (how
     * `reclaimRequest` works), or waiting for its `userData.retryAt`. A request not in the queue is
     * added. A request handled already stays as it was stored when it was handled.
     */
    async updateRequest(request: UpdateRequestSchema, options: RequestOptions = {}): Promise<QueueOperationInfo> {
        // Crawlee's `markRequestHandled` follows every outcome commit (outcomes.ts), which has marked
        // the request handled already: answer that from one read, without a write transaction or
        // serializing the request (a handled request stays as it was stored when it was handled).
        if (isHandled(request)) {
            const id = requestIdOf(request);
            if (this.st.state.get(this.seq(), id)?.order_no === null) return { requestId: id, wasAlreadyPresent: true, wasAlreadyHandled: true };
        }
        return this.mutate((m) => {
            const { id, json } = serialize(request);
            const existing = this.st.state.get(m.queue.seq, id);
            if (!existing) {
                const { requestId, wasAlreadyPresent, wasAlreadyHandled } = this.insert(m, request, options.forefront === true);
                return { requestId, wasAlreadyPresent, wasAlreadyHandled };
            }
            const handled = isHandled(request);
            const wasHandled = existing.order_no === null;
            if (handled && wasHandled) return { requestId: id, wasAlreadyPresent: true, wasAlreadyHandled: true };
            const retryAt = handled ? undefined : waitingUntil(request, m.now);
            const orderNo = handled ? null : this.position(m, options.forefront === true || retryAt !== undefined);
            this.st.rewrite.run(orderNo, retryAt ?? null, retryAt ? RETRY_WAIT : null, json, existing.rowid);
            m.handledCount += Number(handled) - Number(wasHandled);
            m.modified = true;
            return { requestId: id, wasAlreadyPresent: true, wasAlreadyHandled: wasHandled };
        });
    }

    /**
     * Marks the request handled now, inside the caller's transaction when there is one (outcomes.ts
     * commits a request's records with it). False when it was handled already or is not here.
     */
    markHandled(request: RequestSchema): boolean {
        return this.mutate((m) => {
            const { id, json } = serialize({ ...request, handledAt: request.handledAt ?? new Date(m.now).toISOString() });
            const existing = this.st.state.get(m.queue.seq, id);
            if (!existing || existing.order_no === null) return false;
            this.st.rewrite.run(null, null, null, json, existing.rowid);
            m.handledCount += 1;
            m.modified = true;
            return true;
        });
    }

    /** `getRequest`, synchronously: inside the caller's transaction, it reads what that transaction wrote. */
    readRequest(id: string): RequestSchema | undefined {
        const row = this.st.json.get(this.seq(), id);
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
        return this.mutate((m) => {
            const { id, json } = serialize(request);
            const existing = this.st.state.get(m.queue.seq, id);
            if (!existing) {
                this.insert(m, request, false);
                return 'added';
            }
            if (existing.order_no !== null) return 'pending';
            const retryAt = waitingUntil(request, m.now);
            this.st.rewrite.run(this.position(m, false), retryAt ?? null, retryAt ? RETRY_WAIT : null, json, existing.rowid);
            m.handledCount -= 1;
            m.modified = true;
            return 'requeued';
        });
    }

    async deleteRequest(id: string): Promise<void> {
        this.mutate((m) => {
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
        return this.mutate(() => this.st.releaseQueueLocks.run(this.seq(), RETRY_WAIT).changes);
    }

    /** The URL of every request in the queue, handled or not, read lazily. */
    urls(): IterableIterator<string> {
        return this.st.urls.iterate(this.seq()) as IterableIterator<string>;
    }

    private insert(m: Mutation, request: RequestSchema, forefront: boolean): ProcessedRequest {
        const { id, json } = serialize(request);
        const handled = isHandled(request);
        const orderNo = handled ? null : this.position(m, forefront);
        const { uniqueKey } = request;
        if (this.st.insert.run(m.queue.seq, id, orderNo, json).changes === 0) {
            const existing = this.st.state.get(m.queue.seq, id)!;
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
    private position(m: Mutation, forefront: boolean): number {
        const n = m.nextOrder++;
        m.modified = true;
        if (forefront) return -n;
        return this.randomOrder ? 1 + Math.floor(Math.random() * RANDOM_POSITIONS) : n;
    }

    /** The request, if this client may lock, prolong or unlock it. */
    private lockable(m: Mutation, id: string): RequestRow {
        const row = this.st.state.get(m.queue.seq, id);
        if (!row) throw new Error(`Request with ID ${id} not found in queue ${this.idOrName}`);
        if (row.order_no === null) throw new Error(`Request with ID ${id} has already been handled in queue ${this.idOrName}`);
        if (row.locked_by !== null && row.locked_by !== this.clientKey && row.locked_until! > m.now) {
            throw new Error(`Request with ID ${id} is locked by another client in queue ${this.idOrName}`);
        }
        return row;
    }

    /** The first `limit` pending requests free to lock: unlocked ones and those whose lock expired, by position. */
    private head(seq: number, now: number, limit: number): HeadRow[] {
        const free = this.st.headFree.all(seq, limit);
        const expired = this.st.headExpired.all(seq, now, limit);
        if (expired.length === 0) return free;
        return [...free, ...expired].sort((a, b) => a.order_no - b.order_no).slice(0, limit);
    }

    /** Runs `change` in one write transaction and then stores the queue row's counters, if it changed anything. */
    private mutate<T>(change: (m: Mutation) => T): T {
        return this.st.transaction.immediate(() => {
            const queue = this.queueRow();
            const m: Mutation = { queue, now: Date.now(), nextOrder: queue.next_order, addedCount: 0, handledCount: 0, modified: false };
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

    private seq(): number {
        return (this.seqCache ??= this.queues.require(this.idOrName).seq);
    }

    private queueRow(): QueueRow {
        const row = this.queues.findBySeq(this.seq());
        if (!row) throw new Error(`${this.queues.label} with id "${this.idOrName}" does not exist.`);
        return row;
    }
}

/** The SQLite client behind a Crawlee RequestQueue; throws when the queue is on another storage. */
export function sqliteClientOf(queue: { client: unknown; name?: string; id: string }): SqliteRequestQueueClient {
    if (!(queue.client instanceof SqliteRequestQueueClient)) throw new Error(`queue ${queue.name ?? queue.id} is not on the SQLite storage`);
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

function toQueueInfo(row: QueueRow): RequestQueueInfo {
    return {
        id: row.id,
        name: row.name ?? undefined,
        createdAt: new Date(row.created_at),
        modifiedAt: new Date(row.modified_at),
        accessedAt: new Date(row.accessed_at),
        totalRequestCount: row.total_count,
        handledRequestCount: row.handled_count,
        pendingRequestCount: row.total_count - row.handled_count,
        hadMultipleClients: row.had_multiple_clients === 1,
        stats: {},
    };
}

function serialize(request: RequestSchema): { id: string; json: string } {
    const id = requestIdOf(request);
    return { id, json: JSON.stringify({ ...request, id }) };
}

/** The request's id, derived from its uniqueKey as Crawlee derives it; throws when the request does not agree. */
function requestIdOf(request: RequestSchema): string {
    if (typeof request.url !== 'string' || typeof request.uniqueKey !== 'string') {
        throw new Error('A request needs a string "url" and "uniqueKey".');
    }
    const id = getRequestId(request.uniqueKey);
    if (request.id && request.id !== id) throw new Error('Request ID does not match its uniqueKey.');
    return id;
}

function isHandled(request: RequestSchema): boolean {
    return Boolean(request.handledAt);
}

/** Positions a random-order request can draw: far more than requests, so ties are rare (and harmless). */
const RANDOM_POSITIONS = 2 ** 48;

/** The request's retry time when it is still to come. */
function waitingUntil(request: RequestSchema, now: number): number | undefined {
    const retryAt = (request.userData as { retryAt?: unknown } | undefined)?.retryAt;
    return typeof retryAt === 'number' && retryAt > now ? retryAt : undefined;
}

/** The stored request, without null fields (as memory-storage returns it). */
function parseRequest<T = RequestOptions>(json: string): T {
    const request = JSON.parse(json) as Record<string, unknown>;
    for (const key of Object.keys(request)) if (request[key] === null) delete request[key];
    return request as T;
}
