/**
 * Raw pages for distributed mode: each worker archives its pages as WARC files of its own in the
 * site's directory of the archive dir, as the embedded mode does (archive/archiveStore.ts), and
 * PostgreSQL's `raw_index` says which byte range of which file holds each page. Re-parse and `get()`
 * read the pages back through the index, on any machine that sees the same directory.
 *
 * Why not the pages themselves in PostgreSQL: a page's body crossing the socket, compressed one by
 * one, TOASTed and written twice (WAL and table) cost a worker more CPU than the rest of the
 * distributed mode together; an append to a WARC file costs what it costs the embedded mode. The
 * index row of a page is ~150 bytes.
 *
 * Give every worker, and the machine that runs `reparse`, the same archive dir (a volume they all
 * mount) when raw pages are to be re-parsed; a page whose file this machine cannot read is an
 * error that names the file, never a page silently skipped. Moving closed files to an object store:
 * docs/archive.md.
 *
 * `put()` resolves once the page's records are on disk and indexed: a page fetched again is indexed
 * anew and becomes the newest, as in the archive's own order. A revisit (`putRevisit()`) is written
 * to the worker's file and indexed in its CDXJ, not in `raw_index`: the page stays its newest response.
 */
import { join } from 'node:path';
import { ArchiveStore, type PagePlace } from '../archive/archiveStore.js';
import type { CaptureRef, PageCapture, RawPage, RedirectCapture, RevisitCapture } from '../archive/rawPage.js';
import type { RawPages } from '../rawPages.js';
import type { PgDatabase } from './database.js';
import { keysetBatches } from './reader.js';
import { retryTransient, type RetryOptions } from './sink.js';

export interface IndexedRawPagesOptions extends RetryOptions {
    /** The archive dir whose `<site>/` holds the WARC files. */
    archiveDir: string;
    /**
     * This process's name on the files it writes (a fleet's worker id), so that workers sharing
     * the directory never append to one file. Default: none, and the store is read-only.
     */
    writer?: string;
    /** The run the pages belong to, named in each file's `warcinfo` record. Default: none. */
    run?: string;
    /** Most pages per append and index insert. Default: 50. */
    maxBatchSize?: number;
    /** Index rows `pages()` reads per query. Default: 100. */
    readBatchSize?: number;
}

/** An index row's columns, as `pages()` and `get()` read them. */
const INDEX_COLUMNS = 'key, file, page_offset, page_length';

interface IndexRow {
    key: string;
    file: string;
    page_offset: string;
    page_length: number;
}

export class IndexedRawPages implements RawPages {
    private readonly readBatchSize: number;

    private constructor(
        private readonly db: PgDatabase,
        readonly site: string,
        private readonly files: ArchiveStore,
        private readonly options: IndexedRawPagesOptions,
    ) {
        this.readBatchSize = options.readBatchSize ?? 100;
    }

    static async open(db: PgDatabase, site: string, options: IndexedRawPagesOptions): Promise<IndexedRawPages> {
        const files = await ArchiveStore.open({
            archiveDir: options.archiveDir,
            site,
            writer: options.writer,
            run: options.run,
            maxBatchSize: options.maxBatchSize,
            onWritten: (places) => indexBatch(db, site, places, options),
        });
        return new IndexedRawPages(db, site, files, options);
    }

    /** The site's directory of WARC files. */
    get dir(): string {
        return this.files.dir;
    }

    /** Archives a page (credentials masked): resolves once it is written and indexed. */
    put(page: PageCapture): Promise<void> {
        if (this.options.writer === undefined) return Promise.reject(readOnly());
        return this.files.put(page);
    }

    putRedirect(redirect: RedirectCapture): Promise<void> {
        if (this.options.writer === undefined) return Promise.reject(readOnly());
        return this.files.putRedirect(redirect);
    }

    putRevisit(revisit: RevisitCapture): Promise<void> {
        if (this.options.writer === undefined) return Promise.reject(readOnly());
        return this.files.putRevisit(revisit);
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
            for (const row of rows) {
                const page = await this.pageAt(row);
                if (page) yield page;
            }
        }
    }

    /** The indexed page with this key. */
    async get(key: string): Promise<RawPage | undefined> {
        const row = await this.row(key);
        return row && (await this.pageAt(row));
    }

    /** The URL, WARC-Date and payload digest of the indexed page's response, as a revisit refers to it. */
    async latestCapture(key: string): Promise<CaptureRef | undefined> {
        const row = await this.row(key);
        return row && (await this.readAt(row, (place) => this.files.captureAt(place)));
    }

    private async row(key: string): Promise<IndexRow | undefined> {
        await this.flush();
        const { rows } = await retryTransient(
            () =>
                this.db.query<IndexRow>(
                    `SELECT ${INDEX_COLUMNS} FROM ${this.db.table('raw_index')} WHERE site = $1 AND key = $2`,
                    [this.site, key],
                ),
            this.options,
        );
        return rows[0];
    }

    private async pageAt(row: IndexRow): Promise<RawPage | undefined> {
        const pages = await this.readAt(row, (place) => this.files.pagesAt(place));
        return pages.find((page) => page.key === row.key);
    }

    private async readAt<T>(
        row: IndexRow,
        read: (place: Pick<PagePlace, 'file' | 'offset' | 'length'>) => Promise<T>,
    ): Promise<T> {
        try {
            return await read({ file: row.file, offset: Number(row.page_offset), length: row.page_length });
        } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
            throw new Error(
                `raw page ${row.key} of ${this.site} is in ${join(this.files.dir, row.file)}, which is not on this ` +
                    'machine: the worker that wrote it had another archive dir. Give every worker and the re-parse ' +
                    'the same --archive-dir (a volume they all mount).',
            );
        }
    }
}

function readOnly(): Error {
    return new Error('raw pages opened without a writer are read-only');
}

/** Indexes a batch of pages where the archive placed them. */
async function indexBatch(db: PgDatabase, site: string, places: PagePlace[], options: RetryOptions): Promise<void> {
    if (places.length === 0) return;
    // One row per key (the last put), as one statement may not update a row twice.
    const pages = [...new Map(places.map((place) => [place.key, place])).values()];
    // seq = DEFAULT: a page fetched again is the newest, as in the archive. The commit does not wait
    // for its WAL to reach the disk (synchronous_commit off for this statement's transaction): the
    // commit of the page's items, which waits, comes after it and flushes the WAL up to itself, this
    // row included; a page that has no items (a listing) is not worth a disk flush of its own.
    const text = `INSERT INTO ${db.table('raw_index')} (site, key, url, fetched_at, file, page_offset, page_length)
        SELECT $1, key, url, fetched_at, file, page_offset, page_length
            FROM unnest($2::text[], $3::text[], $4::timestamptz[], $5::text[], $6::bigint[], $7::int[])
            AS page(key, url, fetched_at, file, page_offset, page_length),
            (SELECT set_config('synchronous_commit', 'off', true)) AS no_flush
        ON CONFLICT (site, key) DO UPDATE SET seq = DEFAULT, url = EXCLUDED.url, fetched_at = EXCLUDED.fetched_at,
            file = EXCLUDED.file, page_offset = EXCLUDED.page_offset, page_length = EXCLUDED.page_length`;
    const values = [
        site,
        pages.map((page) => page.key),
        pages.map((page) => page.url),
        pages.map((page) => page.fetchedAt),
        pages.map((page) => page.file),
        pages.map((page) => page.offset),
        pages.map((page) => page.length),
    ];
    await retryTransient(() => db.query(text, values), options);
}
