/**
 * A Crawlee `DatasetClient` on SQLite. Items are rows `(dataset, idx, json)` with idx 1, 2, 3, …
 * in push order, so a page at any offset is one range scan of the primary key and a push is an
 * append. Each push is one transaction: after a crash a batch is either all there or not at all.
 *
 * `listItems` honours offset, limit and desc. The API server's other options (`clean`, `fields`,
 * `omit`, `unwind`, …) are ignored, as in @crawlee/memory-storage; `downloadItems` is not supported.
 */
import type {
    DatasetClient,
    DatasetClientListOptions,
    DatasetClientUpdateOptions,
    DatasetCollectionClient,
    DatasetCollectionData,
    DatasetInfo,
    Dictionary,
    PaginatedList,
} from '@crawlee/types';
import type { SqliteDb } from './database.js';
import { PageListing } from './pageListing.js';
import { type StorageRow, StorageTable, storageInfo } from './storageTable.js';

interface DatasetRow extends StorageRow {
    item_count: number;
}

/** What memory-storage (and the API) report as `limit` when none was asked for. */
const NO_LIMIT = 999_999_999_999;

export interface IterateItemsOptions {
    /** Items read per query: memory holds at most one batch. Default: 1000. */
    batchSize?: number;
    /** Items to skip first. Default: 0. */
    offset?: number;
    /** Most items to yield. Default: all. */
    limit?: number;
    /** Newest first. Default: false. */
    desc?: boolean;
}

function prepare(db: SqliteDb) {
    return {
        insert: db.prepare<[number, number, string]>(
            'INSERT INTO dataset_items (dataset_seq, idx, json) VALUES (?, ?, ?)',
        ),
        setCount: db.prepare<[number, number, number, number]>(
            'UPDATE datasets SET item_count = ?, modified_at = ?, accessed_at = ? WHERE seq = ?',
        ),
        after: db.prepare<[number, number, number], { idx: number; json: string }>(
            'SELECT idx, json FROM dataset_items WHERE dataset_seq = ? AND idx > ? ORDER BY idx LIMIT ?',
        ),
        before: db.prepare<[number, number, number], { idx: number; json: string }>(
            'SELECT idx, json FROM dataset_items WHERE dataset_seq = ? AND idx < ? ORDER BY idx DESC LIMIT ?',
        ),
        deleteItems: db.prepare<[number]>('DELETE FROM dataset_items WHERE dataset_seq = ?'),
        deleteItem: db.prepare<[number, number]>('DELETE FROM dataset_items WHERE dataset_seq = ? AND idx = ?'),
        moveItem: db.prepare<[number, number, number]>(
            'UPDATE dataset_items SET idx = ? WHERE dataset_seq = ? AND idx = ?',
        ),
        deleteDataset: db.prepare<[number]>('DELETE FROM datasets WHERE seq = ?'),
        transaction: db.transaction((work: () => unknown) => work()),
    };
}

const prepared = new WeakMap<SqliteDb, ReturnType<typeof prepare>>();
function statements(db: SqliteDb) {
    let st = prepared.get(db);
    if (!st) {
        st = prepare(db);
        prepared.set(db, st);
    }
    return st;
}

export class SqliteDatasetClient<Data extends Dictionary = Dictionary> implements DatasetClient<Data> {
    private readonly st;
    private readonly datasets: StorageTable<DatasetRow>;

    constructor(
        db: SqliteDb,
        private readonly idOrName: string,
    ) {
        this.st = statements(db);
        this.datasets = StorageTable.of<DatasetRow>(db, 'datasets');
    }

    async get(): Promise<DatasetInfo | undefined> {
        const row = this.datasets.find(this.idOrName);
        return row && toDatasetInfo(row);
    }

    async update(newFields: DatasetClientUpdateOptions = {}): Promise<Partial<DatasetInfo>> {
        const row = this.datasets.require(this.idOrName);
        if (newFields.name) this.datasets.rename(row.seq, newFields.name);
        const renamed = this.datasets.findBySeq(row.seq);
        if (!renamed) throw new Error(`${this.datasets.label} with id "${this.idOrName}" does not exist.`);
        return toDatasetInfo(renamed);
    }

    async delete(): Promise<void> {
        const row = this.datasets.find(this.idOrName);
        if (!row) return;
        this.st.transaction.immediate(() => {
            this.st.deleteItems.run(row.seq);
            this.st.deleteDataset.run(row.seq);
        });
    }

    async downloadItems(): Promise<Buffer> {
        throw new Error('downloadItems is not supported by the SQLite storage; use listItems or iterateItems.');
    }

    /**
     * Accepts what Crawlee's `Dataset.pushData` sends: JSON strings of an item or an array of items, or the objects.
     */
    async pushItems(items: Data | Data[] | string | string[]): Promise<void> {
        this.appendItems(normalizeItems(items));
    }

    /** Appends the items in one transaction, or inside the caller's (outcomes.ts commits items with their request). */
    appendItems(items: readonly Dictionary[]): void {
        if (items.length === 0) return;
        this.st.transaction.immediate(() => {
            const row = this.datasets.require(this.idOrName);
            let count = row.item_count;
            for (const item of items) this.st.insert.run(row.seq, ++count, JSON.stringify(item));
            const now = Date.now();
            this.st.setCount.run(count, now, now, row.seq);
        });
    }

    /**
     * Removes the items `select` picks and renumbers the rest, so idx stays 1..n in push order; in
     * one transaction, or inside the caller's (re-queueing dead-letter entries, store/deadLetterStore.ts).
     * Returns the removed items in order. Reads every item once, a batch at a time; items before the
     * first removed one keep their idx, each one after it moves down by the number removed before it.
     */
    removeItems(select: (item: Data) => boolean, batchSize = 1000): Data[] {
        return this.st.transaction.immediate(() => {
            const row = this.datasets.require(this.idOrName);
            const removed: Data[] = [];
            for (let cursor = 0; ; ) {
                const rows = this.st.after.all(row.seq, cursor, batchSize);
                for (const { idx, json } of rows) {
                    const item = JSON.parse(json) as Data;
                    if (select(item)) {
                        this.st.deleteItem.run(row.seq, idx);
                        removed.push(item);
                    } else if (removed.length > 0) {
                        // Going up the index, the slot below is free: its item was removed or moved down already.
                        this.st.moveItem.run(idx - removed.length, row.seq, idx);
                    }
                }
                // Moved items sit below the cursor now, so the next batch starts with unread ones.
                const last = rows.at(-1);
                if (!last || rows.length < batchSize) break;
                cursor = last.idx;
            }
            if (removed.length > 0) {
                const now = Date.now();
                this.st.setCount.run(row.item_count - removed.length, now, now, row.seq);
            }
            return removed;
        }) as Data[];
    }

    listItems(options: DatasetClientListOptions = {}): AsyncIterable<Data> & Promise<PaginatedList<Data>> {
        return this.listing(options, (_idx, item) => item);
    }

    /** Entries are `[index, item]`, the index 0-based from the start of the dataset. */
    listEntries(
        options: DatasetClientListOptions = {},
    ): AsyncIterable<[number, Data]> & Promise<PaginatedList<[number, Data]>> {
        return this.listing(options, (idx, item): [number, Data] => [idx - 1, item]);
    }

    private listing<T>(options: DatasetClientListOptions, shape: (idx: number, item: Data) => T): PageListing<T> {
        const { offset = 0, limit, desc = false } = options;
        const readPage = (): PaginatedList<T> => {
            const row = this.datasets.require(this.idOrName);
            const items: T[] = [];
            for (const [idx, item] of readRows(this.st, row, {
                offset,
                limit: limit ?? NO_LIMIT,
                desc,
                batchSize: NO_LIMIT,
            })) {
                items.push(shape(idx, item as Data));
            }
            return { total: row.item_count, count: items.length, offset, limit: limit ?? NO_LIMIT, desc, items };
        };
        const iterate = async function* (this: SqliteDatasetClient<Data>) {
            const row = this.datasets.require(this.idOrName);
            for (const [idx, item] of readRows(this.st, row, { offset, limit, desc })) yield shape(idx, item as Data);
        };
        return new PageListing(readPage, () => iterate.call(this));
    }
}

export class SqliteDatasetCollectionClient implements DatasetCollectionClient {
    constructor(private readonly db: SqliteDb) {}

    async list() {
        const items = StorageTable.of<DatasetRow>(this.db, 'datasets').list().map(toDatasetInfo);
        return { total: items.length, count: items.length, offset: 0, limit: items.length, desc: false, items };
    }

    async getOrCreate(name?: string): Promise<DatasetCollectionData> {
        return toDatasetInfo(StorageTable.of<DatasetRow>(this.db, 'datasets').getOrCreate(name));
    }
}

/**
 * Every item of a dataset (by id or name), read `batchSize` at a time: memory stays flat however
 * large the dataset, and no read transaction is held between batches, so a crawl can keep writing
 * while an export runs.
 */
export async function* iterateItems<T extends Dictionary = Dictionary>(
    db: SqliteDb,
    datasetIdOrName: string,
    options: IterateItemsOptions = {},
): AsyncGenerator<T> {
    const row = StorageTable.of<DatasetRow>(db, 'datasets').require(datasetIdOrName);
    for (const [, item] of readRows(statements(db), row, options)) yield item as T;
}

/**
 * Items as `[idx, item]`, by keyset pagination on idx: each batch is a range scan starting after the
 * last idx seen, so batch k costs the same as batch 1 (OFFSET would re-walk every skipped row).
 */
function* readRows(
    st: ReturnType<typeof prepare>,
    row: DatasetRow,
    { offset = 0, limit = Infinity, desc = false, batchSize = 1000 }: IterateItemsOptions,
): Generator<[number, Dictionary]> {
    // idx runs 1..item_count without gaps, so an offset is a position: no rows are skipped by scanning.
    let cursor = desc ? row.item_count - offset + 1 : offset;
    let remaining = limit;
    while (remaining > 0) {
        const want = Math.min(batchSize, remaining);
        const rows = desc ? st.before.all(row.seq, cursor, want) : st.after.all(row.seq, cursor, want);
        for (const { idx, json } of rows) yield [idx, JSON.parse(json) as Dictionary];
        const last = rows.at(-1);
        if (!last || rows.length < want) return;
        cursor = last.idx;
        remaining -= rows.length;
    }
}

function toDatasetInfo(row: DatasetRow): DatasetInfo {
    return { ...storageInfo(row), itemCount: row.item_count };
}

/** Items as objects, the way memory-storage accepts them: each must be a JSON object, not an array. */
function normalizeItems(items: unknown): Dictionary[] {
    const parsed = typeof items === 'string' ? (JSON.parse(items) as unknown) : items;
    const list = Array.isArray(parsed) ? parsed : [parsed];
    return list.map((entry: unknown) => {
        const item = typeof entry === 'string' ? (JSON.parse(entry) as unknown) : entry;
        if (typeof item !== 'object' || item === null || Array.isArray(item)) {
            throw new Error(`Each dataset item must be a JSON object. Received: ${JSON.stringify(item)}`);
        }
        return item as Dictionary;
    });
}
