/**
 * The page history (store/pageHistory.ts) in PostgreSQL, shared by a fleet's workers: written by
 * the sink in the transaction that commits each outcome (sink.ts, `writePageRecords`), read by
 * every worker as it seeds a recrawl, and carried over at its end by whichever worker gets there
 * (the rows are taken with SKIP LOCKED and marked this run's, so each page is carried once).
 */
import type pg from 'pg';
import {
    type KnownPage,
    type PageHistory,
    type PageRecord,
    type Removal,
    type RemovedItem,
    removedItem,
    type SeriesRun,
} from '../pageHistory.js';
import type { RevisitBounds } from '../../vocabulary/knownPage.js';
import type { StoredItem } from '../records.js';
import { jsonb, type PgDatabase } from './database.js';
import { insertRecords, retryTransient } from './sink.js';

/** Pages carried per transaction at the end of a recrawl. */
const CARRY_BATCH = 500;

/** Whether a page is due at $2, its next due time kept within this run's $3 (min) and $4 (max) (revisitPolicy.ts). */
const DUE = `(navigation OR ((next_due_at <= $2 OR last_checked_at + $4 <= $2) AND last_checked_at + $3 <= $2))`;

/** A page record with the request key its outcome was committed under. */
export interface KeyedPageRecord {
    requestKey: string;
    record: PageRecord;
}

export class PgPageHistory implements PageHistory {
    private readonly table: string;

    constructor(
        private readonly db: PgDatabase,
        private readonly site: string,
    ) {
        this.table = db.table('page_history');
    }

    async dueKeys(now: number, bounds: Required<RevisitBounds>): Promise<string[]> {
        return this.keys(
            `${DUE} ORDER BY navigation DESC, rate IS NOT NULL, rate * ($2 - last_checked_at) DESC, seq`,
            now,
            bounds,
        );
    }

    async notDueKeys(now: number, bounds: Required<RevisitBounds>): Promise<string[]> {
        return this.keys(`NOT ${DUE}`, now, bounds);
    }

    async pages(keys: readonly string[]): Promise<KnownPage[]> {
        const { rows } = await retryTransient(() =>
            this.db.query<{ key: string; page: KnownPage }>(
                `SELECT key, page FROM ${this.table} WHERE site = $1 AND key = ANY($2::text[])`,
                [this.site, keys],
            ),
        );
        const byKey = new Map(rows.map((row) => [row.key, row.page]));
        return keys.flatMap((key) => byKey.get(key) ?? []);
    }

    async count(): Promise<number> {
        const { rows } = await retryTransient(() =>
            this.db.query<{ n: string }>(
                `SELECT count(*) AS n FROM ${this.table} WHERE site = $1 AND removed_run IS NULL`,
                [this.site],
            ),
        );
        return Number(rows[0]?.n ?? 0);
    }

    async removedKeys(): Promise<string[]> {
        const { rows } = await retryTransient(() =>
            this.db.query<{ key: string }>(
                `SELECT key FROM ${this.table} WHERE site = $1 AND removed_run IS NOT NULL`,
                [this.site],
            ),
        );
        return rows.map((row) => row.key);
    }

    async settledAny(run: number): Promise<boolean> {
        const { rows } = await retryTransient(() =>
            this.db.query(`SELECT 1 FROM ${this.table} WHERE site = $1 AND run = $2 LIMIT 1`, [this.site, run]),
        );
        return rows.length > 0;
    }

    async canonicalClaims(): Promise<{ key: string; canonical: string }[]> {
        const { rows } = await retryTransient(() =>
            this.db.query<{ key: string; canonical: string }>(
                `SELECT key, page->>'canonical' AS canonical FROM ${this.table}
                 WHERE site = $1 AND removed_run IS NULL AND page->>'canonical' IS NOT NULL`,
                [this.site],
            ),
        );
        return rows;
    }

    async items(key: string): Promise<readonly StoredItem[] | undefined> {
        const { rows } = await retryTransient(() =>
            // A page this run settled already (a job another worker lost, done again) is compared with what
            // it was before this run.
            this.db.query<{ items: StoredItem[] }>(
                `SELECT CASE WHEN h.run >= r.run THEN h.prev_items ELSE h.items END AS items
                 FROM ${this.table} h JOIN ${this.db.table('site_runs')} r ON r.site = h.site
                 WHERE h.site = $1 AND h.key = $2`,
                [this.site, key],
            ),
        );
        return rows[0]?.items;
    }

    async carryUnsettled(run: number): Promise<Record<string, number>> {
        const carried: Record<string, number> = {};
        for (;;) {
            const rows = await retryTransient(() =>
                this.db.transaction(async (client) => {
                    const { rows } = await client.query<{ page: KnownPage; items: StoredItem[] }>(
                        `UPDATE ${this.table} SET run = $2 WHERE site = $1 AND key IN (
                             SELECT key FROM ${this.table} WHERE site = $1 AND removed_run IS NULL AND run < $2
                             LIMIT ${CARRY_BATCH} FOR UPDATE SKIP LOCKED)
                         RETURNING page, items`,
                        [this.site, run],
                    );
                    await insertUnchanged(
                        client,
                        this.db,
                        this.site,
                        rows.map((row) => [row.page.url, row.items]),
                    );
                    return rows;
                }),
            );
            if (rows.length === 0) return carried;
            for (const { page, items } of rows) {
                const label = page.label ?? '(none)';
                carried[label] = (carried[label] ?? 0) + items.length;
            }
        }
    }

    /** The removed pages are a run's few: read in one query. */
    async *removed(run: number): AsyncGenerator<RemovedItem> {
        const { rows } = await retryTransient(() =>
            this.db.query<{ items: StoredItem[]; removal: Removal }>(
                `SELECT items, removal FROM ${this.table} WHERE site = $1 AND removed_run = $2 ORDER BY seq`,
                [this.site, run],
            ),
        );
        for (const { items, removal } of rows) for (const item of items) yield removedItem(item, removal);
    }

    /** The site's latest run, if it has had one. */
    async series(): Promise<SeriesRun | undefined> {
        const { rows } = await this.db.query<SeriesRun>(
            `SELECT run, mode FROM ${this.db.table('site_runs')} WHERE site = $1`,
            [this.site],
        );
        return rows[0];
    }

    async startRun(series: SeriesRun): Promise<void> {
        await this.db.query(
            `INSERT INTO ${this.db.table('site_runs')} (site, run, mode) VALUES ($1, $2, $3)
             ON CONFLICT (site) DO UPDATE SET run = EXCLUDED.run, mode = EXCLUDED.mode`,
            [this.site, series.run, series.mode],
        );
    }

    private async keys(condition: string, now: number, bounds: Required<RevisitBounds>): Promise<string[]> {
        const { rows } = await retryTransient(() =>
            this.db.query<{ key: string }>(
                `SELECT key FROM ${this.table} WHERE site = $1 AND removed_run IS NULL AND ${condition}`,
                [this.site, now, bounds.revisitMin, bounds.revisitMax],
            ),
        );
        return rows.map((row) => row.key);
    }
}

/** Writes what a group of outcomes found of their pages, in the group's transaction (sink.ts). */
export async function writePageRecords(
    client: pg.PoolClient,
    db: PgDatabase,
    site: string,
    run: number,
    records: readonly KeyedPageRecord[],
): Promise<void> {
    const table = db.table('page_history');
    const fetched = records.flatMap(({ record }) => (record.kind === 'fetched' ? [record] : []));
    if (fetched.length > 0)
        await client.query(
            `INSERT INTO ${table} AS h (site, key, navigation, page, items, rate, last_checked_at, next_due_at, run)
             SELECT $1, * FROM unnest($2::text[], $3::boolean[], $4::json[], $5::json[], $6::float8[], $7::bigint[],
                 $8::bigint[], $9::int[])
             ON CONFLICT (site, key) DO UPDATE SET navigation = EXCLUDED.navigation, page = EXCLUDED.page,
                 prev_items = CASE WHEN h.run < EXCLUDED.run THEN h.items ELSE h.prev_items END,
                 items = EXCLUDED.items, rate = EXCLUDED.rate, last_checked_at = EXCLUDED.last_checked_at,
                 next_due_at = EXCLUDED.next_due_at, run = EXCLUDED.run, removed_run = NULL, removal = NULL`,
            [
                site,
                fetched.map((r) => r.page.key),
                fetched.map((r) => r.page.navigation),
                fetched.map((r) => jsonb(r.page)),
                fetched.map((r) => jsonb(r.items)),
                fetched.map((r) => r.schedule.rate ?? null),
                fetched.map((r) => r.page.lastCheckedAt),
                fetched.map((r) => r.schedule.nextDueAt),
                fetched.map(() => run),
            ],
        );
    const unchanged = records.flatMap(({ requestKey, record }) =>
        record.kind === 'unchanged' ? [{ requestKey, record }] : [],
    );
    if (unchanged.length > 0) {
        const { rows } = await client.query<{ key: string; items: StoredItem[] }>(
            `UPDATE ${table} AS h SET page = u.page, rate = u.rate, last_checked_at = u.checked, next_due_at = u.due,
                 prev_items = CASE WHEN h.run < $2 THEN h.items ELSE h.prev_items END, run = $2
             FROM unnest($3::text[], $4::json[], $5::float8[], $6::bigint[], $7::bigint[]) AS u(key, page, rate, checked, due)
             WHERE h.site = $1 AND h.key = u.key
             RETURNING h.key, h.items`,
            [
                site,
                run,
                unchanged.map(({ record }) => record.page.key),
                unchanged.map(({ record }) => jsonb(record.page)),
                unchanged.map(({ record }) => record.schedule.rate ?? null),
                unchanged.map(({ record }) => record.page.lastCheckedAt),
                unchanged.map(({ record }) => record.schedule.nextDueAt),
            ],
        );
        const itemsByKey = new Map(rows.map((row) => [row.key, row.items]));
        await insertUnchanged(
            client,
            db,
            site,
            unchanged.map(({ requestKey, record }) => [requestKey, itemsByKey.get(record.page.key) ?? []]),
        );
    }
    const failed = records.flatMap(({ record }) => (record.kind === 'withoutItems' ? [record.key] : []));
    if (failed.length > 0)
        await client.query(`UPDATE ${table} SET run = $2 WHERE site = $1 AND key = ANY($3::text[])`, [
            site,
            run,
            failed,
        ]);
    const removed = records.flatMap(({ record }) => (record.kind === 'removed' ? [record] : []));
    if (removed.length > 0)
        await client.query(
            `UPDATE ${table} AS h SET run = $2, removed_run = $2, removal = r.removal
             FROM unnest($3::text[], $4::json[]) AS r(key, removal)
             WHERE h.site = $1 AND h.key = r.key`,
            [site, run, removed.map((r) => r.key), removed.map((r) => jsonb(r.removal))],
        );
}

/** Stores a page's last items in this run's items, marked unchanged, under the request key given. */
async function insertUnchanged(
    client: pg.PoolClient,
    db: PgDatabase,
    site: string,
    pages: readonly (readonly [string, readonly StoredItem[]])[],
): Promise<void> {
    const rows = { keys: [] as string[], ordinals: [] as number[], json: [] as string[] };
    for (const [requestKey, items] of pages)
        items.forEach((item, ordinal) => {
            rows.keys.push(requestKey);
            rows.ordinals.push(ordinal);
            rows.json.push(jsonb({ ...item, _change: 'unchanged' }));
        });
    await insertRecords(client, db, 'items', site, rows);
}
