/**
 * The PostgreSQL database of dragnet's distributed mode: many worker processes on many machines
 * write one site's results (sink.ts) and the index of its raw pages (indexedRawPages.ts) into one
 * schema, and one schema holds many sites (every table has a `site` column).
 *
 * The schema is the connection string's `search_path`, given as `options=-c search_path=NAME`
 * (what libpq and pg both read); else `public`. Every statement names its tables with the schema,
 * so a search_path the server or role sets otherwise does not move them.
 */
import { MIGRATIONS } from './migrations.js';
import { createHash } from 'node:crypto';
import { userInfo } from 'node:os';
import pg from 'pg';

export interface PgOptions {
    /** Connections this process keeps open at most. Default: 10. */
    maxConnections?: number;
    /** How long (ms) to wait for a connection before failing. Default: 10000. */
    connectTimeoutMs?: number;
    /**
     * Called with the error of a pooled connection that broke while idle (the server restarted, its
     * backend was terminated). The pool has dropped that connection already and opens another on
     * the next query, so there is nothing to do but say so. Default: ignored.
     */
    onIdleError?: (error: Error) => void;
}

/**
 * The tables, by their SQL names: four of results, the frontier's backlog, the outcomes' fences, and
 * the page history with its series.
 */
export type PgTable =
    | 'items'
    | 'quarantine'
    | 'dead_letter'
    | 'raw_index'
    | 'backlog'
    | 'outcome_fences'
    | 'page_history'
    | 'site_runs';

export class PgDatabase {
    readonly pool: pg.Pool;
    /** The schema the tables live in. */
    readonly schema: string;
    /** Where the server is, as `host:port`, for messages. */
    readonly address: string;

    constructor(url: string, options: PgOptions = {}) {
        this.schema = schemaOf(url);
        this.address = addressOf(url);
        this.pool = new pg.Pool({
            connectionString: withDefaultUser(url),
            max: options.maxConnections ?? 10,
            connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
        });
        // Without a listener, an idle connection's error would be an uncaught 'error' event: the process dies.
        this.pool.on('error', (error) => options.onIdleError?.(error));
    }

    /** `"schema"."table"`, quoted. */
    table(name: PgTable | 'dragnet_migrations'): string {
        return `${pg.escapeIdentifier(this.schema)}.${name}`;
    }

    query<R extends pg.QueryResultRow = pg.QueryResultRow>(
        text: string,
        values?: unknown[],
    ): Promise<pg.QueryResult<R>> {
        return this.pool.query<R>(text, values);
    }

    /**
     * Runs `work` in one transaction on one connection: committed when it resolves, rolled back when
     * it throws. A connection that failed is destroyed rather than returned to the pool.
     */
    async transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
        const client = await this.pool.connect();
        // A checked-out client has no pool listener: a connection that breaks between two of our
        // queries would emit an unhandled 'error'. The next query fails instead, which we handle.
        const ignore = () => {};
        client.on('error', ignore);
        let failure: Error | undefined;
        try {
            await client.query('BEGIN');
            const result = await work(client);
            await client.query('COMMIT');
            return result;
        } catch (error) {
            failure = error instanceof Error ? error : new Error(String(error));
            await client.query('ROLLBACK').catch(() => {});
            throw error;
        } finally {
            client.off('error', ignore);
            client.release(failure !== undefined && isConnectionError(failure) ? failure : undefined);
        }
    }

    /**
     * Opens a read-only transaction at REPEATABLE READ on one connection: every query on it sees the
     * database as it was at its first query, whatever commits meanwhile. `end()` commits it and gives
     * the connection back (destroyed, when it failed).
     */
    async readSnapshot(): Promise<ReadSnapshot> {
        const client = await this.pool.connect();
        const ignore = () => {};
        client.on('error', ignore);
        let failure: Error | undefined;
        const fail = (error: unknown) => {
            failure ??= error instanceof Error ? error : new Error(String(error));
            throw error;
        };
        const release = () => {
            client.off('error', ignore);
            client.release(failure !== undefined && isConnectionError(failure) ? failure : undefined);
        };
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY').catch((error: unknown) => {
            failure = error instanceof Error ? error : new Error(String(error));
            release();
            throw error;
        });
        return {
            query: (text, values) => client.query(text, values).catch(fail),
            end: async () => {
                await client.query(failure ? 'ROLLBACK' : 'COMMIT').catch(() => {});
                release();
            },
        };
    }

    /**
     * Creates the schema and runs each migration not run yet, once, however many workers start at
     * once: all of it happens in one transaction holding an advisory lock of this schema, so the
     * others wait and then find every step done.
     */
    async migrate(): Promise<void> {
        const schema = pg.escapeIdentifier(this.schema);
        await this.transaction(async (client) => {
            await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [migrationLockKey(this.schema)]);
            // Looked up first: CREATE SCHEMA IF NOT EXISTS needs the CREATE privilege even when the schema exists.
            const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [this.schema]);
            if (exists.rowCount === 0) await client.query(`CREATE SCHEMA ${schema}`);
            const migrations = this.table('dragnet_migrations');
            await client.query(
                `CREATE TABLE IF NOT EXISTS ${migrations} (version int PRIMARY KEY, applied_at timestamptz NOT NULL ` +
                    `DEFAULT now())`,
            );
            const done = await client.query<{ version: number }>(`SELECT version FROM ${migrations}`);
            const applied = new Set(done.rows.map((row) => row.version));
            for (const [index, migration] of MIGRATIONS.entries()) {
                const version = index + 1;
                if (applied.has(version)) continue;
                await client.query(migration(schema));
                await client.query(`INSERT INTO ${migrations} (version) VALUES ($1)`, [version]);
            }
        });
    }

    async close(): Promise<void> {
        await this.pool.end();
    }
}

/**
 * Connects to PostgreSQL at `url` and brings its schema up to date. A server that cannot be
 * reached becomes one clear line, `PostgreSQL is unreachable at host:port (connect ECONNREFUSED …)`,
 * not a stack of socket errors.
 */
export async function openPostgres(url: string, options: PgOptions = {}): Promise<PgDatabase> {
    const db = new PgDatabase(url, options);
    try {
        await db.migrate();
        return db;
    } catch (error) {
        await db.close().catch(() => {});
        if (error instanceof Error && isConnectionError(error)) {
            throw new Error(`PostgreSQL is unreachable at ${db.address} (${describe(error)})`, { cause: error });
        }
        throw error;
    }
}

/**
 * A value as jsonb input. jsonb cannot hold U+0000 (it rejects `\u0000`, and the whole statement with
 * it), and scraped text now and then carries one: it is dropped, so one stray NUL does not fail a
 * group of pages.
 */
export function jsonb(value: unknown): string {
    // An escape preceded by an even number of backslashes; `\\u0000` is a backslash and the text "u0000".
    return JSON.stringify(value).replace(/(?<!\\)((?:\\\\)*)\\u0000/g, '$1');
}

/** The row of a query that always yields exactly one (`SELECT count(*) …`, `SELECT NOT EXISTS …`). */
export function onlyRow<R>({ rows }: { rows: R[] }): R {
    const [row] = rows;
    if (!row) throw new Error('PostgreSQL returned no row for a query that always returns one');
    return row;
}

/** SQLSTATE class 08 and the server's own shutdown and start-up refusals. */
const CONNECTION_STATES = /^(08|57P01|57P02|57P03)/;
const SOCKET_CODES = new Set([
    'ECONNREFUSED',
    'ECONNRESET',
    'EPIPE',
    'ETIMEDOUT',
    'EHOSTUNREACH',
    'ENETUNREACH',
    'ENOTFOUND',
    'EAI_AGAIN',
]);
/** pg's own connection failures carry no code, only these messages. */
const CONNECTION_MESSAGES =
    /Connection terminated|timeout exceeded when trying to connect|not queryable|connection timeout/i;

/** Whether `error` says the connection is gone or could not be made (rather than that a statement was wrong). */
export function isConnectionError(error: unknown): boolean {
    if (!(error instanceof Error)) return false;
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && (SOCKET_CODES.has(code) || CONNECTION_STATES.test(code))) return true;
    // Node's "connect ECONNREFUSED" from a host with several addresses comes as an AggregateError.
    if (error instanceof AggregateError) return error.errors.some(isConnectionError);
    return CONNECTION_MESSAGES.test(error.message);
}

/** One line saying what failed; Node's AggregateError (several addresses tried) has no message of its own. */
function describe(error: Error): string {
    const messages =
        error instanceof AggregateError
            ? error.errors.map((inner) => String((inner as Error).message ?? inner))
            : [error.message];
    const text = messages.filter(Boolean).join('; ') || String((error as { code?: unknown }).code ?? error.name);
    return text.replace(/\s+/g, ' ').trim();
}

/** The first schema of the URL's `search_path` option, else `public`. */
export function schemaOf(url: string): string {
    const options = parseUrl(url)?.searchParams.get('options') ?? '';
    const match = /(?:^|\s)(?:-c\s*|--)search_path=(\S+)/.exec(options);
    const first = match?.[1]
        ?.split(',')
        .map((name) => name.trim().replace(/^"(.*)"$/, '$1'))
        .find((name) => name !== '' && name !== '$user');
    return first ?? 'public';
}

/** A fixed 64-bit advisory-lock key per schema: workers on other schemas never wait for it. */
function migrationLockKey(schema: string): string {
    return createHash('sha256').update(`dragnet-migrate:${schema}`).digest().readBigInt64BE(0).toString();
}

function addressOf(url: string): string {
    const parsed = parseUrl(url);
    const host = parsed?.searchParams.get('host') ?? (parsed?.hostname || 'localhost');
    return `${host}:${parsed?.searchParams.get('port') ?? (parsed?.port || '5432')}`;
}

/**
 * The URL with the OS user filled in when it names none and neither PGUSER nor USER is set: what
 * libpq (psql) does, and pg does not — in a container without USER it sends no user at all.
 */
function withDefaultUser(url: string): string {
    const parsed = parseUrl(url);
    if (!parsed || parsed.username || parsed.searchParams.has('user') || process.env.PGUSER || process.env.USER)
        return url;
    parsed.username = encodeURIComponent(userInfo().username);
    return parsed.toString();
}

function parseUrl(url: string): URL | undefined {
    try {
        return new URL(url);
    } catch {
        return undefined;
    }
}

/** A read-only snapshot of the database (PgDatabase.readSnapshot). */
export interface ReadSnapshot {
    query<R extends pg.QueryResultRow = pg.QueryResultRow>(
        text: string,
        values?: unknown[],
    ): Promise<pg.QueryResult<R>>;
    end(): Promise<void>;
}
