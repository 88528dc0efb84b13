/**
 * Raw pages in PostgreSQL, for distributed mode: the same RawPages as the file store, shared by
 * every worker of a site. A body is stored gzipped (HTML shrinks 5-10×) in `raw_pages.body`; a
 * page fetched again replaces the one stored under its key and becomes the newest.
 *
 * `put()` resolves once its page is written, in a group commit (groupWriter.ts): the first page
 * goes at once, and pages put while that write is under way go together in the next, one
 * `INSERT … SELECT FROM unnest(…)` each, retried like the sink's commits when the connection breaks.
 *
 * When to keep raw pages in an S3-compatible object store instead: this table grows by the gzipped
 * page (~15-25 KB for a typical 100 KB page), so ten million pages are some 200 GB. Every body
 * lives in TOAST, each re-fetch leaves its old copy as dead TOAST chunks for vacuum to reclaim
 * (on a table of hundreds of GB, autovacuum runs for hours beside the crawl's writes), each is
 * written twice (WAL and table) and carried by every replica, and a backup of the results becomes
 * a backup of the crawled web. Past tens of millions of pages or a few hundred GB, or when backups
 * of the database should take minutes, put bodies in object storage (one immutable object per
 * fetch, `<site>/<key>.html.gz`, expired by a lifecycle rule) and keep only the metadata and the
 * object key here. Below that, one PostgreSQL is simpler: one thing to run, back up and purge.
 */
import { promisify } from 'node:util';
import { gunzip as gunzipCallback, gzip as gzipCallback } from 'node:zlib';
import type { Renderer } from '../../site/site.js';
import { GroupWriter } from '../groupWriter.js';
import type { RawPages } from '../rawPages.js';
import { type RawPage, storedPage } from '../rawStore.js';
import { jsonb, type PgDatabase } from './database.js';
import { keysetBatches } from './reader.js';
import { retryTransient, type RetryOptions } from './sink.js';

const gzip = promisify(gzipCallback);
const gunzip = promisify(gunzipCallback);

export interface PgRawPagesOptions extends RetryOptions {
    /** Most pages per INSERT: pages put while one write is under way go together in the next. Default: 50. */
    maxBatchSize?: number;
    /** Pages `pages()` reads per query; a batch is held in memory whole, unzipped. Default: 100. */
    readBatchSize?: number;
}

interface PageRow {
    key: string;
    url: string;
    final_url: string;
    status: number;
    headers: RawPage['headers'];
    fetched_at: Date;
    renderer: Renderer;
    label: string;
    body: Buffer;
    charset: string | null;
}

const COLUMNS = 'key, url, final_url, status, headers, fetched_at, renderer, label, body, charset';

export class PgRawPages implements RawPages {
    private readonly writer: GroupWriter<RawPage>;
    private readonly readBatchSize: number;

    constructor(
        private readonly db: PgDatabase,
        readonly site: string,
        private readonly options: PgRawPagesOptions = {},
    ) {
        this.readBatchSize = options.readBatchSize ?? 100;
        this.writer = new GroupWriter({
            write: (pages) => this.write(pages),
            maxBatchSize: options.maxBatchSize ?? 50,
        });
    }

    /** Stores a page, its credential headers masked (see storedPage): resolves once it is written. */
    async put(page: RawPage): Promise<void> {
        await this.writer.add(storedPage(page));
    }

    async flush(): Promise<void> {
        await this.writer.flush();
    }

    /** Every stored page, in the order it was last written. */
    async *pages(): AsyncGenerator<RawPage> {
        await this.flush();
        for await (const rows of keysetBatches<PageRow>(this.db, 'raw_pages', COLUMNS, this.site, {
            ...this.options,
            batchSize: this.readBatchSize,
        })) {
            yield* await Promise.all(rows.map(pageOf));
        }
    }

    /** The stored page with this key. */
    async get(key: string): Promise<RawPage | undefined> {
        await this.flush();
        const { rows } = await retryTransient(
            () =>
                this.db.query<PageRow>(
                    `SELECT ${COLUMNS} FROM ${this.db.table('raw_pages')} WHERE site = $1 AND key = $2`,
                    [this.site, key],
                ),
            this.options,
        );
        return rows[0] && pageOf(rows[0]);
    }

    private async write(batch: RawPage[]): Promise<void> {
        // One row per key (the last put), as one statement may not update a row twice.
        const pages = [...new Map(batch.map((page) => [page.key, page])).values()];
        // Compressed off the event loop, in zlib's thread pool, all at once.
        const bodies = await Promise.all(pages.map((page) => gzip(page.body)));
        const columns = [
            pages.map((page) => page.key),
            pages.map((page) => page.url),
            pages.map((page) => page.finalUrl),
            pages.map((page) => page.status),
            pages.map((page) => jsonb(page.headers)),
            pages.map((page) => page.fetchedAt),
            pages.map((page) => page.renderer),
            pages.map((page) => page.label),
            bodies,
            pages.map((page) => page.charset ?? null),
        ];
        // seq = DEFAULT: a page fetched again is the newest, as in the file store.
        const text = `INSERT INTO ${this.db.table('raw_pages')} AS stored (site, ${COLUMNS})
            SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::int[], $6::jsonb[], $7::timestamptz[], \
$8::text[], $9::text[], $10::bytea[], $11::text[])
            ON CONFLICT (site, key) DO UPDATE SET seq = DEFAULT, url = EXCLUDED.url, final_url = EXCLUDED.final_url,
                status = EXCLUDED.status, headers = EXCLUDED.headers, fetched_at = EXCLUDED.fetched_at,
                renderer = EXCLUDED.renderer, label = EXCLUDED.label, body = EXCLUDED.body, charset = EXCLUDED.charset`;
        await retryTransient(() => this.db.query(text, [this.site, ...columns]), this.options);
    }
}

async function pageOf(row: PageRow): Promise<RawPage> {
    return {
        key: row.key,
        url: row.url,
        finalUrl: row.final_url,
        status: row.status,
        headers: row.headers,
        fetchedAt: row.fetched_at.toISOString(),
        renderer: row.renderer,
        label: row.label,
        body: (await gunzip(row.body)).toString('utf8'),
        ...(row.charset ? { charset: row.charset } : {}),
    };
}
