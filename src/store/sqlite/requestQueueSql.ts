/**
 * The SQL of the request queue client (requestQueueClient.ts): row shapes and statements, prepared
 * once per database and shared by every queue client on it. Which index serves which statement is
 * in database.ts.
 */
import type { SqliteDb } from './database.js';
import type { StorageRow } from './storageTable.js';

export interface QueueRow extends StorageRow {
    total_count: number;
    handled_count: number;
    next_order: number;
    had_multiple_clients: number;
}

export interface RequestRow {
    rowid: number;
    order_no: number | null;
    locked_until: number | null;
    locked_by: string | null;
}

/** A request still to be handled: it has a position in the queue. */
export type PendingRow = RequestRow & { order_no: number };

export function isPending(row: RequestRow): row is PendingRow {
    return row.order_no !== null;
}

export interface HeadRow {
    rowid: number;
    order_no: number;
    json: string;
}

/** Statements prepared once per database and shared by every queue client on it. */
function prepare(db: SqliteDb) {
    return {
        insert: db.prepare<[number, string, number | null, string]>(
            'INSERT INTO requests (queue_seq, id, order_no, json) VALUES (?, ?, ?, ?) ON CONFLICT (queue_seq, id) DO ' +
                'NOTHING',
        ),
        state: db.prepare<[number, string], RequestRow>(
            'SELECT rowid, order_no, locked_until, locked_by FROM requests WHERE queue_seq = ? AND id = ?',
        ),
        json: db.prepare<[number, string], { json: string }>(
            'SELECT json FROM requests WHERE queue_seq = ? AND id = ?',
        ),
        rewrite: db.prepare<[number | null, number | null, string | null, string, number]>(
            'UPDATE requests SET order_no = ?, locked_until = ?, locked_by = ?, json = ? WHERE rowid = ?',
        ),
        setLock: db.prepare<[number, number | null, string | null, number]>(
            'UPDATE requests SET order_no = ?, locked_until = ?, locked_by = ? WHERE rowid = ?',
        ),
        remove: db.prepare<[number]>('DELETE FROM requests WHERE rowid = ?'),
        // The two halves of the head, each a range scan of a partial index (see database.ts).
        headFree: db.prepare<[number, number], HeadRow>(
            `SELECT rowid, order_no, json FROM requests
             WHERE queue_seq = ? AND order_no IS NOT NULL AND locked_until IS NULL ORDER BY order_no LIMIT ?`,
        ),
        headExpired: db.prepare<[number, number, number], HeadRow>(
            `SELECT rowid, order_no, json FROM requests
             WHERE queue_seq = ? AND locked_until IS NOT NULL AND locked_until <= ? ORDER BY locked_until LIMIT ?`,
        ),
        anyLocked: db.prepare<[number, number], 1>(
            'SELECT 1 FROM requests WHERE queue_seq = ? AND locked_until IS NOT NULL AND locked_until > ? LIMIT 1',
        ),
        touch: db.prepare<{
            seq: number;
            added: number;
            handled: number;
            nextOrder: number;
            now: number;
            clientKey: string;
        }>(
            `UPDATE request_queues SET total_count = total_count + @added, handled_count = handled_count + @handled,
                next_order = @nextOrder, modified_at = @now, accessed_at = @now,
                had_multiple_clients = had_multiple_clients OR coalesce(last_client_key <> @clientKey, 0),
                last_client_key = @clientKey
             WHERE seq = @seq`,
        ),
        releaseQueueLocks: db.prepare<[number, string]>(
            'UPDATE requests SET locked_until = NULL, locked_by = NULL WHERE queue_seq = ? AND locked_until IS NOT ' +
                'NULL AND locked_by IS NOT ?',
        ),
        urls: db
            .prepare<[number], string>("SELECT json_extract(json, '$.url') FROM requests WHERE queue_seq = ?")
            .pluck(),
        deleteRequests: db.prepare<[number]>('DELETE FROM requests WHERE queue_seq = ?'),
        deleteQueue: db.prepare<[number]>('DELETE FROM request_queues WHERE seq = ?'),
        releaseLocks: db.prepare<[string]>(
            'UPDATE requests SET locked_until = NULL, locked_by = NULL WHERE locked_until IS NOT NULL AND locked_by ' +
                'IS NOT ?',
        ),
        // One transaction wrapper, given the work as a closure; `.immediate()` takes the write lock
        // up front so two processes never deadlock upgrading a read to a write.
        transaction: db.transaction((work: () => unknown) => work()),
    };
}

const prepared = new WeakMap<SqliteDb, ReturnType<typeof prepare>>();
export function statements(db: SqliteDb) {
    let st = prepared.get(db);
    if (!st) {
        st = prepare(db);
        prepared.set(db, st);
    }
    return st;
}

/**
 * The `locked_by` of a request waiting for its retry time: held by no client, so no client can
 * prolong or release it, and offered again once `locked_until` passes.
 */
export const RETRY_WAIT = '(retry wait)';

/**
 * Frees every request lock in the database: for a single process resuming after a crash, whose
 * dead predecessor's locks would otherwise hold their requests until they expire. Requests
 * waiting for their retry time keep waiting.
 */
export function releaseAllLocks(db: SqliteDb): number {
    return statements(db).releaseLocks.run(RETRY_WAIT).changes;
}
