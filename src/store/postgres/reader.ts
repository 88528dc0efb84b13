/**
 * Reading a site's results back out of PostgreSQL (`npm run export`, reparse), in batches by keyset
 * pagination on `seq`: each query starts after the last row of the one before, found through the
 * (site, seq) index, so the millionth row costs what the first did (OFFSET would walk past every
 * row before it) and an export of a million items holds one batch in memory.
 *
 * Rows read back in the order they were first inserted, all from one snapshot (a read-only
 * REPEATABLE READ transaction): a reader that runs while workers write reads every row committed
 * before it started and none committed after, each once. Without it, a row committed after the
 * reader had passed its `seq` would be missed (sequence numbers are handed out before commit) while
 * later ones were read. The transaction holds back VACUUM's cleanup of the rows it could see until the
 * read ends. A connection lost in the middle fails the read: a new snapshot could not go on where
 * the old one stopped.
 */
import type { PgDatabase, PgTable } from './database.js';
import { retryTransient, type RetryOptions } from './sink.js';

export type PgStore = 'items' | 'quarantine' | 'deadLetter';

export interface ReadOptions extends RetryOptions {
    /** Rows read per query. Default: 1000. */
    batchSize?: number;
}

const SOURCES: Record<PgStore, { table: PgTable; column: string }> = {
    items: { table: 'items', column: 'item' },
    quarantine: { table: 'quarantine', column: 'entry' },
    deadLetter: { table: 'dead_letter', column: 'entry' },
};

/** The stored JSON objects of one of the site's stores, in order. */
export async function* iterateItems(
    db: PgDatabase,
    site: string,
    store: PgStore,
    options: ReadOptions = {},
): AsyncGenerator<Record<string, unknown>> {
    const { table, column } = SOURCES[store];
    for await (const rows of keysetBatches<{ value: Record<string, unknown> }>(
        db,
        table,
        `${column} AS value`,
        site,
        options,
    )) {
        for (const row of rows) yield row.value;
    }
}

/**
 * The site's rows of `table` in `seq` order, `batchSize` at a time, from one snapshot; `columns` is
 * the SELECT list besides `seq`. A refused connection at the start is retried (RetryOptions).
 */
export async function* keysetBatches<R>(
    db: PgDatabase,
    table: PgTable,
    columns: string,
    site: string,
    options: ReadOptions = {},
): AsyncGenerator<R[]> {
    const batchSize = options.batchSize ?? 1000;
    const text = `SELECT seq, ${columns} FROM ${db.table(table)} WHERE site = $1 AND seq > $2 ORDER BY seq LIMIT $3`;
    const snapshot = await retryTransient(() => db.readSnapshot(), options);
    try {
        // seq is a bigint: pg hands it over as a string, and it goes back as one, exact past 2^53.
        for (let after = '0'; ; ) {
            const { rows } = await snapshot.query<R & { seq: string }>(text, [site, after, batchSize]);
            if (rows.length > 0) yield rows;
            const last = rows.at(-1);
            if (!last || rows.length < batchSize) return;
            after = last.seq;
        }
    } finally {
        await snapshot.end();
    }
}
