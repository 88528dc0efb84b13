/**
 * Where requests end in distributed mode: their items and quarantine entries, or their dead-letter
 * entry, in PostgreSQL, shared by every worker of a site.
 *
 * A group of outcomes goes in one transaction, each table in one statement over arrays
 * (`unnest`): a commit costs more than its rows, and one INSERT per row would make a group of 50
 * pages hundreds of round trips. Writes are idempotent: a page stored twice (a worker lost its job
 * lock and another re-did the page) is kept once (`ON CONFLICT DO NOTHING` on request key and
 * position). That is also what makes retrying safe: a commit whose connection broke after COMMIT
 * was sent may or may not have landed, and doing it again changes nothing.
 *
 * Every request ends in one place: a request whose page was judged (it has items or quarantine
 * entries) leaves dead-letter, and a dead-letter entry for one is not stored — as reparse does.
 * A request dead-lettered again keeps its latest entry. Two commits for one request (its job's
 * lease expired under one worker while another finished it) take turns: each transaction first
 * takes an advisory lock per request key, so the second sees what the first stored and keeps to
 * one table. Without it, each transaction's check misses the other's uncommitted rows, and the
 * request can end in both items and dead-letter.
 *
 * An outcome from a fleet's job carries a fence (OutcomeFence): which take of which job it is. The
 * latest take wins, checked in the same transaction under the same lock: an outcome of an earlier
 * take than the one stored (a worker that lost its lease and came back) is refused, and one of a
 * later take replaces what an earlier take stored, so a request never holds a mix of two takes'
 * items. Outcomes with no fence (reparse, the embedded mode's tools) keep the rules above.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import type { DeadLetterEntry, FailureClass } from '../../vocabulary/failure.js';
import type { OutcomeFence } from '../../vocabulary/queue.js';
import type { PageRecord } from '../pageHistory.js';
import { PREVIOUS } from '../siteResults.js';
import { type QuarantineEntry, storedDeadLetter, type StoredItem } from '../records.js';
import { isConnectionError, jsonb, onlyRow, type PgDatabase, type PgTable } from './database.js';

/** What became of one request, by the key its job had. */
export interface PgOutcome {
    requestKey: string;
    items?: readonly StoredItem[];
    quarantine?: readonly QuarantineEntry[];
    deadLetter?: DeadLetterEntry;
    /** What the page's history learns: written by the commit's `alsoWrite` (postgres/pageHistory.ts). */
    page?: PageRecord;
    fence?: OutcomeFence;
}

/** More that a commit writes in its transaction, for the outcomes that were not refused. */
export type AlsoWrite = (client: pg.PoolClient, committed: readonly PgOutcome[]) => Promise<void>;

export interface RetryOptions {
    /**
     * How long (ms) a write keeps retrying a connection that broke or was refused (a restart, a
     * failover) before it fails. Default: 30000 — a PostgreSQL restart takes a few seconds.
     */
    retryForMs?: number;
    /** The first wait (ms) between tries; it doubles with each, up to 5 s. Default: 250. */
    retryDelayMs?: number;
}

export interface SiteCounts {
    items: number;
    quarantine: number;
    deadLetter: number;
    rawPages: number;
}

export interface DeadLetterReason {
    reason: string;
    failureClass: FailureClass;
    count: number;
}

const MAX_RETRY_DELAY_MS = 5000;
/** Deadlock and serialization failure: the transaction was rolled back whole, so it can simply run again. */
const RETRYABLE_STATES = new Set(['40P01', '40001']);

export function isRetryable(error: unknown): boolean {
    return isConnectionError(error) || RETRYABLE_STATES.has(String((error as { code?: unknown })?.code));
}

/**
 * Runs `work`, again after a pause while it fails with a lost or refused connection, until
 * `retryForMs` has passed. `work` must be safe to repeat. The pauses are jittered, so workers that
 * all lost the server at once do not all come back in the same millisecond.
 */
export async function retryTransient<T>(work: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
    const retryForMs = options.retryForMs ?? 30_000;
    const started = Date.now();
    for (let delay = options.retryDelayMs ?? 250; ; delay = Math.min(delay * 2, MAX_RETRY_DELAY_MS)) {
        try {
            return await work();
        } catch (error) {
            const pause = delay * (0.5 + Math.random() / 2);
            if (!isRetryable(error) || Date.now() - started + pause > retryForMs) throw error;
            await sleep(pause);
        }
    }
}

/** Rows of items or quarantine entries, one array per column. */
export interface RecordRows {
    keys: string[];
    ordinals: number[];
    json: string[];
}

/** Something to run a statement on: the pool, or one transaction's connection. */
export interface Queryable {
    query(text: string, values?: unknown[]): Promise<unknown>;
}

const RECORD_COLUMN = { items: 'item', quarantine: 'entry' } as const;

/**
 * Inserts items or quarantine entries of `site` in one statement; a row whose request key and
 * position are stored already is kept as it was, so the same rows inserted twice are stored once.
 */
export async function insertRecords(
    client: Queryable,
    db: PgDatabase,
    table: 'items' | 'quarantine',
    site: string,
    rows: RecordRows,
): Promise<void> {
    if (rows.keys.length === 0) return;
    await client.query(
        `INSERT INTO ${db.table(table)} (site, request_key, ordinal, ${RECORD_COLUMN[table]})
         SELECT $1, r.key, r.ordinal, r.json FROM unnest($2::text[], $3::int[], $4::json[]) AS r(key, ordinal, json)
         ON CONFLICT DO NOTHING`,
        [site, rows.keys, rows.ordinals, rows.json],
    );
}

/**
 * Dead-letter entries by request key as the columns of `dead_letter`, one array each: every write
 * of the table goes through here, so this is where an entry loses its secrets (storedDeadLetter).
 */
export function deadLetterColumns(entries: readonly (readonly [string, DeadLetterEntry])[]) {
    return {
        keys: entries.map(([key]) => key),
        json: entries.map(([, entry]) => jsonb(storedDeadLetter(entry))),
        reasons: entries.map(([, entry]) => entry.reason),
        classes: entries.map(([, entry]) => entry.failureClass),
        times: entries.map(([, entry]) => entry.deadLetteredAt),
    };
}

/** Every table holding rows of a site, as purge() empties them. */
const PURGED = [
    'items',
    'quarantine',
    'dead_letter',
    'raw_index',
    'backlog',
    'outcome_fences',
    'page_history',
    'site_runs',
] as const;

/** Negative when `a` is an earlier take than `b`, positive when later, 0 when the same. */
function compareFences(a: OutcomeFence, b: OutcomeFence): number {
    return a.jobCreatedAt - b.jobCreatedAt || a.take - b.take;
}

export class PgSink {
    constructor(
        readonly db: PgDatabase,
        private readonly options: RetryOptions = {},
    ) {}

    /**
     * Stores a group of outcomes in one transaction: all of them or, when it fails, none. Retries a
     * lost or refused connection (see RetryOptions); any other failure rejects at once. Resolves to
     * the request keys whose outcome was refused, an earlier take's than the one stored.
     */
    async commit(site: string, group: readonly PgOutcome[], alsoWrite?: AlsoWrite): Promise<Set<string>> {
        // A page that stores nothing (a duplicate) takes no part: nothing of it can clash.
        const outcomes = group.filter(
            ({ items, quarantine, deadLetter, page }) => items?.length || quarantine?.length || deadLetter || page,
        );
        if (outcomes.length === 0) return new Set();
        const items = this.db.table('items');
        const quarantine = this.db.table('quarantine');
        const deadLetter = this.db.table('dead_letter');
        return retryTransient(
            () =>
                this.db.transaction(async (client) => {
                    await lockRequests(
                        client,
                        site,
                        outcomes.map((outcome) => outcome.requestKey),
                    );
                    const refused = await this.fence(client, site, outcomes);
                    const committed = outcomes.filter((outcome) => !refused.has(outcome.requestKey));
                    const rows = rowsOf(committed);
                    await alsoWrite?.(client, committed);
                    await insertRecords(client, this.db, 'items', site, rows.items);
                    await insertRecords(client, this.db, 'quarantine', site, rows.quarantine);
                    if (rows.judged.length > 0) {
                        await client.query(
                            `DELETE FROM ${deadLetter} WHERE site = $1 AND request_key = ANY($2::text[])`,
                            [site, rows.judged],
                        );
                    }
                    if (rows.dead.keys.length > 0) {
                        // Not for a request judged already, in this group or before; the latest entry wins.
                        await client.query(
                            `INSERT INTO ${deadLetter} AS stored (site, request_key, entry, reason, failure_class, \
dead_lettered_at)
                             SELECT $1, d.key, d.json, d.reason, d.class, d.at
                             FROM unnest($2::text[], $3::json[], $4::text[], $5::text[], $6::timestamptz[]) AS d(key, \
json, reason, class, at)
                             WHERE NOT EXISTS (SELECT 1 FROM ${items} i WHERE i.site = $1 AND i.request_key = d.key)
                               AND NOT EXISTS (SELECT 1 FROM ${quarantine} q WHERE q.site = $1 AND q.request_key = \
d.key)
                             ON CONFLICT (site, request_key) DO UPDATE SET entry = EXCLUDED.entry, reason = \
EXCLUDED.reason,
                                 failure_class = EXCLUDED.failure_class, dead_lettered_at = EXCLUDED.dead_lettered_at
                             WHERE stored.dead_lettered_at <= EXCLUDED.dead_lettered_at`,
                            [
                                site,
                                rows.dead.keys,
                                rows.dead.json,
                                rows.dead.reasons,
                                rows.dead.classes,
                                rows.dead.times,
                            ],
                        );
                    }
                    return refused;
                }),
            this.options,
        );
    }

    /**
     * Checks the fenced outcomes against the takes stored for their requests (their locks held):
     * returns the keys of those an earlier take's than the stored one, removes what an earlier take
     * stored for those of a later one, and records the take of each that goes on.
     */
    private async fence(client: pg.PoolClient, site: string, outcomes: readonly PgOutcome[]): Promise<Set<string>> {
        const fenced = new Map<string, OutcomeFence>();
        for (const { requestKey, fence } of outcomes) if (fence) fenced.set(requestKey, fence);
        if (fenced.size === 0) return new Set();
        const fences = this.db.table('outcome_fences');
        const { rows: stored } = await client.query<{ key: string; created: string; take: number }>(
            `SELECT request_key AS key, job_created_at AS created, take FROM ${fences}
             WHERE site = $1 AND request_key = ANY($2::text[])`,
            [site, [...fenced.keys()]],
        );
        const refused = new Set<string>();
        const superseded: string[] = [];
        for (const { key, created, take } of stored) {
            const ours = fenced.get(key);
            const order = ours ? compareFences(ours, { jobCreatedAt: Number(created), take }) : 0;
            if (order < 0) refused.add(key);
            else if (order > 0) superseded.push(key);
        }
        if (superseded.length > 0)
            for (const table of ['items', 'quarantine', 'dead_letter'] as const)
                await client.query(
                    `DELETE FROM ${this.db.table(table)} WHERE site = $1 AND request_key = ANY($2::text[])`,
                    [site, superseded],
                );
        const going = [...fenced].filter(([key]) => !refused.has(key));
        if (going.length > 0)
            await client.query(
                `INSERT INTO ${fences} (site, request_key, job_created_at, take)
                 SELECT $1, * FROM unnest($2::text[], $3::bigint[], $4::int[])
                 ON CONFLICT (site, request_key)
                     DO UPDATE SET job_created_at = EXCLUDED.job_created_at, take = EXCLUDED.take`,
                [site, going.map(([key]) => key), going.map(([, f]) => f.jobCreatedAt), going.map(([, f]) => f.take)],
            );
        return refused;
    }

    /** The site's dead-letter entries counted by reason, most first. */
    async deadLetterByReason(site: string): Promise<DeadLetterReason[]> {
        const { rows } = await this.db.query<DeadLetterReason>(
            `SELECT reason, failure_class AS "failureClass", count(*)::int AS count FROM ${this.db.table('dead_letter')}
             WHERE site = $1 GROUP BY reason, failure_class ORDER BY count DESC, reason, failure_class`,
            [site],
        );
        return rows;
    }

    /** Rows of the site in each table (a count scans the site's rows: a status command, not a hot path). */
    async counts(site: string): Promise<SiteCounts> {
        const count = (table: Parameters<PgDatabase['table']>[0]) =>
            `(SELECT count(*) FROM ${this.db.table(table)} WHERE site = $1)::bigint`;
        const result = await this.db.query<Record<keyof SiteCounts, string>>(
            `SELECT ${count('items')} AS items, ${count('quarantine')} AS quarantine,
                    ${count('dead_letter')} AS "deadLetter", ${count('raw_index')} AS "rawPages"`,
            [site],
        );
        const row = onlyRow(result);
        return {
            items: Number(row.items),
            quarantine: Number(row.quarantine),
            deadLetter: Number(row.deadLetter),
            rawPages: Number(row.rawPages),
        };
    }

    /**
     * Deletes every row of the site, raw pages and page history included, and the results a recrawl
     * or a reparse kept as `<site>-previous`, in one transaction.
     */
    async purge(site: string): Promise<void> {
        await this.deleteRows([site, `${site}${PREVIOUS}`], PURGED);
    }

    /** Deletes what a finished run's frontier left of the site (its backlog and fences), for a recrawl. */
    async clearFrontier(site: string): Promise<void> {
        await this.deleteRows([site], ['backlog', 'outcome_fences']);
    }

    private async deleteRows(sites: readonly string[], tables: readonly PgTable[]): Promise<void> {
        await retryTransient(
            () =>
                this.db.transaction(async (client) => {
                    for (const table of tables) {
                        await client.query(`DELETE FROM ${this.db.table(table)} WHERE site = ANY($1::text[])`, [sites]);
                    }
                }),
            this.options,
        );
    }
}

/**
 * The group as one array per column. Rows go in request-key order: two transactions writing the
 * same requests (a re-done page) then take the same rows in the same order, and one waits for the
 * other instead of both deadlocking.
 */
function rowsOf(outcomes: readonly PgOutcome[]) {
    const items: RecordRows = { keys: [], ordinals: [], json: [] };
    const quarantine: RecordRows = { keys: [], ordinals: [], json: [] };
    const judged: string[] = [];
    // One entry per request (the last), as one statement may not update a row twice.
    const dead = new Map<string, DeadLetterEntry>();
    const sorted = [...outcomes].sort((a, b) =>
        a.requestKey < b.requestKey ? -1 : a.requestKey > b.requestKey ? 1 : 0,
    );
    for (const { requestKey, items: stored = [], quarantine: quarantined = [], deadLetter } of sorted) {
        stored.forEach((item, ordinal) => {
            items.keys.push(requestKey);
            items.ordinals.push(ordinal);
            items.json.push(jsonb(item));
        });
        quarantined.forEach((entry, ordinal) => {
            quarantine.keys.push(requestKey);
            quarantine.ordinals.push(ordinal);
            quarantine.json.push(jsonb(entry));
        });
        if (stored.length > 0 || quarantined.length > 0) judged.push(requestKey);
        if (deadLetter) dead.set(requestKey, deadLetter);
    }
    return { items, quarantine, judged, dead: deadLetterColumns([...dead]) };
}

/**
 * Takes the transaction's lock on each request of `site` (PostgreSQL advisory locks, released at
 * COMMIT or ROLLBACK), in one order for every commit so two commits never wait on each other in a
 * circle. Two keys with the same 64-bit hash share a lock, which only makes their commits take turns.
 */
async function lockRequests(client: pg.PoolClient, site: string, keys: readonly string[]): Promise<void> {
    await client.query(
        `SELECT pg_advisory_xact_lock(h)
         FROM (SELECT DISTINCT hashtextextended($1 || ' ' || k, 0) AS h FROM unnest($2::text[]) AS k ORDER BY h) AS locks`,
        [site, keys],
    );
}
