/**
 * `npm run reparse -- --warc`: a web archive written by another tool (webrecorder's warcio.js) from the
 * saved pages of books.toscrape.com (test/fixtures/books.toscrape.com, MANIFEST.md) at their real URLs,
 * re-parsed with the site's routes, gives the items and the dead-letter a crawl of the same pages gives
 * (the local copy crawled from 127.0.0.1, its URLs read as the real ones), and not a request is made.
 * Beside the pages: a revisit, a non-HTML response, a page of another site and, last, a record cut
 * short: each is skipped and said, and costs the pages nothing. Gzipped per record (the command, in a
 * child process) and not (in-process, over a directory, replacing a crawl's results).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { STATUS_CODES } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { WARCRecord, WARCSerializer } from 'warcio';
import site from '../../routes/books-toscrape.js';
import { decodeBody } from '../../src/fetch/http/decodeBody.js';
import { checkResponse } from '../../src/fetch/failures/responseCheck.js';
import { createLogger } from '../../src/monitor/logger.js';
import { reparse } from '../../src/parse/reparse.js';
import { WarcPages, warcFilesAt } from '../../src/parse/warcPages.js';
import { crawl } from '../../src/run.js';
import { rawPageKey } from '../../src/store/archive/rawPage.js';
import { openStorage, storeNames } from '../../src/store/datasets.js';
import type { StoredItem } from '../../src/store/records.js';
import type { DeadLetterEntry } from '../../src/vocabulary/failure.js';
import { runScript } from '../helpers/cli.js';
import { readDataset } from '../helpers/stores.js';
import { startStaticSite, type StaticSite } from '../site/static.js';

const FIXTURES = 'test/fixtures/books.toscrape.com';
const LIVE = 'https://books.toscrape.com';
const BOOK = `${LIVE}/catalogue/a-light-in-the-attic_1000/index.html`;
const MISSING = `${LIVE}/catalogue/page-2.html`;
const COVER = `${LIVE}/media/cache/fe/72/fe72f0532301ec28892ae79a629a293c.jpg`;
const OTHER_SITE = 'https://quotes.toscrape.com/';
const DATE = '2024-05-01T12:00:00Z';
const HTML = 'text/html; charset=utf-8';
const names = storeNames(site.name);

interface Capture {
    url: string;
    status?: number;
    contentType: string;
    body: Buffer;
}

function response({ url, status = 200, contentType, body }: Capture): WARCRecord {
    return WARCRecord.create(
        {
            url,
            date: DATE,
            type: 'response',
            warcVersion: 'WARC/1.1',
            statusline: `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
            httpHeaders: { 'Content-Type': contentType, 'Content-Length': String(body.length) },
        },
        [body],
    );
}

function request(url: string): WARCRecord {
    const { host, pathname } = new URL(url);
    return WARCRecord.create(
        {
            url,
            date: DATE,
            type: 'request',
            warcVersion: 'WARC/1.1',
            statusline: `GET ${pathname} HTTP/1.1`,
            httpHeaders: { Host: host },
        },
        [],
    );
}

/** The records of the archive, made anew for each file: serializing a record reads its payload. */
function records(pages: { missing: Buffer }): WARCRecord[] {
    const page = (path: string) => readFileSync(join(FIXTURES, path));
    const revisit = WARCRecord.create(
        {
            url: BOOK,
            date: DATE,
            type: 'revisit',
            warcVersion: 'WARC/1.1',
            warcHeaders: {
                'WARC-Profile': 'http://netpreserve.org/warc/1.1/revisit/identical-payload-digest',
                'WARC-Refers-To-Target-URI': BOOK,
                'WARC-Refers-To-Date': DATE,
            },
            statusline: 'HTTP/1.1 200 OK',
            httpHeaders: { 'Content-Type': HTML },
        },
        [],
    );
    return [
        WARCRecord.createWARCInfo({ filename: 'books.warc', warcVersion: 'WARC/1.1' }, { software: 'warcio.js' }),
        request(`${LIVE}/`),
        response({ url: `${LIVE}/`, contentType: HTML, body: page('index.html') }),
        request(BOOK),
        response({ url: BOOK, contentType: HTML, body: page('catalogue/a-light-in-the-attic_1000/index.html') }),
        revisit,
        response({ url: MISSING, status: 404, contentType: HTML, body: pages.missing }),
        // A JPEG's first bytes: its NULs make it binary whatever its label says.
        response({
            url: COVER,
            contentType: 'image/jpeg',
            body: Buffer.from('ffd8ffe000104a46494600010100ffd9', 'hex'),
        }),
        response({
            url: OTHER_SITE,
            contentType: HTML,
            body: readFileSync('test/fixtures/quotes.toscrape.com/index.html'),
        }),
        response({ url: `${LIVE}/index.html`, contentType: HTML, body: page('index.html') }),
    ];
}

/** The archive's bytes with its last record cut in half, and where that record starts. */
async function warcFile(gzip: boolean, pages: { missing: Buffer }): Promise<{ bytes: Buffer; lastStart: number }> {
    const serialized: Buffer[] = [];
    for (const record of records(pages)) serialized.push(Buffer.from(await WARCSerializer.serialize(record, { gzip })));
    const last = serialized.pop()!;
    const lastStart = serialized.reduce((sum, bytes) => sum + bytes.length, 0);
    return { bytes: Buffer.concat([...serialized, last.subarray(0, last.length >> 1)]), lastStart };
}

const SKIPPED = { 'cut-short': 1, 'not-html': 1, 'other-site': 1, revisit: 1 };

/** A stored item as JSON without its fetch time and raw key, the crawl's local URLs read as the live site's. */
function comparable(items: StoredItem[], origin?: string): string[] {
    return items.map(({ _fetchedAt, _rawKey, ...item }) => {
        const json = JSON.stringify(item);
        return origin ? json.replaceAll(origin, LIVE) : json;
    });
}

/** What a dead-letter entry says of the failure, whenever and however it was found. */
function failureOf({ url, label, failureClass, reason, status, attempts, stage }: DeadLetterEntry) {
    return { url, label, failureClass, reason, status, attempts, stage };
}

describe('reparse --warc of a WARC written by warcio.js', () => {
    let server: StaticSite;
    let dir: string;
    let crawlDir: string;
    let crawledItems: StoredItem[];
    let crawledDeadLetter: DeadLetterEntry[];
    let missing: Buffer;

    before(async () => {
        server = await startStaticSite(FIXTURES);
        dir = await mkdtemp(join(tmpdir(), 'dragnet-reparse-warc-'));
        crawlDir = join(dir, 'crawled');
        // The crawl of the copy: its first listing page, the one book saved, 404s for the others and page 2.
        await crawl({
            site,
            startUrls: [`${server.url}/index.html`],
            storageDir: crawlDir,
            chromiumPath: undefined,
            progressIntervalSecs: 3600,
            log: createLogger({ level: 'silent' }),
        });
        crawledItems = await readDataset<StoredItem>(crawlDir, names.items);
        crawledDeadLetter = await readDataset<DeadLetterEntry>(crawlDir, names.deadLetter);
        // The 404 page as the copy serves it, archived as the live site's.
        missing = Buffer.from(await (await fetch(`${server.url}/catalogue/page-2.html`)).arrayBuffer());
    });

    after(async () => {
        await server?.close();
        await rm(dir, { recursive: true, force: true });
    });

    it('the crawl of the copy: the one saved book, as MANIFEST.md has it, and 20 pages dead-lettered', () => {
        assert.equal(crawledItems.length, 1);
        const { title, price, availability, rating, upc, category } = crawledItems[0]!;
        assert.deepEqual(
            { title, price, availability, rating, upc, category },
            {
                title: 'A Light in the Attic',
                price: 51.77,
                availability: 22,
                rating: 3,
                upc: 'a897fe39b1053632',
                category: 'Poetry',
            },
        );
        assert.equal(crawledDeadLetter.length, 20, 'the 19 other books and page 2 are not in the copy');
    });

    it(`gzipped: the command stores the crawl's items and dead-letters what it \
dead-letters, and says what it skipped`, async () => {
        const { bytes, lastStart } = await warcFile(true, { missing });
        const warc = join(dir, 'books.warc.gz');
        await writeFile(warc, bytes);
        const storageDir = join(dir, 'from-gz');
        const requestsBefore = server.requests.length;

        const run = await runScript('src/commands/reparse.ts', [
            '--site',
            site.name,
            '--storage-dir',
            storageDir,
            '--warc',
            warc,
        ]);

        assert.equal(run.code, 0, run.stderr);
        assert.equal(server.requests.length, requestsBefore, 'not a request');
        assert.match(run.stdout, /^dragnet: re-parsed 1 pages of books-toscrape from 1 WARC file\n/);
        assert.match(run.stdout, /\n {2}items {8}0 → 1\n {2}quarantined {2}0 → 0\n {2}dead-letter {2}0 → 1\n/);
        assert.match(run.stdout, /\n {2}skipped {6}4 records: cut-short 1, not-html 1, other-site 1, revisit 1\n/);
        assert.match(run.stdout, new RegExp(`\\n {4}cut-short {4}books\\.warc\\.gz@${lastStart} `));
        assert.match(
            run.stdout,
            new RegExp(`\\n {4}not-html {5}books\\.warc\\.gz@\\d+ {2}${COVER.replaceAll('.', '\\.')}: image/jpeg\\n`),
        );
        assert.match(run.stdout, /\n {4}other-site {3}books\.warc\.gz@\d+ {2}https:\/\/quotes\.toscrape\.com\/\n/);
        assert.match(
            run.stdout,
            /\n {4}revisit {6}books\.warc\.gz@\d+ {2}https:\/\/books\.toscrape\.com\/catalogue\/a-light/,
        );

        const items = await readDataset<StoredItem>(storageDir, names.items);
        assert.deepEqual(comparable(items), comparable(crawledItems, server.url));
        assert.equal(items[0]!._rawKey, rawPageKey(BOOK, 'http'));
        assert.equal(items[0]!._fetchedAt, DATE, 'fetched when the archive says');
        const deadLetter = await readDataset<DeadLetterEntry>(storageDir, names.deadLetter);
        const crawled404 = crawledDeadLetter.find((entry) => entry.url === `${server.url}/catalogue/page-2.html`);
        assert.ok(crawled404);
        assert.deepEqual(deadLetter.map(failureOf), [{ ...failureOf(crawled404), url: MISSING }]);
        assert.equal(deadLetter[0]!.reason, 'http-404');
    });

    it(`not gzipped, in a directory: its results replace a crawl's, kept as -previous`, async () => {
        const { bytes, lastStart } = await warcFile(false, { missing });
        const warcDir = join(dir, 'warcs');
        await mkdir(warcDir);
        await writeFile(join(warcDir, 'books.warc'), bytes);
        await writeFile(join(warcDir, 'README.txt'), 'not a WARC');
        const pages = new WarcPages({
            site,
            files: await warcFilesAt(warcDir),
            reading: { decodeBody, checkResponse },
        });

        const { config, storage } = openStorage(crawlDir);
        const result = await reparse({ site, storageDir: crawlDir, config, raw: pages }).finally(() => storage.close());

        assert.deepEqual(
            {
                pages: result.pages,
                items: result.items,
                quarantined: result.quarantined,
                deadLettered: result.deadLettered,
            },
            {
                pages: 1,
                items: { before: 1, after: 1 },
                quarantined: { before: 0, after: 0 },
                deadLettered: { before: 20, after: 1 },
            },
        );
        assert.deepEqual(pages.skipped.counts, SKIPPED);
        const cut = pages.skipped.examples.find((example) => example.reason === 'cut-short');
        assert.deepEqual([cut?.file, cut?.offset], ['books.warc', lastStart]);
        assert.match(cut?.detail ?? '', /cut short/);

        assert.deepEqual(
            comparable(await readDataset<StoredItem>(crawlDir, names.items)),
            comparable(crawledItems, server.url),
        );
        assert.deepEqual((await readDataset<DeadLetterEntry>(crawlDir, names.deadLetter)).map(failureOf), [
            {
                ...failureOf(crawledDeadLetter.find((entry) => entry.url.endsWith('/catalogue/page-2.html'))!),
                url: MISSING,
            },
        ]);
        assert.deepEqual(await readDataset<StoredItem>(crawlDir, `${names.items}-previous`), crawledItems);
        assert.equal((await readDataset(crawlDir, `${names.deadLetter}-previous`)).length, 20);
    });
});
