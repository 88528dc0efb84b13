/**
 * The page history (store/pageHistory.ts) in the storage dir's SQLite file, beside the queues and
 * datasets, so that a page's history is written in the transaction that stores its outcome
 * (outcomes.ts) and a killed recrawl resumes with exactly what it committed.
 */
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
import type { SqliteDatasetClient } from './datasetClient.js';
import type { SqliteDb } from './database.js';

/** Keys per query when pages are read by key. */
const KEYS_PER_QUERY = 500;
/** Pages carried per transaction at the end of a recrawl. */
const CARRY_BATCH = 1000;

/** Whether a page is due at @now, its next due time kept within this run's @min and @max (revisitPolicy.ts). */
const DUE = `(navigation = 1 OR ((next_due_at <= @now OR last_checked_at + @max <= @now) AND last_checked_at + @min <= @now))`;

interface DueQuery {
    site: string;
    now: number;
    min: number;
    max: number;
}

function prepare(db: SqliteDb) {
    const live = 'site = ? AND removed_run IS NULL';
    return {
        dueKeys: db
            .prepare<[DueQuery], string>(
                `SELECT key FROM page_history WHERE site = @site AND removed_run IS NULL AND ${DUE}
                 ORDER BY navigation DESC, rate IS NOT NULL, rate * (@now - last_checked_at) DESC, rowid`,
            )
            .pluck(),
        notDueKeys: db
            .prepare<[DueQuery], string>(
                `SELECT key FROM page_history WHERE site = @site AND removed_run IS NULL AND NOT ${DUE}`,
            )
            .pluck(),
        count: db.prepare<[string], number>(`SELECT count(*) FROM page_history WHERE ${live}`).pluck(),
        removedKeys: db
            .prepare<[string], string>('SELECT key FROM page_history WHERE site = ? AND removed_run IS NOT NULL')
            .pluck(),
        settledAny: db
            .prepare<[string, number], number>('SELECT EXISTS (SELECT 1 FROM page_history WHERE site = ? AND run = ?)')
            .pluck(),
        claims: db.prepare<[string], { key: string; canonical: string }>(
            `SELECT key, json_extract(page, '$.canonical') AS canonical FROM page_history
             WHERE ${live} AND json_extract(page, '$.canonical') IS NOT NULL`,
        ),
        // A page this run settled already (a request done again) is compared with what it was before this run.
        items: db
            .prepare<[string, string, string], string>(
                `SELECT CASE WHEN run >= (SELECT run FROM site_runs WHERE site = ?) THEN prev_items ELSE items END
                 FROM page_history WHERE site = ? AND key = ?`,
            )
            .pluck(),
        current: db
            .prepare<[string, string], string>('SELECT items FROM page_history WHERE site = ? AND key = ?')
            .pluck(),
        upsert: db.prepare<[string, string, number, string, string, number | null, number, number, number]>(
            `INSERT INTO page_history (site, key, navigation, page, items, rate, last_checked_at, next_due_at, run)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (site, key) DO UPDATE SET navigation = excluded.navigation, page = excluded.page,
                 prev_items = CASE WHEN page_history.run < excluded.run THEN page_history.items ELSE prev_items END,
                 items = excluded.items, rate = excluded.rate, last_checked_at = excluded.last_checked_at,
                 next_due_at = excluded.next_due_at, run = excluded.run, removed_run = NULL, removal = NULL`,
        ),
        checked: db.prepare<[string, number | null, number, number, number, number, string, string]>(
            `UPDATE page_history SET page = ?, rate = ?, last_checked_at = ?, next_due_at = ?,
                 prev_items = CASE WHEN run < ? THEN items ELSE prev_items END, run = ?
             WHERE site = ? AND key = ?`,
        ),
        remove: db.prepare<[number, number, string, string, string]>(
            'UPDATE page_history SET run = ?, removed_run = ?, removal = ? WHERE site = ? AND key = ?',
        ),
        unsettled: db.prepare<[string, number], { key: string; page: string; items: string }>(
            `SELECT key, page, items FROM page_history WHERE ${live} AND run < ? LIMIT ${CARRY_BATCH}`,
        ),
        settle: db.prepare<[number, string, string]>('UPDATE page_history SET run = ? WHERE site = ? AND key = ?'),
        removed: db.prepare<[string, number], { items: string; removal: string }>(
            'SELECT items, removal FROM page_history WHERE site = ? AND removed_run = ? ORDER BY rowid',
        ),
        series: db.prepare<[string], SeriesRun>('SELECT run, mode FROM site_runs WHERE site = ?'),
        setSeries: db.prepare<[string, number, string]>(
            `INSERT INTO site_runs (site, run, mode) VALUES (?, ?, ?)
             ON CONFLICT (site) DO UPDATE SET run = excluded.run, mode = excluded.mode`,
        ),
        clear: db.prepare<[string]>('DELETE FROM page_history WHERE site = ?'),
        clearSeries: db.prepare<[string]>('DELETE FROM site_runs WHERE site = ?'),
    };
}

export class SqlitePageHistory implements PageHistory {
    private readonly st;

    constructor(
        private readonly db: SqliteDb,
        private readonly site: string,
        /** The dataset this run stores its items in: carried items go there. */
        private readonly dataset: SqliteDatasetClient,
    ) {
        this.st = prepare(db);
    }

    async dueKeys(now: number, bounds: Required<RevisitBounds>): Promise<string[]> {
        return this.st.dueKeys.all(this.dueQuery(now, bounds));
    }

    async notDueKeys(now: number, bounds: Required<RevisitBounds>): Promise<string[]> {
        return this.st.notDueKeys.all(this.dueQuery(now, bounds));
    }

    private dueQuery(now: number, { revisitMin, revisitMax }: Required<RevisitBounds>): DueQuery {
        return { site: this.site, now, min: revisitMin, max: revisitMax };
    }

    async pages(keys: readonly string[]): Promise<KnownPage[]> {
        const pages: KnownPage[] = [];
        for (let start = 0; start < keys.length; start += KEYS_PER_QUERY) {
            const batch = keys.slice(start, start + KEYS_PER_QUERY);
            const rows = this.db
                .prepare(
                    `SELECT key, page FROM page_history WHERE site = ? AND key IN (${batch.map(() => '?').join(',')})`,
                )
                .all(this.site, ...batch) as { key: string; page: string }[];
            const byKey = new Map(rows.map((row) => [row.key, JSON.parse(row.page) as KnownPage]));
            for (const key of batch) {
                const page = byKey.get(key);
                if (page) pages.push(page);
            }
        }
        return pages;
    }

    async count(): Promise<number> {
        return this.st.count.get(this.site) ?? 0;
    }

    async removedKeys(): Promise<string[]> {
        return this.st.removedKeys.all(this.site);
    }

    async settledAny(run: number): Promise<boolean> {
        return this.st.settledAny.get(this.site, run) === 1;
    }

    async canonicalClaims(): Promise<{ key: string; canonical: string }[]> {
        return this.st.claims.all(this.site);
    }

    async items(key: string): Promise<readonly StoredItem[] | undefined> {
        const json = this.st.items.get(this.site, this.site, key) ?? undefined;
        return json === undefined ? undefined : (JSON.parse(json) as StoredItem[]);
    }

    /** Writes what an outcome found of its page; called inside the outcome's transaction. */
    record(record: PageRecord, run: number): void {
        if (record.kind === 'withoutItems') {
            this.st.settle.run(run, this.site, record.key);
            return;
        }
        if (record.kind === 'removed') {
            this.st.remove.run(run, run, JSON.stringify(record.removal), this.site, record.key);
            return;
        }
        const { page, schedule } = record;
        if (record.kind === 'unchanged') {
            this.st.checked.run(
                JSON.stringify(page),
                schedule.rate ?? null,
                page.lastCheckedAt,
                schedule.nextDueAt,
                run,
                run,
                this.site,
                page.key,
            );
            this.carry(this.st.current.get(this.site, page.key));
            return;
        }
        this.st.upsert.run(
            this.site,
            page.key,
            page.navigation ? 1 : 0,
            JSON.stringify(page),
            JSON.stringify(record.items),
            schedule.rate ?? null,
            page.lastCheckedAt,
            schedule.nextDueAt,
            run,
        );
    }

    /** A batch at a time, each in a transaction of its own: a recrawl with a small budget carries most of a site. */
    async carryUnsettled(run: number): Promise<Record<string, number>> {
        const carried: Record<string, number> = {};
        const carryBatch = this.db.transaction(() => {
            const rows = this.st.unsettled.all(this.site, run);
            for (const row of rows) {
                const label = (JSON.parse(row.page) as KnownPage).label ?? '(none)';
                carried[label] = (carried[label] ?? 0) + this.carry(row.items);
                this.st.settle.run(run, this.site, row.key);
            }
            return rows.length;
        });
        while (carryBatch.immediate() > 0) await new Promise((resolve) => setImmediate(resolve));
        return carried;
    }

    async *removed(run: number): AsyncGenerator<RemovedItem> {
        for (const row of this.st.removed.all(this.site, run)) {
            const removal = JSON.parse(row.removal) as Removal;
            for (const item of JSON.parse(row.items) as StoredItem[]) yield removedItem(item, removal);
        }
    }

    /** The site's latest run, if it has had one. */
    series(): SeriesRun | undefined {
        return this.st.series.get(this.site);
    }

    startRun(series: SeriesRun): void {
        this.st.setSeries.run(this.site, series.run, series.mode);
    }

    /** Forgets the site's history and series (`--fresh`). */
    clear(): void {
        this.st.clear.run(this.site);
        this.st.clearSeries.run(this.site);
    }

    /** Stores the page's last items in this run's dataset, marked unchanged; returns how many. */
    private carry(json: string | undefined): number {
        const items = json === undefined ? [] : (JSON.parse(json) as StoredItem[]);
        this.dataset.appendItems(items.map((item) => ({ ...item, _change: 'unchanged' })));
        return items.length;
    }
}
