/**
 * The one SQLite file that holds a storage dir's request queues and datasets:
 * `<storageDir>/dragnet.sqlite`, opened once per process and shared by every client on that dir.
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import Database from 'better-sqlite3';
import { ConfigError } from '../../options/configError.js';

export type SqliteDb = Database.Database;

/** File name of the database inside the storage dir. */
export const DATABASE_FILE = 'dragnet.sqlite';

export interface DatabaseOptions {
    /**
     * How long (ms) a statement waits for another process's write lock before failing with
     * SQLITE_BUSY. Default: 5000. Only matters when several processes share one storage dir.
     */
    busyTimeoutMs?: number;
    /**
     * SQLite page cache of this connection, in MiB. Default: 64. Request ids are hashes, so each
     * add lands at a random place in the (queue, id) index; once that index outgrows the cache
     * (SQLite's default is 2 MiB, about 50k requests) every add reads pages back from the OS.
     * 64 MiB holds the indexes of a few million requests.
     */
    cacheSizeMb?: number;
}

/**
 * Schema migrations, in order; `PRAGMA user_version` records how many have run. Append, never edit:
 * a database written by an older version runs only the steps it has not seen.
 *
 * Tables are ordinary rowid tables on purpose. Request JSON and item JSON are a few hundred bytes to
 * megabytes; in a WITHOUT ROWID table every interior b-tree page carries whole rows, so large rows
 * crush its fan-out. With a rowid table the rows are appended in insertion order, and only the
 * small unique indexes over (owner, key) take random inserts — they stay in the page cache even at
 * millions of rows.
 */
const MIGRATIONS: string[] = [
    `
    CREATE TABLE request_queues (
        seq INTEGER PRIMARY KEY,                -- compact key for the requests table
        id TEXT NOT NULL UNIQUE,                -- Crawlee's id (a UUID)
        name TEXT UNIQUE,
        created_at INTEGER NOT NULL,            -- ms since the epoch, as are all times here
        modified_at INTEGER NOT NULL,
        accessed_at INTEGER NOT NULL,
        total_count INTEGER NOT NULL DEFAULT 0, -- kept by every write: no COUNT(*) scans
        handled_count INTEGER NOT NULL DEFAULT 0,
        next_order INTEGER NOT NULL DEFAULT 1,  -- position counter, see requestQueueClient.ts
        last_client_key TEXT,
        had_multiple_clients INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE requests (
        queue_seq INTEGER NOT NULL,
        id TEXT NOT NULL,                       -- derived from uniqueKey, as Crawlee derives it
        order_no INTEGER,                       -- queue position; < 0 forefront; NULL once handled
        locked_until INTEGER,                   -- lock expiry; NULL when not locked (always when handled)
        locked_by TEXT,                         -- the client key holding the lock
        json TEXT NOT NULL,                     -- the request as stored by Crawlee
        UNIQUE (queue_seq, id)
    );
    -- The head: pending and unlocked requests by position. Lookups are O(log n) at any size and
    -- never walk past locked or handled requests, because those are not in this index at all.
    CREATE INDEX requests_head ON requests (queue_seq, order_no)
        WHERE order_no IS NOT NULL AND locked_until IS NULL;
    -- Locked requests by expiry: finds expired locks, and answers "any lock held?", in O(log n).
    CREATE INDEX requests_locks ON requests (queue_seq, locked_until) WHERE locked_until IS NOT NULL;

    CREATE TABLE datasets (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        name TEXT UNIQUE,
        created_at INTEGER NOT NULL,
        modified_at INTEGER NOT NULL,
        accessed_at INTEGER NOT NULL,
        item_count INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE dataset_items (
        dataset_seq INTEGER NOT NULL,
        idx INTEGER NOT NULL,                   -- 1-based, contiguous: item i of a dataset has idx i
        json TEXT NOT NULL,
        PRIMARY KEY (dataset_seq, idx)
    );
    `,
    `
    -- What a run needs besides its queues and datasets to be resumed (see store/runState.ts).
    CREATE TABLE run_state (
        name TEXT PRIMARY KEY,                  -- the site
        json TEXT NOT NULL,                     -- counters and when the run started
        updated_at INTEGER NOT NULL
    );
    -- Canonical URLs claimed by pages whose own URL differs: the part of the seen-set that the
    -- queues do not hold.
    CREATE TABLE canonical_claims (
        name TEXT NOT NULL,
        key TEXT NOT NULL,
        PRIMARY KEY (name, key)
    ) WITHOUT ROWID;
    `,
    `
    -- The process that has a site's stores to itself: a crawl or a dead-letter requeue (store/siteLock.ts).
    CREATE TABLE site_locks (
        site TEXT PRIMARY KEY,
        pid INTEGER NOT NULL,
        host TEXT NOT NULL,
        purpose TEXT NOT NULL,
        since INTEGER NOT NULL
    );
    `,
    `
    -- What each run of a site leaves the next (store/pageHistory.ts): one row per page.
    CREATE TABLE page_history (
        site TEXT NOT NULL,
        key TEXT NOT NULL,                      -- the page's request URL key
        navigation INTEGER NOT NULL,            -- 1: a listing, fetched on every recrawl
        page TEXT NOT NULL,                     -- KnownPage JSON: URL, validators, digest, checks
        items TEXT NOT NULL,                    -- the items it yielded when last parsed, as a JSON array
        prev_items TEXT,                        -- its items before the run that last settled it
        rate REAL,                              -- estimated changes per ms; NULL before one interval
        last_checked_at INTEGER NOT NULL,
        next_due_at INTEGER NOT NULL,
        run INTEGER NOT NULL,                   -- the run that last settled it
        removed_run INTEGER,                    -- the run that found it gone; NULL while live
        removal TEXT                            -- why, as JSON
    );
    CREATE UNIQUE INDEX page_history_key ON page_history (site, key);
    -- The pages a run has not settled yet, which its end carries over a batch at a time.
    CREATE INDEX page_history_run ON page_history (site, run);
    -- A site's runs as a series: which run is the latest, and whether it recrawls.
    CREATE TABLE site_runs (
        site TEXT PRIMARY KEY,
        run INTEGER NOT NULL,
        mode TEXT NOT NULL
    );
    `,
];

interface Entry {
    db: SqliteDb;
    refs: number;
}

/** One connection per database file per process: better-sqlite3 is synchronous, more would only contend. */
const open = new Map<string, Entry>();

/**
 * Opens (or shares) the database of `storageDir`, creating the file and schema when missing.
 * Every call must be paired with one `releaseDatabase(storageDir)`. The options of the first
 * open of a dir apply; later opens share that connection as it is.
 */
export function openDatabase(storageDir: string, options: DatabaseOptions = {}): SqliteDb {
    const file = resolve(storageDir, DATABASE_FILE);
    const cached = open.get(file);
    if (cached) {
        cached.refs += 1;
        return cached.db;
    }
    const db = createDatabase(storageDir, file);
    // WAL: readers never block the writer, and a commit is one append to the log.
    db.pragma('journal_mode = WAL');
    // NORMAL in WAL mode: a commit is written to the OS before it returns but not fsynced, so a
    // killed process (SIGKILL, OOM, crash) loses nothing. A power loss or kernel panic can lose the
    // last transactions since the latest checkpoint — never corrupt the file. That is the right
    // trade for a crawl frontier (a lost tail is re-discovered); FULL would fsync every commit.
    db.pragma('synchronous = NORMAL');
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    db.pragma(`cache_size = ${-1024 * (options.cacheSizeMb ?? 64)}`); // negative: KiB, not pages
    // Fold the WAL into the main file every ~40 MB instead of SQLite's 4 MB: a checkpoint runs inside
    // the commit that crosses the mark, blocking the event loop while it writes and fsyncs, and the
    // random index pages a batch of adds touches are mostly the same from one commit to the next,
    // so a larger WAL writes each of them back fewer times.
    db.pragma('wal_autocheckpoint = 10000');
    migrate(db);
    open.set(file, { db, refs: 1 });
    return db;
}

/**
 * The database file, made with its dir when missing; a dir that
 * cannot hold it (a file, no permission) is a ConfigError.
 */
function createDatabase(storageDir: string, file: string): SqliteDb {
    try {
        mkdirSync(resolve(storageDir), { recursive: true });
        return new Database(file);
    } catch (error) {
        const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
        throw new ConfigError(
            `the storage dir ${storageDir} cannot hold the run's database (${DATABASE_FILE}): ${reason} (see ` +
                `--storage-dir)`,
        );
    }
}

/** Drops one reference taken by `openDatabase`; the connection closes with the last one. */
export function releaseDatabase(storageDir: string): void {
    const file = resolve(storageDir, DATABASE_FILE);
    const entry = open.get(file);
    if (!entry) return;
    entry.refs -= 1;
    if (entry.refs > 0) return;
    open.delete(file);
    // Fold the WAL back into the main file so the dir is one self-contained file when idle.
    entry.db.pragma('wal_checkpoint(TRUNCATE)');
    entry.db.close();
}

function migrate(db: SqliteDb): void {
    // IMMEDIATE: two processes opening a fresh dir at once must not both run the same step.
    db.transaction(() => {
        const version = db.pragma('user_version', { simple: true }) as number;
        for (const [step, migration] of MIGRATIONS.entries()) if (step >= version) db.exec(migration);
        if (version < MIGRATIONS.length) db.pragma(`user_version = ${MIGRATIONS.length}`);
    }).immediate();
}
