/**
 * Raw pages for distributed mode: each worker writes its own segment files into the site's
 * directory of the storage dir, as the file store does (rawStore.ts, one gzip member per batch),
 * and PostgreSQL's `raw_index` says which member of which file holds each page. Re-parse and
 * `get()` read the pages back through the index, on any machine that sees the same directory.
 *
 * Why not the pages themselves in PostgreSQL: a page's body crossing the socket, compressed one by
 * one, TOASTed and written twice (WAL and table) cost a worker more CPU than the rest of the
 * distributed mode together (docs/benchmarks.md, efficiency); a segment append costs what it
 * costs the embedded mode. The index row of a page is ~150 bytes.
 *
 * Give every worker, and the machine that runs `reparse`, the same storage dir (a volume they all
 * mount) when raw pages are to be re-parsed; a page whose file this machine cannot read is an
 * error that names the file, never a page silently skipped. When to move segments to an object
 * store: past what one volume holds or serves, upload each closed segment (`<site>/<file>`) and
 * read members back with ranged GETs at the offsets the index keeps; the segment files never
 * change once closed.
 *
 * `put()` resolves once the page's batch is on disk and indexed: a page fetched again is indexed
 * anew and becomes the newest, as in the file store.
 */
import { join } from 'node:path';
import type { RawPages } from '../rawPages.js';
import { type PageEntry, type RawPage, RawStore, type SegmentMember } from '../rawStore.js';
import type { PgDatabase } from './database.js';
import { keysetBatches } from './reader.js';
import { retryTransient, type RetryOptions } from './sink.js';

export interface IndexedRawPagesOptions extends RetryOptions {
    /** The storage dir whose `raw_pages/<site>/` holds the segment files. */
    storageDir: string;
    /**
     * This process's name on the segment files it writes (a fleet's worker id), so that workers sharing
     * the directory never append to one file. Default: none, and the store is read-only.
     */
    writer?: string;
    /** Most pages per segment append and index insert. Default: 50. */
    maxBatchSize?: number;
    /** Index rows `pages()` reads per query. Default: 100. */
    readBatchSize?: number;
}

/** An index row's columns, as `pages()` and `get()` read them. */
const INDEX_COLUMNS = 'key, file, member_offset, member_length';

interface IndexRow {
    key: string;
    file: string;
    member_offset: string;
    member_length: number;
}

export class IndexedRawPages implements RawPages {
    private readonly readBatchSize: number;

    private constructor(
        private readonly db: PgDatabase,
        readonly site: string,
        private readonly files: RawStore,
        private readonly options: IndexedRawPagesOptions,
    ) {
        this.readBatchSize = options.readBatchSize ?? 100;
    }

    static async open(db: PgDatabase, site: string, options: IndexedRawPagesOptions): Promise<IndexedRawPages> {
        const files = await RawStore.open({
            storageDir: options.storageDir,
            site,
            writer: options.writer,
            maxBatchSize: options.maxBatchSize,
            onWritten: (entries, member) => indexBatch(db, site, entries, member, options),
        });
        return new IndexedRawPages(db, site, files, options);
    }

    /** The site's directory of segment files. */
    get dir(): string {
        return this.files.dir;
    }

    /** Stores a page, its credential headers masked (see storedPage): resolves once it is written and indexed. */
    put(page: RawPage): Promise<void> {
        if (this.options.writer === undefined)
            return Promise.reject(new Error('raw pages opened without a writer are read-only'));
        return this.files.put(page);
    }

    async flush(): Promise<void> {
        await this.files.flush();
    }

    /** Every indexed page, in the order it was last written. */
    async *pages(): AsyncGenerator<RawPage> {
        await this.flush();
        for await (const rows of keysetBatches<IndexRow>(this.db, 'raw_index', INDEX_COLUMNS, this.site, {
            ...this.options,
            batchSize: this.readBatchSize,
        })) {
            // The pages of one batch are indexed together, so neighbouring rows mostly share a member.
            let member: { row: IndexRow; pages: Map<string, RawPage> } | undefined;
            for (const row of rows) {
                if (!member || member.row.file !== row.file || member.row.member_offset !== row.member_offset)
                    member = { row, pages: await this.pagesIn(row) };
                const page = member.pages.get(row.key);
                if (page) yield page;
            }
        }
    }

    /** The indexed page with this key. */
    async get(key: string): Promise<RawPage | undefined> {
        await this.flush();
        const { rows } = await retryTransient(
            () =>
                this.db.query<IndexRow>(
                    `SELECT ${INDEX_COLUMNS} FROM ${this.db.table('raw_index')} WHERE site = $1 AND key = $2`,
                    [this.site, key],
                ),
            this.options,
        );
        return rows[0] && (await this.pagesIn(rows[0])).get(key);
    }

    /** The pages of a row's member, by key (the last line of a key, should a batch hold it twice). */
    private async pagesIn(row: IndexRow): Promise<Map<string, RawPage>> {
        const member = { file: row.file, offset: Number(row.member_offset), length: row.member_length };
        try {
            return new Map((await this.files.pagesIn(member)).map((page) => [page.key, page]));
        } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
            throw new Error(
                `raw page ${row.key} of ${this.site} is in ${join(this.files.dir, row.file)}, which is not on this ` +
                    'machine: the worker that wrote it had another storage dir. Give every worker and the re-parse ' +
                    'the same --storage-dir (a volume they all mount).',
            );
        }
    }
}

/** Indexes a batch of pages the segment files hold in `member`. */
async function indexBatch(
    db: PgDatabase,
    site: string,
    entries: PageEntry[],
    member: SegmentMember,
    options: RetryOptions,
): Promise<void> {
    // One row per key (the last put), as one statement may not update a row twice.
    const pages = [...new Map(entries.map((entry) => [entry.key, entry])).values()];
    // seq = DEFAULT: a page fetched again is the newest, as in the file store. The commit does not wait
    // for its WAL to reach the disk (synchronous_commit off for this statement's transaction): the
    // commit of the page's items, which waits, comes after it and flushes the WAL up to itself, this
    // row included; a page that has no items (a listing) is not worth a disk flush of its own.
    const text = `INSERT INTO ${db.table('raw_index')} (site, key, url, fetched_at, file, member_offset, member_length)
        SELECT $1, key, url, fetched_at, $5, $6, $7 FROM unnest($2::text[], $3::text[], $4::timestamptz[])
            AS page(key, url, fetched_at), (SELECT set_config('synchronous_commit', 'off', true)) AS no_flush
        ON CONFLICT (site, key) DO UPDATE SET seq = DEFAULT, url = EXCLUDED.url, fetched_at = EXCLUDED.fetched_at,
            file = EXCLUDED.file, member_offset = EXCLUDED.member_offset, member_length = EXCLUDED.member_length`;
    const values = [
        site,
        pages.map((page) => page.key),
        pages.map((page) => page.url),
        pages.map((page) => page.fetchedAt),
        member.file,
        member.offset,
        member.length,
    ];
    await retryTransient(() => db.query(text, values), options);
}
