/**
 * `npm run reparse -- --convert-raw`: the raw pages of the JSON-lines store that came before the WARC
 * archive (store/archive/legacyRawPages.ts: gzip members of JSON lines of RawPage objects, or plain
 * lines, a line a crash cut short left out) are archived once and the old segments removed. Until
 * then a plain re-parse refuses to replace the site's results with nothing, and says to convert. The
 * old store kept no bytes: a page's body is archived encoded in its charset, and reads back as it was.
 * The pages are the saved books.toscrape.com pages (test/fixtures/books.toscrape.com).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { it } from 'node:test';
import iconv from 'iconv-lite';
import site from '../../routes/books-toscrape.js';
import { reparse } from '../../src/parse/reparse.js';
import { ArchiveStore } from '../../src/store/archive/archiveStore.js';
import { legacyRawDir } from '../../src/store/archive/legacyRawPages.js';
import { type RawPage, rawPageKey } from '../../src/store/archive/rawPage.js';
import { warcFileRecords } from '../../src/store/archive/warcReader.js';
import { openStorage, storeNames } from '../../src/store/datasets.js';
import type { StoredItem } from '../../src/store/records.js';
import { assertOneLineError, runScript } from '../helpers/cli.js';
import { readDataset } from '../helpers/stores.js';
import { tempDir } from '../helpers/tempDir.js';

const LIVE = 'https://books.toscrape.com';
const BOOK_HTML = readFileSync(
    'test/fixtures/books.toscrape.com/catalogue/a-light-in-the-attic_1000/index.html',
    'utf8',
);

function oldPage(path: string, label: string, body: string, charset: string): RawPage {
    const url = `${LIVE}${path}`;
    return {
        key: rawPageKey(url, 'http'),
        url,
        finalUrl: url,
        status: 200,
        headers: { 'content-type': `text/html; charset=${charset}` },
        fetchedAt: '2025-03-01T08:00:00.000Z',
        renderer: 'http',
        label,
        body,
        charset,
    };
}

const PAGES = [
    oldPage('/', 'listing', readFileSync('test/fixtures/books.toscrape.com/index.html', 'utf8'), 'UTF-8'),
    oldPage('/catalogue/a-light-in-the-attic_1000/index.html', 'book', BOOK_HTML, 'UTF-8'),
    // The same book as served in windows-1252: its £ is one byte, 0xA3.
    oldPage('/catalogue/a-light-in-the-attic-1252_1000/index.html', 'book', BOOK_HTML, 'windows-1252'),
];

const line = (page: RawPage) => `${JSON.stringify(page)}\n`;

/** The old store's segments: one of two gzip members, one of plain lines ending in a line a crash cut. */
async function writeOldSegments(storageDir: string): Promise<void> {
    const dir = legacyRawDir(storageDir, site.name);
    await mkdir(dir, { recursive: true });
    const [listing, book, book1252] = PAGES as [RawPage, RawPage, RawPage];
    await writeFile(join(dir, 'pages-000001.jsonl.gz'), Buffer.concat([gzipSync(line(listing)), gzipSync(line(book))]));
    await writeFile(join(dir, 'pages-000002.jsonl'), `${line(book1252)}${line(book).slice(0, 200)}`);
}

it(`refuses a plain re-parse until the old raw pages are converted, converts \
them into the archive, removes them, and the archive re-parses them`, async (t) => {
    const storageDir = await tempDir(t, 'convert-raw');
    const archiveDir = join(storageDir, 'elsewhere');
    await writeOldSegments(storageDir);
    const where = ['--site', site.name, '--storage-dir', storageDir, '--archive-dir', archiveDir];

    const refused = await runScript('src/commands/reparse.ts', where);
    assertOneLineError(
        refused,
        2,
        /the raw pages of books-toscrape in .*raw_pages\/books-toscrape are in the JSON-lines format .*--convert-raw/,
    );
    assert.equal(existsSync(archiveDir), false, 'the refused re-parse created the archive');

    const converted = await runScript('src/commands/reparse.ts', [...where, '--convert-raw']);
    assert.equal(converted.code, 0, converted.stderr);
    assert.equal(
        converted.stdout,
        `dragnet: converted 3 raw pages of books-toscrape into the archive in ${join(archiveDir, site.name)}\n`,
    );
    assert.equal(existsSync(legacyRawDir(storageDir, site.name)), false, 'the old segments are removed');

    const archive = await ArchiveStore.open({ archiveDir, site: site.name });
    const archived: RawPage[] = [];
    for await (const page of archive.pages()) archived.push(page);
    assert.deepEqual(
        archived.map(({ headers, ...page }) => page),
        PAGES.map(({ headers, ...page }) => page),
        'every page as it was stored, in order',
    );
    assert.equal(archived[2]?.headers['content-type'], 'text/html; charset=windows-1252');
    const payloads = new Map<string, Buffer>();
    for (const file of (await readdir(archive.dir)).filter((name) => name.endsWith('.warc.gz')))
        for await (const record of warcFileRecords(join(archive.dir, file)))
            if (record.type === 'response') payloads.set(record.targetUri ?? '', record.content);
    assert.deepEqual(payloads.get(PAGES[2]!.url), iconv.encode(BOOK_HTML, 'windows-1252'), 'the body in its charset');
    assert.deepEqual(payloads.get(PAGES[1]!.url), Buffer.from(BOOK_HTML));

    const { config, storage } = openStorage(storageDir);
    const result = await reparse({ site, storageDir, archiveDir, config }).finally(() => storage.close());
    assert.deepEqual([result.pages, result.items.after], [2, 2]);
    const items = await readDataset<StoredItem>(storageDir, storeNames(site.name).items);
    const [utf8, windows1252] = items.map(({ _url, _rawKey, _fetchedAt, ...fields }) => fields);
    assert.equal(utf8?.title, 'A Light in the Attic');
    assert.deepEqual(windows1252, utf8, 'the same book, whatever its charset');
});
