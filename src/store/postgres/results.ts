/**
 * A site's results in PostgreSQL as versions, for reparse (siteResults.ts). The next version is
 * written to the same tables under the site name `<site>-reparsed`, and promote() renames in one
 * transaction: `<site>-previous` is deleted, `<site>` becomes `<site>-previous` and
 * `<site>-reparsed` becomes `<site>`. A reader sees the old version or the new one, never a mix,
 * and a reparse that fails before the end leaves the current version as it was. Raw pages are not
 * versioned: they stay under `<site>`.
 *
 * Rows of the next version are keyed by the record's URL (an item's `_url`, an entry's `url`) and,
 * for items and quarantine, the record's position among the version's records with that URL. A
 * reparse sees the page, not the request the crawl fetched it for, so an item's key is its page's
 * canonical URL where the crawl's was the request URL (the same for most pages). A dead-letter
 * entry's `url` is its request's URL, which is the crawl's key too.
 */
import type { DeadLetterEntry } from '../../vocabulary/failure.js';
import { BatchWriter } from '../batchWriter.js';
import type { QuarantineEntry, StoredItem } from '../records.js';
import { NEXT, PREVIOUS, type SiteResults, type StoreReader, type StoreSink } from '../siteResults.js';
import { jsonb, onlyRow, type PgDatabase, type PgTable } from './database.js';
import { iterateItems, type PgStore, type ReadOptions } from './reader.js';
import { deadLetterColumns, insertRecords, retryTransient } from './sink.js';

export interface PgResultsOptions extends ReadOptions {
    /** Rows of the next version per INSERT. Default: 500. */
    writeBatchSize?: number;
}

const TABLES: Record<PgStore, PgTable> = { items: 'items', quarantine: 'quarantine', deadLetter: 'dead_letter' };

/** A record of the next version with the key and position it is stored under. */
interface Row<T> {
    key: string;
    ordinal: number;
    record: T;
}

/** The results of `site` in `db`; drops what an unfinished reparse left under `<site>-reparsed`. */
export async function pgResults(db: PgDatabase, site: string, options: PgResultsOptions = {}): Promise<SiteResults> {
    const next = `${site}${NEXT}`;
    const previous = `${site}${PREVIOUS}`;
    await retryTransient(
        () =>
            db.transaction(async (client) => {
                for (const table of Object.values(TABLES))
                    await client.query(`DELETE FROM ${db.table(table)} WHERE site = $1`, [next]);
            }),
        options,
    );
    const count = async (store: PgStore, name: string): Promise<number> => {
        const result = await retryTransient(
            () =>
                db.query<{ count: string }>(
                    `SELECT count(*) AS count FROM ${db.table(TABLES[store])} WHERE site = $1`,
                    [name],
                ),
            options,
        );
        return Number(onlyRow(result).count);
    };
    const reader = <T>(store: PgStore): StoreReader<T> => ({
        entries: () => iterateItems(db, site, store, options) as AsyncIterable<T>,
        count: () => count(store, site),
    });
    const sink = <T>(
        store: PgStore,
        keyOf: (record: T) => string,
        write: (rows: Row<T>[]) => Promise<unknown>,
    ): StoreSink<T> => {
        const ordinals = new Map<string, number>();
        // The rows' keys and positions are fixed when pushed: a batch written again (its connection
        // broke after the INSERT landed) conflicts with itself and adds nothing.
        const writer = new BatchWriter<Row<T>>({
            write: (rows) => retryTransient(() => write(rows), options).then(() => {}),
            maxBatchSize: options.writeBatchSize ?? 500,
        });
        return {
            push: (record) => {
                const key = keyOf(record);
                const ordinal = ordinals.get(key) ?? 0;
                ordinals.set(key, ordinal + 1);
                return writer.add({ key, ordinal, record });
            },
            flush: () => writer.flush(),
            count: async () => {
                await writer.flush();
                return count(store, next);
            },
            entries: async function* () {
                await writer.flush();
                yield* iterateItems(db, next, store, options) as AsyncIterable<T>;
            },
        };
    };
    const records = (table: 'items' | 'quarantine') => (rows: Row<unknown>[]) =>
        insertRecords(db, db, table, next, {
            keys: rows.map((row) => row.key),
            ordinals: rows.map((row) => row.ordinal),
            json: rows.map((row) => jsonb(row.record)),
        });
    const deadLetters = (rows: Row<DeadLetterEntry>[]) => {
        const columns = deadLetterColumns(rows.map((row) => [row.key, row.record] as const));
        return db.query(
            `INSERT INTO ${db.table('dead_letter')} (site, request_key, entry, reason, failure_class, dead_lettered_at)
             SELECT $1, * FROM unnest($2::text[], $3::json[], $4::text[], $5::text[], $6::timestamptz[])
             ON CONFLICT DO NOTHING`,
            [next, columns.keys, columns.json, columns.reasons, columns.classes, columns.times],
        );
    };

    return {
        current: {
            items: reader<StoredItem>('items'),
            quarantine: reader<QuarantineEntry>('quarantine'),
            deadLetter: reader<DeadLetterEntry>('deadLetter'),
        },
        next: {
            items: sink<StoredItem>('items', (item) => item._url, records('items')),
            quarantine: sink<QuarantineEntry>('quarantine', (entry) => entry.url, records('quarantine')),
            deadLetter: sink<DeadLetterEntry>('deadLetter', (entry) => entry.url, deadLetters),
        },
        // Not retried: unlike the writes, a promote done twice is not a promote done once (the second
        // would make the new version `-previous` and leave the site empty). One that failed either
        // landed whole or not at all; a reparse run again reads whichever is current.
        promote: () =>
            db.transaction(async (client) => {
                for (const table of Object.values(TABLES)) {
                    const name = db.table(table);
                    await client.query(`DELETE FROM ${name} WHERE site = $1`, [previous]);
                    await client.query(`UPDATE ${name} SET site = $2 WHERE site = $1`, [site, previous]);
                    await client.query(`UPDATE ${name} SET site = $2 WHERE site = $1`, [next, site]);
                }
            }),
    };
}
