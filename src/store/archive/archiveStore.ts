/**
 * Raw pages, kept apart from parsed items so pages can be re-parsed without re-crawling, as a web
 * archive: WARC/1.1 (warcRecord.ts) that Common Crawl's, the Internet Archive's and webrecorder's
 * tools read, docs/archive.md.
 *
 * Layout: `<archiveDir>/<site>/dragnet-000001.warc.gz`, one gzip member per record, each file
 * opened by a `warcinfo` record; a new file starts past `maxSegmentBytes`. Beside each, its CDXJ
 * index (`dragnet-000001.cdxj`, cdxj.ts): a line per response, revisit and conversion record, in the
 * order written. A page is a run of records written together: `request`, `response`, `conversion`
 * (the DOM of a rendered page, referring to its response) and `metadata` (what dragnet keeps beside
 * the HTTP message: the page's key, route, renderer and charset). A redirect is a request and a
 * response of its own, without metadata: no page. A page fetched again and found as it was is a
 * request, a `revisit` record (the response's headers, referring to the capture revisited) and
 * metadata: no page either.
 *
 * The archive keeps every run of its site: a page fetched by several holds a response from each, and
 * `pages()` and `get()` give its newest (newestCaptures.ts).
 *
 * `put()` resolves once the page's records are on disk (a group commit, groupWriter.ts), and the
 * page's items are committed after that (parse/pageHandler.ts): a process killed at any moment never
 * leaves an item whose page is missing. A record cut short by a crash is skipped on read. Writing
 * starts in a new file, so nothing is appended to a record a crash cut.
 *
 * Several processes may write into one site's directory (a fleet's workers on a shared volume):
 * each names its own files (`writer`: `dragnet-<writer>-NNNNNN.warc.gz`), so no two append to one
 * file, and an index (`onWritten`: postgres/indexedRawPages.ts) may record where each page is.
 */
import { appendFile, mkdir, open as openFile, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../../options/configError.js';
import { GroupWriter } from '../groupWriter.js';
import { archivedPages } from './archivedPages.js';
import { cdxjLine, cdxjName } from './cdxj.js';
import { NewestCaptures, newestLine } from './newestCaptures.js';
import { type EncodedCapture, encodePage, encodeRedirect, encodeRevisit, warcinfoRecord } from './pageRecords.js';
import { type ArchivedRecord, WARC_FILE, warcFileRecords, warcRecords } from './warcReader.js';
import type { CaptureRef, PageCapture, RawPage, RedirectCapture, RevisitCapture } from './rawPage.js';

export interface ArchiveStoreOptions {
    /** The directory of every site's archive: `<storage-dir>/archive` by default (archiveDirOf). */
    archiveDir: string;
    site: string;
    /** Most pages per write: pages that arrive while one write is under way go together in the next. Default: 50. */
    maxBatchSize?: number;
    /** Size (compressed) at which a new file starts. Default: 64 MiB. */
    maxSegmentBytes?: number;
    /**
     * This process's name on its files, `dragnet-<writer>-NNNNNN.warc.gz` (characters other than
     * letters, digits, `.`, `_` and `-` become `_`), so that processes sharing the directory never
     * append to one file. Default: none, `dragnet-NNNNNN.warc.gz`.
     */
    writer?: string;
    /** The run the pages belong to, named in each file's `warcinfo` record. Default: none. */
    run?: string;
    /** Called with each batch's pages once they are on disk, before their `put()`s resolve: an index's hook. */
    onWritten?: (pages: PagePlace[]) => Promise<void>;
}

/** Where a page's records are: from its response record to the end of its metadata record. */
export interface PagePlace {
    key: string;
    url: string;
    fetchedAt: string;
    /** The file's name, in the site's directory. */
    file: string;
    offset: number;
    length: number;
}

/** `<storageDir>/archive`: where every site's archive is when `--archive-dir` does not say. */
export function archiveDirOf(storageDir: string): string {
    return join(storageDir, 'archive');
}

export class ArchiveStore {
    readonly dir: string;
    private readonly writer: GroupWriter<EncodedCapture>;
    private readonly maxSegmentBytes: number;
    private readonly filePrefix: string;
    private readonly options: ArchiveStoreOptions;
    private segment = 0;
    private segmentBytes = Infinity;

    private constructor(options: ArchiveStoreOptions) {
        this.options = options;
        this.dir = siteDir(options);
        this.maxSegmentBytes = options.maxSegmentBytes ?? 64 * 1024 * 1024;
        this.filePrefix = options.writer ? `dragnet-${options.writer.replace(/[^\w.-]/g, '_')}-` : 'dragnet-';
        this.writer = new GroupWriter({
            write: (captures) => this.append(captures),
            maxBatchSize: options.maxBatchSize ?? 50,
        });
    }

    /** Opens the archive. Writing starts in a new file, so nothing is appended to a record a crash cut. */
    static async open(options: ArchiveStoreOptions): Promise<ArchiveStore> {
        const store = new ArchiveStore(options);
        await mkdir(store.dir, { recursive: true }).catch((error: NodeJS.ErrnoException) => {
            throw new ConfigError(
                `the archive dir ${options.archiveDir} cannot hold the site's archive: ${error.code ?? error.message} ` +
                    '(see --archive-dir)',
            );
        });
        // Past the highest number, not the count: with an older file gone, the count names the newest again.
        const own = (await store.warcFiles()).filter((file) => store.isOwn(file));
        store.segment = Math.max(0, ...own.map((file) => Number.parseInt(file.slice(store.filePrefix.length), 10)));
        return store;
    }

    /** Whether any page of the site is archived in `archiveDir`. Creates nothing. */
    static async hasPages(options: Pick<ArchiveStoreOptions, 'archiveDir' | 'site'>): Promise<boolean> {
        const files = await readdir(siteDir(options)).catch(() => []);
        return files.some((file) => WARC_FILE.test(file));
    }

    /** Removes the site's archive. */
    static async purge(options: Pick<ArchiveStoreOptions, 'archiveDir' | 'site'>): Promise<void> {
        await rm(siteDir(options), { recursive: true, force: true }).catch((error: NodeJS.ErrnoException) => {
            // An archive dir that is a file holds no archive: opening one there says what is wrong.
            if (error.code !== 'ENOTDIR') throw error;
        });
    }

    /**
     * Archives a page: resolves once its records are on disk. Encoded and compressed here, not in the
     * write: the page's HTML is let go at once instead of waiting for its batch. Not an async function:
     * one would keep `page` alive in its frame until the group write resolves.
     */
    put(page: PageCapture): Promise<void> {
        return this.writer.add(encodePage(page));
    }

    /** Archives a redirect's request and response. */
    putRedirect(redirect: RedirectCapture): Promise<void> {
        return this.writer.add(encodeRedirect(redirect));
    }

    /**
     * Archives a revisit of a page, which the site sent as it was: its request, revisit and metadata
     * records. Rejects a revisit by identical payload digest without the digest.
     */
    async putRevisit(revisit: RevisitCapture): Promise<void> {
        await this.writer.add(encodeRevisit(revisit));
    }

    async flush(): Promise<void> {
        await this.writer.flush();
    }

    /**
     * The newest response of every archived page, in the order they were written: the indexes say
     * which response of a page is its newest, then the files are read through. A response no index
     * lists (its index was lost) is read as a page.
     */
    async *pages(): AsyncGenerator<RawPage> {
        await this.flush();
        const files = await this.warcFiles();
        const newest = await NewestCaptures.read(this.dir, files);
        for (const file of files)
            yield* archivedPages(warcFileRecords(join(this.dir, file)), await newest.superseded(file));
    }

    /** The newest archived response of the page `key`, found through the CDXJ indexes. */
    async get(key: string): Promise<RawPage | undefined> {
        await this.flush();
        const found = await newestLine(this.dir, await this.warcFiles(), key);
        if (!found?.entry.pageLength) return undefined;
        const place = { file: found.file, offset: found.entry.offset, length: found.entry.pageLength };
        return (await this.pagesAt(place)).find((page) => page.key === key);
    }

    /**
     * The URL, WARC-Date and payload digest of the newest archived response of the page `key`, as a
     * revisit refers to it: from the CDXJ indexes, which it reads through, as get() does.
     */
    async latestCapture(key: string): Promise<CaptureRef | undefined> {
        await this.flush();
        const found = await newestLine(this.dir, await this.warcFiles(), key);
        return found && { url: found.entry.url, date: found.entry.date, digest: found.entry.digest };
    }

    /** The pages whose records are in `place`'s byte range; one cut short by a crash is left out. */
    async pagesAt(place: Pick<PagePlace, 'file' | 'offset' | 'length'>): Promise<RawPage[]> {
        const pages: RawPage[] = [];
        for await (const page of archivedPages(await this.recordsAt(place))) pages.push(page);
        return pages;
    }

    /** The response record that starts `place`, as a revisit refers to it. */
    async captureAt(place: Pick<PagePlace, 'file' | 'offset' | 'length'>): Promise<CaptureRef | undefined> {
        for await (const record of await this.recordsAt(place)) {
            if (record.type !== 'response') return undefined;
            return { url: record.targetUri ?? '', date: record.date, digest: record.payloadDigest };
        }
        return undefined;
    }

    private async recordsAt(
        place: Pick<PagePlace, 'file' | 'offset' | 'length'>,
    ): Promise<AsyncGenerator<ArchivedRecord>> {
        const handle = await openFile(join(this.dir, place.file));
        try {
            const { buffer, bytesRead } = await handle.read(Buffer.alloc(place.length), 0, place.length, place.offset);
            return warcRecords([buffer.subarray(0, bytesRead)], bytesRead);
        } finally {
            await handle.close();
        }
    }

    private async append(captures: EncodedCapture[]): Promise<void> {
        const size = captures.reduce(
            (sum, capture) => sum + capture.records.reduce((bytes, record) => bytes + record.member.length, 0),
            0,
        );
        const chunks: Buffer[] = [];
        if (this.segmentBytes + size > this.maxSegmentBytes) {
            this.segment += 1;
            this.segmentBytes = 0;
            await mkdir(this.dir, { recursive: true });
            chunks.push(this.warcinfo());
        }
        const file = this.fileName(this.segment);
        let offset = this.segmentBytes + (chunks[0]?.length ?? 0);
        let lines = '';
        const places: PagePlace[] = [];
        for (const { records, page } of captures) {
            const placed = records.map((record) => {
                const at = offset;
                offset += record.member.length;
                chunks.push(record.member);
                return { ...record, offset: at };
            });
            // A page runs from its response record to the end of its capture.
            const pageStart = placed.find((record) => record.startsPage)?.offset;
            if (page && pageStart !== undefined)
                places.push({ ...page, file, offset: pageStart, length: offset - pageStart });
            for (const { indexed, member, offset: at, startsPage } of placed) {
                if (!indexed) continue;
                const entry = { ...indexed, offset: at, length: member.length, filename: file };
                lines += `${cdxjLine(startsPage ? { ...entry, pageLength: offset - at } : entry)}\n`;
            }
        }
        try {
            await appendFile(join(this.dir, file), Buffer.concat(chunks));
        } catch (error) {
            this.segmentBytes = Infinity; // how much of the chunk landed is unknown: the next starts a new file
            throw error;
        }
        this.segmentBytes = offset;
        await appendFile(join(this.dir, cdxjName(file)), lines);
        await this.options.onWritten?.(places);
    }

    private warcinfo(): Buffer {
        const { site, run, writer } = this.options;
        return warcinfoRecord(this.fileName(this.segment), {
            'dragnet-site': site,
            'dragnet-run': run,
            'dragnet-writer': writer,
        });
    }

    private fileName(index: number): string {
        return `${this.filePrefix}${String(index).padStart(6, '0')}.warc.gz`;
    }

    private isOwn(file: string): boolean {
        return file.startsWith(this.filePrefix) && /^\d{6}\./.test(file.slice(this.filePrefix.length));
    }

    private async warcFiles(): Promise<string[]> {
        const files = await readdir(this.dir).catch(() => []);
        return files.filter((file) => WARC_FILE.test(file)).sort();
    }
}

function siteDir(options: Pick<ArchiveStoreOptions, 'archiveDir' | 'site'>): string {
    return join(options.archiveDir, options.site);
}
