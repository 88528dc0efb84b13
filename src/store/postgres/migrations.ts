/** The PostgreSQL schema of the distributed mode's sink, as the migrations that make it (database.ts runs them). */

/**
 * Schema migrations, in order, each a function of the quoted schema name; `dragnet_migrations`
 * records which have run. Append, never edit: a database written by an older version runs only
 * the steps it has not seen.
 *
 * Every table reads back in `seq` order (an identity column, with a unique (site, seq) index for
 * keyset pagination): the order rows were first inserted. Raw pages move to the end when rewritten
 * (a re-fetch), as the file store keeps its newest copy last.
 */
export const MIGRATIONS: ((schema: string) => string)[] = [
    (s) => `
    CREATE TABLE ${s}.items (
        seq bigint GENERATED ALWAYS AS IDENTITY,
        site text NOT NULL,
        request_key text NOT NULL,          -- the request the page was fetched for
        ordinal int NOT NULL,               -- the item's position among its page's items
        item json NOT NULL,                 -- json, not jsonb: an item keeps its fields in the extractor's order
        stored_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (site, request_key, ordinal)
    );
    CREATE UNIQUE INDEX items_read_order ON ${s}.items (site, seq);

    CREATE TABLE ${s}.quarantine (
        seq bigint GENERATED ALWAYS AS IDENTITY,
        site text NOT NULL,
        request_key text NOT NULL,
        ordinal int NOT NULL,
        entry json NOT NULL,
        stored_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (site, request_key, ordinal)
    );
    CREATE UNIQUE INDEX quarantine_read_order ON ${s}.quarantine (site, seq);

    CREATE TABLE ${s}.dead_letter (
        seq bigint GENERATED ALWAYS AS IDENTITY,
        site text NOT NULL,
        request_key text NOT NULL,
        entry json NOT NULL,
        reason text NOT NULL,               -- entry.reason and entry.failureClass, for the counts by reason
        failure_class text NOT NULL,
        dead_lettered_at timestamptz NOT NULL,
        PRIMARY KEY (site, request_key)
    );
    CREATE UNIQUE INDEX dead_letter_read_order ON ${s}.dead_letter (site, seq);

    CREATE TABLE ${s}.raw_pages (
        seq bigint GENERATED ALWAYS AS IDENTITY,
        site text NOT NULL,
        key text NOT NULL,                  -- rawPageKey(finalUrl, renderer)
        url text NOT NULL,
        final_url text NOT NULL,
        status int NOT NULL,
        headers jsonb NOT NULL,
        fetched_at timestamptz NOT NULL,
        renderer text NOT NULL,
        label text NOT NULL,
        body bytea NOT NULL,                -- gzip of the HTML
        PRIMARY KEY (site, key)
    );
    CREATE UNIQUE INDEX raw_pages_read_order ON ${s}.raw_pages (site, seq);
    -- The body is gzip already: EXTERNAL keeps it out of line without PostgreSQL trying to compress it again.
    ALTER TABLE ${s}.raw_pages ALTER COLUMN body SET STORAGE EXTERNAL;
    `,
    // The frontier's overflow (backlog.ts): jobs of a queue past what Redis should hold, fed back in windows.
    (s) => `
    CREATE TABLE ${s}.backlog (
        seq bigint GENERATED ALWAYS AS IDENTITY,
        site text NOT NULL,
        queue text NOT NULL,
        job_id text NOT NULL,
        priority int NOT NULL,
        data json NOT NULL,
        PRIMARY KEY (site, queue, seq)
    );
    `,
    // The encoding a raw page's body was decoded from (fetch/http/decodeBody.ts); NULL for a rendered page.
    (s) => `ALTER TABLE ${s}.raw_pages ADD COLUMN charset text;`,
    // A job spilled twice (two workers queuing one URL, a page
    // taken back) is kept once, as BullMQ keeps one job per id.
    (s) => `
    DELETE FROM ${s}.backlog later USING ${s}.backlog earlier
        WHERE later.site = earlier.site AND later.queue = earlier.queue AND later.job_id = earlier.job_id AND \
later.seq > earlier.seq;
    CREATE UNIQUE INDEX backlog_job ON ${s}.backlog (site, queue, job_id);
    `,
    // The take of its job whose outcome a request holds (sink.ts, OutcomeFence): the latest take wins.
    (s) => `
    CREATE TABLE ${s}.outcome_fences (
        site text NOT NULL,
        request_key text NOT NULL,
        job_created_at bigint NOT NULL,     -- the job's creation time (ms)
        take int NOT NULL,                  -- BullMQ's count of the job's takes
        PRIMARY KEY (site, request_key)
    );
    `,
    // Raw pages leave the database for the WARC archive (indexedRawPages.ts); this index says where
    // each is. The pages stored here before are kept, as raw_pages_v1, unread.
    (s) => `
    CREATE TABLE ${s}.raw_index (
        seq bigint GENERATED ALWAYS AS IDENTITY,
        site text NOT NULL,
        key text NOT NULL,                  -- rawPageKey(finalUrl, renderer)
        url text NOT NULL,
        fetched_at timestamptz NOT NULL,
        file text NOT NULL,                 -- the WARC file, in <archive dir>/<site>/
        page_offset bigint NOT NULL,        -- the page's records: its response to its metadata
        page_length int NOT NULL,
        PRIMARY KEY (site, key)
    );
    CREATE UNIQUE INDEX raw_index_read_order ON ${s}.raw_index (site, seq);
    ALTER TABLE ${s}.raw_pages RENAME TO raw_pages_v1;
    ALTER INDEX ${s}.raw_pages_read_order RENAME TO raw_pages_v1_read_order;
    `,
    // What each run of a site leaves the next (store/pageHistory.ts), and the site's runs as a series.
    (s) => `
    CREATE TABLE ${s}.page_history (
        seq bigint GENERATED ALWAYS AS IDENTITY,
        site text NOT NULL,
        key text NOT NULL,                  -- the page's request URL key
        navigation boolean NOT NULL,        -- a listing, fetched on every recrawl
        page json NOT NULL,                 -- KnownPage: URL, validators, digest, checks
        items json NOT NULL,                -- the items it yielded when last parsed
        prev_items json,                    -- its items before the run that last settled it
        rate double precision,              -- estimated changes per ms; NULL before one interval
        last_checked_at bigint NOT NULL,    -- ms since the epoch, as next_due_at
        next_due_at bigint NOT NULL,
        run int NOT NULL,                   -- the run that last settled it
        removed_run int,                    -- the run that found it gone; NULL while live
        removal json,
        PRIMARY KEY (site, key)
    );
    CREATE UNIQUE INDEX page_history_read_order ON ${s}.page_history (site, seq);
    CREATE INDEX page_history_run ON ${s}.page_history (site, run);
    CREATE TABLE ${s}.site_runs (
        site text PRIMARY KEY,
        run int NOT NULL,
        mode text NOT NULL
    );
    `,
];
