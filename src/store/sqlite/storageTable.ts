/**
 * The rows that name request queues and datasets: found by id or by name (Crawlee opens storages
 * either way), created on first use, listed, renamed. One `StorageTable` per kind per database.
 */
import { randomUUID } from 'node:crypto';
import type { SqliteDb } from './database.js';

export interface StorageRow {
    seq: number;
    id: string;
    name: string | null;
    created_at: number;
    modified_at: number;
    accessed_at: number;
}

type Kind = 'request_queues' | 'datasets';

const LABELS: Record<Kind, string> = { request_queues: 'Request queue', datasets: 'Dataset' };

export class StorageTable<Row extends StorageRow> {
    private readonly byIdOrName;
    private readonly bySeq;
    private readonly insert;
    private readonly listAll;
    private readonly setName;

    private constructor(
        readonly db: SqliteDb,
        readonly kind: Kind,
    ) {
        // An id match wins over a name match, as in @crawlee/memory-storage.
        this.byIdOrName = db.prepare<{ key: string }, Row>(
            `SELECT * FROM ${kind} WHERE id = @key OR name = @key ORDER BY id = @key DESC LIMIT 1`,
        );
        this.bySeq = db.prepare<[number], Row>(`SELECT * FROM ${kind} WHERE seq = ?`);
        this.insert = db.prepare<{ id: string; name: string | null; now: number }>(
            `INSERT INTO ${kind} (id, name, created_at, modified_at, accessed_at) VALUES (@id, @name, @now, @now, @now)
             ON CONFLICT DO NOTHING`,
        );
        this.listAll = db.prepare<[], Row>(`SELECT * FROM ${kind} ORDER BY created_at, seq`);
        this.setName = db.prepare<[string, number, number]>(
            `UPDATE ${kind} SET name = ?, modified_at = ? WHERE seq = ?`,
        );
    }

    /** The table of `kind` in `db`, its statements prepared once per database. */
    static of<Row extends StorageRow>(db: SqliteDb, kind: Kind): StorageTable<Row> {
        let tables = cache.get(db);
        if (!tables) {
            tables = new Map();
            cache.set(db, tables);
        }
        let table = tables.get(kind);
        if (!table) {
            table = new StorageTable<StorageRow>(db, kind);
            tables.set(kind, table);
        }
        return table as StorageTable<Row>;
    }

    get label(): string {
        return LABELS[this.kind];
    }

    find(idOrName: string): Row | undefined {
        return this.byIdOrName.get({ key: idOrName });
    }

    findBySeq(seq: number): Row | undefined {
        return this.bySeq.get(seq);
    }

    /** The row, or the error @crawlee/memory-storage throws for a storage that does not exist. */
    require(idOrName: string): Row {
        const row = this.find(idOrName);
        if (!row) throw new Error(`${this.label} with id "${idOrName}" does not exist.`);
        return row;
    }

    /** The storage called `name` (or with that id), created when missing; a fresh unnamed one without a name. */
    getOrCreate(name?: string): Row {
        if (name) {
            const found = this.find(name);
            if (found) return found;
        }
        const id = randomUUID();
        // ON CONFLICT DO NOTHING + re-read: another process may create the same name at the same moment.
        this.insert.run({ id, name: name ?? null, now: Date.now() });
        return this.require(name ? name : id);
    }

    list(): Row[] {
        return this.listAll.all();
    }

    rename(seq: number, name: string): void {
        const other = this.find(name);
        if (other && other.seq !== seq) throw new Error(`${this.label} with name "${name}" already exists.`);
        this.setName.run(name, Date.now(), seq);
    }
}

const cache = new WeakMap<SqliteDb, Map<Kind, StorageTable<StorageRow>>>();

/** What Crawlee's storage info says of any storage: its id, name and times. */
export function storageInfo(row: StorageRow): {
    id: string;
    name?: string;
    createdAt: Date;
    modifiedAt: Date;
    accessedAt: Date;
} {
    return {
        id: row.id,
        name: row.name ?? undefined,
        createdAt: new Date(row.created_at),
        modifiedAt: new Date(row.modified_at),
        accessedAt: new Date(row.accessed_at),
    };
}
