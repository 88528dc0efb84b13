/**
 * Raw pages, kept apart from parsed items so pages can be re-parsed without re-crawling.
 *
 * Layout: `<storageDir>/raw_pages/<site>/pages-000001.jsonl.gz`, one JSON object per line, gzipped:
 * each batch is appended as one gzip member (a gzip file may hold many, read as one stream), so a
 * page costs ~1/5 of its size on disk and a write is one append of a few hundred KB. A new segment
 * starts past `maxSegmentBytes` (compressed). A member or line cut short by a crash is skipped on
 * read, so a killed process never leaves the store unreadable. Segments of plain JSON lines
 * (`pages-NNNNNN.jsonl`, written before compression) are read as they are.
 *
 * `put()` resolves once the page is written (a group commit, groupWriter.ts), and the page's
 * items are committed after that (parse/pageHandler.ts): a process killed at any moment never
 * leaves an item whose raw page is missing.
 *
 * Several processes may write into one site's directory (a fleet's workers on a shared volume):
 * each names its own segment files (`writer`: `pages-<writer>-NNNNNN.jsonl.gz`), so no two append
 * to one file, and an index (`onWritten`: postgres/indexedRawPages.ts) records which gzip member
 * holds each page, read back alone by `pagesIn()`.
 *
 * A page is stored with its credential headers masked (Set-Cookie, Authorization, …: see
 * `storedPage`), by every backend: a raw page is for re-parsing, which never needs them.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { appendFile, mkdir, open as openFile, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { constants, createGunzip, gunzip as gunzipCallback, gzip as gzipCallback } from 'node:zlib';
import type { Renderer } from '../site/site.js';
import { redactHeaders } from '../vocabulary/redact.js';
import { GroupWriter } from './groupWriter.js';

const gzip = promisify(gzipCallback);
const gunzip = promisify(gunzipCallback);

/**
 * zlib's fastest level: HTML with a shared page chrome still shrinks ~5x (the pages of one batch share
 * the 32 KB window), at a fraction of the default level's CPU; compressing runs on libuv's threads.
 */
const COMPRESSION_LEVEL = constants.Z_BEST_SPEED;

export interface RawPage {
    /** Identifies the page; parsed items and quarantine entries point here. */
    key: string;
    url: string;
    finalUrl: string;
    status: number;
    headers: Record<string, string | string[] | undefined>;
    fetchedAt: string;
    renderer: Renderer;
    label: string;
    /** The page as text: the HTTP stage decoded its bytes (in `charset`), a browser serialized its DOM. */
    body: string;
    /** The encoding the body was decoded from (`UTF-8`, `windows-1252`, …); absent for a rendered page. */
    charset?: string;
}

export interface RawStoreOptions {
    storageDir: string;
    site: string;
    /** Most pages per write: pages that arrive while one write is under way go together in the next. Default: 50. */
    maxBatchSize?: number;
    /** Size (compressed) at which a new segment file starts. Default: 64 MiB. */
    maxSegmentBytes?: number;
    /**
     * This process's name on its segment files, `pages-<writer>-NNNNNN.jsonl.gz` (characters other than
     * letters, digits, `.`, `_` and `-` become `_`), so that processes sharing the directory never
     * append to one file. Default: none, `pages-NNNNNN.jsonl.gz`.
     */
    writer?: string;
    /** Called with each batch once it is on disk, before its pages' `put()`s resolve: an index's hook. */
    onWritten?: (pages: PageEntry[], member: SegmentMember) => Promise<void>;
}

/** One gzip member of a segment file: the pages of one batch. */
export interface SegmentMember {
    /** The segment file's name, in the site's directory. */
    file: string;
    offset: number;
    length: number;
}

/** What an index keeps of a stored page besides its place. */
export type PageEntry = Pick<RawPage, 'key' | 'url' | 'fetchedAt'>;

/** A page's JSON line, encoded, and what an index keeps of it. */
interface Line {
    bytes: Buffer;
    entry: PageEntry;
}

/** The key of a page fetched from `finalUrl` by `renderer`: stable, so re-fetches overwrite nothing. */
export function rawPageKey(finalUrl: string, renderer: Renderer): string {
    return `${createHash('sha1').update(finalUrl).digest('hex').slice(0, 20)}-${renderer}`;
}

/** The page as a store keeps it: its headers without credentials (vocabulary/redact.ts). */
export function storedPage(page: RawPage): RawPage {
    return { ...page, headers: redactHeaders(page.headers) };
}

export class RawStore {
    readonly dir: string;
    /** Pages as their JSON lines, encoded: a line waiting for its write holds no page string on the V8 heap. */
    private readonly writer: GroupWriter<Line>;
    private readonly maxSegmentBytes: number;
    private readonly segmentPrefix: string;
    private readonly onWritten: RawStoreOptions['onWritten'];
    private segment = 0;
    private segmentBytes = Infinity;

    private constructor(options: RawStoreOptions) {
        this.dir = siteDir(options);
        this.maxSegmentBytes = options.maxSegmentBytes ?? 64 * 1024 * 1024;
        this.segmentPrefix = options.writer ? `pages-${options.writer.replace(/[^\w.-]/g, '_')}-` : 'pages-';
        this.onWritten = options.onWritten;
        this.writer = new GroupWriter({
            write: (lines) => this.append(lines),
            maxBatchSize: options.maxBatchSize ?? 50,
        });
    }

    /**
     * Opens the store. Writing starts in a new segment, so a line a crash cut short in the
     * last one is never glued to the next page.
     */
    static async open(options: RawStoreOptions): Promise<RawStore> {
        const store = new RawStore(options);
        await mkdir(store.dir, { recursive: true });
        store.segment = (await store.segmentFiles()).filter((file) => store.isOwn(file)).length;
        return store;
    }

    /** Whether any page of the site is stored in `storageDir`. Creates nothing. */
    static async hasPages(options: Pick<RawStoreOptions, 'storageDir' | 'site'>): Promise<boolean> {
        const files = await readdir(siteDir(options)).catch(() => []);
        return files.some((file) => SEGMENT_FILE.test(file));
    }

    /** Removes every stored page of the site. */
    static async purge(options: Pick<RawStoreOptions, 'storageDir' | 'site'>): Promise<void> {
        await rm(siteDir(options), { recursive: true, force: true });
    }

    /**
     * Stores a page: resolves once it is written to its segment file. Not an async function: one
     * would keep `page`, its HTML with it, alive in its frame until the group write resolves.
     */
    put(page: RawPage): Promise<void> {
        const { key, url, fetchedAt } = page;
        return this.writer.add({
            bytes: encodedLine(JSON.stringify(storedPage(page))),
            entry: { key, url, fetchedAt },
        });
    }

    async flush(): Promise<void> {
        await this.writer.flush();
    }

    /** Every stored page, oldest first. */
    async *pages(): AsyncGenerator<RawPage> {
        await this.flush();
        for (const file of await this.segmentFiles()) {
            const lines = createInterface({ input: segmentStream(join(this.dir, file)), crlfDelay: Infinity });
            for await (const line of lines) {
                const page = parseLine(line);
                if (page) yield page;
            }
        }
    }

    /** The newest stored page with this key. */
    async get(key: string): Promise<RawPage | undefined> {
        let found: RawPage | undefined;
        for await (const page of this.pages()) {
            if (page.key === key) found = page;
        }
        return found;
    }

    /** The pages of one gzip member, as `onWritten` placed them: a line cut short by a crash is left out. */
    async pagesIn(member: SegmentMember): Promise<RawPage[]> {
        const handle = await openFile(join(this.dir, member.file));
        try {
            const { buffer, bytesRead } = await handle.read(
                Buffer.alloc(member.length),
                0,
                member.length,
                member.offset,
            );
            const text = await gunzip(buffer.subarray(0, bytesRead), { finishFlush: constants.Z_SYNC_FLUSH });
            return text
                .toString('utf8')
                .split('\n')
                .map(parseLine)
                .filter((page) => page !== undefined);
        } finally {
            await handle.close();
        }
    }

    private async append(lines: Line[]): Promise<void> {
        const chunk = await gzip(Buffer.concat(lines.map((line) => line.bytes)), { level: COMPRESSION_LEVEL });
        const bytes = chunk.length;
        if (this.segmentBytes + bytes > this.maxSegmentBytes) {
            this.segment += 1;
            this.segmentBytes = 0;
            await mkdir(this.dir, { recursive: true });
        }
        const member = { file: this.segmentName(this.segment), offset: this.segmentBytes, length: bytes };
        try {
            await appendFile(join(this.dir, member.file), chunk);
        } catch (error) {
            this.segmentBytes = Infinity; // how much of the chunk landed is unknown: the next starts a new segment
            throw error;
        }
        this.segmentBytes += bytes;
        await this.onWritten?.(
            lines.map((line) => line.entry),
            member,
        );
    }

    private segmentName(index: number): string {
        return `${this.segmentPrefix}${String(index).padStart(6, '0')}.jsonl.gz`;
    }

    private isOwn(file: string): boolean {
        return file.startsWith(this.segmentPrefix) && /^\d{6}\./.test(file.slice(this.segmentPrefix.length));
    }

    private async segmentFiles(): Promise<string[]> {
        const files = await readdir(this.dir).catch(() => []);
        return files.filter((file) => SEGMENT_FILE.test(file)).sort();
    }
}

function siteDir(options: Pick<RawStoreOptions, 'storageDir' | 'site'>): string {
    return join(options.storageDir, 'raw_pages', options.site);
}

/** Lines up to this many UTF-16 units are encoded through `scratch`; longer ones by `Buffer.from`. */
const SCRATCH_MAX_CHARS = 256 * 1024;
/** UTF-8 takes at most 3 bytes for one UTF-16 unit (a surrogate pair: 4 for 2), and the newline 1. */
const scratch = Buffer.allocUnsafe(3 * SCRATCH_MAX_CHARS + 1);

/**
 * `json` and a newline as UTF-8. Most pages hold a character above U+00FF (`’`, `…`, `€`, `★`), so
 * V8 keeps them as two-byte strings, and `Buffer.from` of one reads it twice, to measure its UTF-8
 * length and then to write it: 41 µs for a real-weight product page's line, against 22 µs written
 * into a buffer large enough for any line of its length, and copied out at its length.
 */
function encodedLine(json: string): Buffer {
    if (json.length > SCRATCH_MAX_CHARS) return Buffer.from(`${json}\n`);
    const length = scratch.write(json);
    scratch[length] = 0x0a;
    const line = Buffer.allocUnsafe(length + 1);
    scratch.copy(line, 0, 0, length + 1);
    return line;
}

/**
 * A segment: gzipped, or plain JSON lines as written before compression; both sort by their number,
 * a writer's by its name first.
 */
const SEGMENT_FILE = /^pages-(?:[\w.-]+-)?\d{6}\.jsonl(?:\.gz)?$/;

/**
 * A segment's text. A gzip member cut short by a crash ends the stream where its bytes end (a sync
 * flush instead of an "unexpected end of file" error); its last, partial line is dropped by `parseLine`.
 */
function segmentStream(path: string): Readable {
    const file = createReadStream(path);
    if (!path.endsWith('.gz')) return file;
    const gunzip = createGunzip({ finishFlush: constants.Z_SYNC_FLUSH });
    file.on('error', (error) => gunzip.destroy(error));
    return file.pipe(gunzip);
}

function parseLine(line: string): RawPage | undefined {
    if (line.trim() === '') return undefined;
    try {
        return JSON.parse(line) as RawPage;
    } catch {
        return undefined; // a line cut short by a crash
    }
}
