/**
 * The WARC archive of raw pages (ArchiveStore): pages read back whole and in order, a rendered
 * page's DOM kept as a conversion of what the browser loaded, a page in another charset read back
 * from its own bytes, files rolled and each opened by a warcinfo record, a record a crash cut
 * skipped, writers sharing a directory, credentials masked, and the CDXJ index pointing at the
 * records warcio's parser reads. Then an archive of two runs, the second with revisits of both
 * profiles: each page read once, as its newest response, and the revisits indexed and skipped by
 * `reparse --warc`.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { readdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import iconv from 'iconv-lite';
import { WARCParser } from 'warcio';

import demoSite from '../../routes/demo-shop.js';
import { checkResponse } from '../../src/fetch/failures/responseCheck.js';
import { decodeBody } from '../../src/fetch/http/decodeBody.js';
import { WarcPages, warcFilesAt } from '../../src/parse/warcPages.js';
import type { Renderer } from '../../src/site/site.js';
import { ArchiveStore, type ArchiveStoreOptions, archiveDirOf } from '../../src/store/archive/archiveStore.js';
import { payloadDigestOf } from '../../src/store/archive/pageRecords.js';
import { type PageCapture, type RawPage, type RevisitCapture, rawPageKey } from '../../src/store/archive/rawPage.js';
import { type CdxjEntry, parseCdxjLine } from '../../src/store/archive/cdxj.js';
import { warcFileRecords } from '../../src/store/archive/warcReader.js';
import { tempDir } from '../helpers/tempDir.js';

const SITE = 'shop';

function page(n: number, renderer: Renderer = 'http'): PageCapture {
    const url = `http://127.0.0.1:8080/products/${n}`;
    const body = `<html><body><h1>Product ${n}</h1>\n<p>“quoted” – ünïcode 😀</p></body></html>`;
    return {
        key: rawPageKey(url, renderer),
        url,
        finalUrl: url,
        status: 200,
        headers: {
            'content-type': 'text/html; charset=utf-8',
            link: ['</a.css>; rel=preload', '</b.js>; rel=preload'],
        },
        fetchedAt: new Date(Date.UTC(2024, 0, 1, 0, 0, n)).toISOString(),
        renderer,
        label: 'product',
        body,
        // What the browser loaded, before its script filled the page in.
        ...(renderer === 'browser' ? { payload: Buffer.from(`<html><body><h1 id="p${n}"></h1></body></html>`) } : {}),
        ...(renderer === 'http' ? { charset: 'UTF-8' } : {}),
    };
}

/** What a page reads back as, but for its headers (the archive's HTTP message adds and renames some). */
function comparable(p: RawPage): Omit<RawPage, 'headers'> {
    return {
        key: p.key,
        url: p.url,
        finalUrl: p.finalUrl,
        status: p.status,
        fetchedAt: p.fetchedAt,
        renderer: p.renderer,
        label: p.label,
        body: p.body,
        charset: p.charset,
    };
}

async function readAll(store: ArchiveStore): Promise<RawPage[]> {
    const pages: RawPage[] = [];
    for await (const stored of store.pages()) pages.push(stored);
    return pages;
}

async function open(dir: string, options: Partial<ArchiveStoreOptions> = {}): Promise<ArchiveStore> {
    return ArchiveStore.open({ archiveDir: archiveDirOf(dir), site: SITE, ...options });
}

async function warcFiles(store: ArchiveStore): Promise<string[]> {
    return (await readdir(store.dir)).filter((file) => file.endsWith('.warc.gz')).sort();
}

function cdxjEntries(store: ArchiveStore, warcFile: string): CdxjEntry[] {
    const text = readFileSync(join(store.dir, warcFile.replace(/\.warc\.gz$/, '.cdxj')), 'utf8');
    return text.split('\n').flatMap((line) => parseCdxjLine(line) ?? []);
}

interface ParsedRecord {
    type: string;
    header: (name: string) => string | undefined;
    /** The block as stored: for an HTTP record, its start line and headers too. */
    block: Buffer;
}

/** The records in `bytes` as warcio's parser reads them. */
async function parsed(bytes: Buffer): Promise<ParsedRecord[]> {
    const records: ParsedRecord[] = [];
    for await (const record of new WARCParser([bytes], { parseHttp: false })) {
        const block = Buffer.from(await record.readFully(false));
        records.push({
            type: record.warcType ?? '',
            header: (name) => record.warcHeader(name) ?? undefined,
            block,
        });
    }
    return records;
}

describe('ArchiveStore', () => {
    it('reads http and rendered pages back whole, in order, each rendered one with a conversion record', async (t) => {
        const dir = await tempDir(t, 'archive');
        const store = await open(dir, { maxBatchSize: 3 });
        assert.equal(store.dir, join(dir, 'archive', SITE));
        const written = Array.from({ length: 10 }, (_, i) => page(i + 1, i % 3 === 1 ? 'browser' : 'http'));
        // Put together, so they go in batches of three; each put resolves once its page is in the file.
        await Promise.all(
            written.map((p) =>
                store.put(p).then(() => {
                    const entry = cdxjEntries(store, 'dragnet-000001.warc.gz').find((line) => line.key === p.key);
                    assert.ok(entry?.pageLength, `${p.key} is indexed when its put() resolves`);
                    const size = readFileSync(join(store.dir, 'dragnet-000001.warc.gz')).length;
                    assert.ok(
                        entry.offset + entry.pageLength <= size,
                        `${p.key} is in the file when its put() resolves`,
                    );
                }),
            ),
        );
        const read = await readAll(store);
        assert.deepEqual(read.map(comparable), written.map(comparable));
        assert.equal(read[0]!.headers['content-type'], 'text/html; charset=utf-8');
        assert.deepEqual(read[0]!.headers.link, ['</a.css>; rel=preload', '</b.js>; rel=preload']);

        const records = await parsed(gunzipSync(await readFile(join(store.dir, 'dragnet-000001.warc.gz'))));
        assert.deepEqual(
            records.slice(0, 9).map((record) => record.type),
            ['warcinfo', 'request', 'response', 'metadata', 'request', 'response', 'conversion', 'metadata', 'request'],
        );
        assert.equal(records.filter((record) => record.type === 'conversion').length, 3);
        // The rendered page's response keeps what the browser loaded, its conversion the DOM.
        const rendered = written[1]!;
        const response = records.find((r) => r.type === 'response' && r.header('WARC-Target-URI') === rendered.url)!;
        assert.ok(response.block.toString('utf8').endsWith(rendered.payload!.toString('utf8')));
        const conversion = records.find((r) => r.type === 'conversion')!;
        assert.equal(conversion.header('WARC-Refers-To'), response.header('WARC-Record-ID'));
        assert.equal(conversion.block.toString('utf8'), rendered.body);
    });

    it('reads a page in windows-1252 back from its own bytes to the same text', async (t) => {
        const dir = await tempDir(t, 'archive');
        const store = await open(dir);
        const body = '<html><body><p>café – “€5” ‰ Œuvre</p></body></html>';
        const payload = iconv.encode(body, 'windows-1252');
        assert.ok(payload.includes(0x80), 'the euro sign is one byte, 0x80');
        const legacy: PageCapture = {
            ...page(1),
            headers: { 'content-type': 'text/html; charset=windows-1252' },
            charset: 'windows-1252',
            body,
            payload,
        };
        await store.put(legacy);
        const [read] = await readAll(store);
        assert.deepEqual(comparable(read!), comparable(legacy));
        // The response holds the bytes as sent, not their UTF-8.
        const records = await parsed(gunzipSync(await readFile(join(store.dir, 'dragnet-000001.warc.gz'))));
        const response = records.find((record) => record.type === 'response')!;
        assert.ok(response.block.subarray(-payload.length).equals(payload));
        assert.deepEqual(comparable((await store.get(legacy.key))!), comparable(legacy));
    });

    it('get(key) finds the newest capture of a page through the CDXJ index, across files', async (t) => {
        const dir = await tempDir(t, 'archive');
        const store = await open(dir, { maxBatchSize: 1, maxSegmentBytes: 2000 });
        for (const n of [1, 2, 3]) await store.put(page(n));
        const refetched = { ...page(2), status: 203, body: 'second fetch', fetchedAt: new Date().toISOString() };
        await store.put(refetched);
        await store.put(page(2, 'browser'));
        assert.ok((await warcFiles(store)).length > 1, 'the pages span files');
        assert.deepEqual(comparable((await store.get(page(1).key))!), comparable(page(1)));
        assert.deepEqual(comparable((await store.get(page(2).key))!), comparable(refetched));
        assert.equal((await store.get(page(2, 'browser').key))?.renderer, 'browser');
        assert.equal(await store.get('0000-http'), undefined);
        // A second store on the same directory finds them too: the index is on disk.
        assert.deepEqual(comparable((await (await open(dir)).get(page(2).key))!), comparable(refetched));
    });

    it('starts a new file past maxSegmentBytes, each opened by a warcinfo record, and reads across them in order', async (t) => {
        const dir = await tempDir(t, 'archive');
        const maxSegmentBytes = 3000;
        const store = await open(dir, { maxBatchSize: 1, maxSegmentBytes, run: 'run-1' });
        const written = Array.from({ length: 12 }, (_, i) => page(i + 1, i % 4 === 3 ? 'browser' : 'http'));
        for (const p of written) await store.put(p);
        const files = await warcFiles(store);
        assert.ok(files.length >= 3, files.join(', '));
        assert.deepEqual(
            files,
            files.map((_, i) => `dragnet-${String(i + 1).padStart(6, '0')}.warc.gz`),
        );
        for (const file of files) {
            const bytes = await readFile(join(store.dir, file));
            const [info, ...rest] = await parsed(gunzipSync(bytes));
            assert.equal(info!.type, 'warcinfo', file);
            assert.equal(info!.header('WARC-Filename'), file);
            assert.equal(info!.header('Content-Type'), 'application/warc-fields');
            assert.match(info!.block.toString('utf8'), /^software: dragnet\r\n/m);
            assert.match(info!.block.toString('utf8'), /^dragnet-site: shop\r\n/m);
            assert.match(info!.block.toString('utf8'), /^dragnet-run: run-1\r\n/m);
            assert.ok(!rest.some((record) => record.type === 'warcinfo'), `one warcinfo record in ${file}`);
            // Past the warcinfo record, a file holds no more than maxSegmentBytes (no page here is larger).
            const infoBytes = (await warcFileRecords(join(store.dir, file)).next()).value!.length;
            assert.ok(bytes.length <= maxSegmentBytes + infoBytes, `${file}: ${bytes.length} bytes`);
            assert.ok(cdxjEntries(store, file).length > 0, `${file} has its index`);
        }
        assert.deepEqual((await readAll(store)).map(comparable), written.map(comparable));
    });

    it('a reopened archive writes a new file and reads the old ones first', async (t) => {
        const dir = await tempDir(t, 'archive');
        const first = await open(dir);
        for (const n of [1, 2]) await first.put(page(n));
        const reopened = await open(dir);
        await reopened.put(page(3));
        assert.deepEqual(await warcFiles(reopened), ['dragnet-000001.warc.gz', 'dragnet-000002.warc.gz']);
        assert.deepEqual(
            (await readAll(reopened)).map(comparable),
            [1, 2, 3].map((n) => comparable(page(n))),
        );
    });

    it('a reopened archive writes a new file when an older one is gone, not into its newest file', async (t) => {
        const dir = await tempDir(t, 'archive');
        for (const n of [1, 2, 3]) await (await open(dir)).put(page(n));
        const store = await open(dir);
        await rm(join(store.dir, 'dragnet-000001.warc.gz'));
        // The newest file ends in a record a crash cut: nothing may be appended to it.
        const newest = join(store.dir, 'dragnet-000003.warc.gz');
        await truncate(newest, (await stat(newest)).size - 100);
        const reopened = await open(dir);
        await reopened.put(page(4));
        assert.deepEqual(await warcFiles(reopened), [
            'dragnet-000002.warc.gz',
            'dragnet-000003.warc.gz',
            'dragnet-000004.warc.gz',
        ]);
        assert.deepEqual(
            (await readAll(reopened)).map((p) => p.key),
            [page(2).key, page(4).key],
        );
    });

    it('skips a record a crash cut short at the end of a file, and a reopened archive keeps writing', async (t) => {
        const dir = await tempDir(t, 'archive');
        const first = await open(dir, { maxBatchSize: 1 });
        for (const n of [1, 2, 3]) await first.put(page(n));
        // The process dies halfway through writing page 3's response record.
        const file = join(first.dir, 'dragnet-000001.warc.gz');
        const cut = cdxjEntries(first, 'dragnet-000001.warc.gz').find((entry) => entry.key === page(3).key)!;
        await truncate(file, cut.offset + Math.floor(cut.length / 2));

        assert.deepEqual(
            (await readAll(first)).map(comparable),
            [1, 2].map((n) => comparable(page(n))),
        );
        const skipped: unknown[] = [];
        const types: string[] = [];
        for await (const record of warcFileRecords(file, { onSkipped: (s) => skipped.push(s) }))
            types.push(record.type);
        assert.deepEqual(types, ['warcinfo', ...Array(2).fill(['request', 'response', 'metadata']).flat(), 'request']);
        assert.equal(skipped.length, 1, 'the cut record is said');
        // Its index line still points at the cut record: get() finds no page there, and does not throw.
        assert.equal(await first.get(page(3).key), undefined);

        const reopened = await open(dir);
        for (const n of [3, 4]) await reopened.put(page(n));
        assert.deepEqual(await warcFiles(reopened), ['dragnet-000001.warc.gz', 'dragnet-000002.warc.gz']);
        assert.deepEqual(
            (await readAll(reopened)).map(comparable),
            [1, 2, 3, 4].map((n) => comparable(page(n))),
        );
        assert.deepEqual(comparable((await reopened.get(page(3).key))!), comparable(page(3)));
    });

    it('wherever a crash cuts the last page, the pages before it read and the read does not throw', async (t) => {
        const dir = await tempDir(t, 'archive');
        const store = await open(dir, { maxBatchSize: 1 });
        for (const n of [1, 2, 3]) await store.put(page(n, n === 3 ? 'browser' : 'http'));
        const file = join(store.dir, 'dragnet-000001.warc.gz');
        const whole = await readFile(file);
        const last = cdxjEntries(store, 'dragnet-000001.warc.gz').find(
            (entry) => entry.key === page(3, 'browser').key,
        )!;
        // From inside its request record (before its response) to a byte short of its end (in the gzip trailer).
        const sizes = [whole.length - 9, whole.length - 1];
        for (let size = last.offset - 100; size < whole.length; size += 13) sizes.push(size);
        for (const size of sizes) {
            await writeFile(file, whole.subarray(0, size));
            const keys = (await readAll(store)).map((p) => p.key);
            assert.deepEqual(keys, [page(1).key, page(2).key], `cut at ${size} of ${whole.length} bytes`);
        }
    });

    it('two writers in one directory each write their own files, and either reads every page', async (t) => {
        const dir = await tempDir(t, 'archive');
        const a = await open(dir, { writer: 'worker-a' });
        const b = await open(dir, { writer: 'host/1:b' });
        await Promise.all([1, 2, 3].flatMap((n) => [a.put(page(n)), b.put(page(n + 10))]));
        // A writer reopened, and one without a name, count only their own files.
        const a2 = await open(dir, { writer: 'worker-a' });
        await a2.put(page(4));
        const plain = await open(dir);
        await plain.put(page(5));
        assert.deepEqual(await warcFiles(plain), [
            'dragnet-000001.warc.gz',
            'dragnet-host_1_b-000001.warc.gz',
            'dragnet-worker-a-000001.warc.gz',
            'dragnet-worker-a-000002.warc.gz',
        ]);
        const keysIn = async (file: string) => {
            const pages = [];
            for await (const record of warcFileRecords(join(dir, 'archive', SITE, file)))
                if (record.type === 'response') pages.push(record.targetUri);
            return pages;
        };
        assert.deepEqual(
            await keysIn('dragnet-worker-a-000001.warc.gz'),
            [1, 2, 3].map((n) => page(n).url),
        );
        assert.deepEqual(
            await keysIn('dragnet-host_1_b-000001.warc.gz'),
            [11, 12, 13].map((n) => page(n).url),
        );
        const everyPage = [5, 11, 12, 13, 1, 2, 3, 4].map((n) => page(n).key);
        assert.deepEqual(
            (await readAll(a)).map((p) => p.key),
            everyPage,
        );
        assert.deepEqual(
            (await readAll(b)).map((p) => p.key),
            everyPage,
        );
        assert.deepEqual(comparable((await b.get(page(4).key))!), comparable(page(4)));
    });

    it('hasPages says whether a site has an archived page; purge removes the site and no other', async (t) => {
        const dir = await tempDir(t, 'archive');
        const archiveDir = archiveDirOf(dir);
        assert.equal(await ArchiveStore.hasPages({ archiveDir, site: SITE }), false);
        const shop = await open(dir);
        assert.equal(await ArchiveStore.hasPages({ archiveDir, site: SITE }), false, 'opening writes no page');
        const other = await open(dir, { site: 'other' });
        await shop.put(page(1));
        await other.put(page(2));
        assert.equal(await ArchiveStore.hasPages({ archiveDir, site: SITE }), true);

        await ArchiveStore.purge({ archiveDir, site: SITE });
        await assert.rejects(stat(shop.dir), { code: 'ENOENT' });
        assert.equal(await ArchiveStore.hasPages({ archiveDir, site: SITE }), false);
        assert.deepEqual(await readAll(await open(dir)), []);
        assert.deepEqual((await readAll(other)).map(comparable), [comparable(page(2))]);
        await ArchiveStore.purge({ archiveDir, site: 'never-written' }); // nothing there: no error
    });

    it('writes no credential header of a page or a redirect, in any file', async (t) => {
        const dir = await tempDir(t, 'archive');
        const store = await open(dir);
        const secrets = ['sid=topsecret', 'xyz789', 'tok3n', 'session=abc123', 'proxypass', 'urlpass'];
        const credentials = {
            headers: {
                'content-type': 'text/html',
                'Set-Cookie': ['sid=topsecret; HttpOnly', 'csrf=xyz789; Path=/'],
                Location: 'http://reader:urlpass@127.0.0.1:8080/next',
            },
            requestHeaders: {
                Authorization: 'Bearer tok3n',
                Cookie: 'session=abc123',
                'Proxy-Authorization': 'Basic proxypass',
                'User-Agent': 'dragnet-test',
                // As a browser reports the headers it sent: the URL's Host is written once.
                host: '127.0.0.1:8080',
            },
        };
        await store.put({ ...page(1), ...credentials });
        await store.put({ ...page(2, 'browser'), ...credentials });
        await store.putRedirect({ ...page(3), ...credentials, status: 302 });
        for (const file of await readdir(store.dir)) {
            const raw = await readFile(join(store.dir, file));
            const bytes = file.endsWith('.gz') ? gunzipSync(raw) : raw;
            for (const secret of secrets) assert.ok(!bytes.includes(secret), `${file} holds "${secret}"`);
        }
        // Masked, not dropped: a reader sees which credentials there were.
        const [read] = await readAll(store);
        assert.deepEqual(read!.headers['set-cookie'], ['[redacted]', '[redacted]']);
        const records = await parsed(gunzipSync(await readFile(join(store.dir, 'dragnet-000001.warc.gz'))));
        const request = records.find((record) => record.type === 'request')!.block.toString('latin1');
        assert.match(request, /^GET \/products\/1 HTTP\/1\.1\r\nHost: 127\.0\.0\.1:8080\r\n/);
        assert.match(request, /\r\nAuthorization: \[redacted\]\r\n/);
        assert.match(request, /\r\nCookie: \[redacted\]\r\n/);
        assert.match(request, /\r\nUser-Agent: dragnet-test\r\n/);
        assert.equal(request.match(/^host:/gim)?.length, 1, 'one Host header');
    });

    it('putRedirect writes a request and a response, indexed, that make no page', async (t) => {
        const dir = await tempDir(t, 'archive');
        const store = await open(dir);
        const from = 'http://127.0.0.1:8080/p/1';
        await store.putRedirect({
            url: from,
            status: 301,
            headers: { location: page(1).url },
            fetchedAt: page(1).fetchedAt,
        });
        await store.put(page(1));
        assert.deepEqual((await readAll(store)).map(comparable), [comparable(page(1))]);
        const records = await parsed(gunzipSync(await readFile(join(store.dir, 'dragnet-000001.warc.gz'))));
        assert.deepEqual(
            records.map((record) => [record.type, record.header('WARC-Target-URI')]),
            [
                ['warcinfo', undefined],
                ['request', from],
                ['response', from],
                ['request', page(1).url],
                ['response', page(1).url],
                ['metadata', page(1).url],
            ],
        );
        const [request, response] = records.slice(1, 3);
        assert.equal(request!.header('WARC-Concurrent-To'), response!.header('WARC-Record-ID'));
        assert.match(response!.block.toString('latin1'), /^HTTP\/1\.1 301 Moved Permanently\r\n/);
        assert.match(response!.block.toString('latin1'), /\r\nlocation: http:\/\/127\.0\.0\.1:8080\/products\/1\r\n/);
        assert.equal(response!.header('WARC-Truncated'), 'unspecified', 'a redirect without its body says so');
        const [line] = cdxjEntries(store, 'dragnet-000001.warc.gz');
        assert.equal(line!.url, from);
        assert.equal(line!.status, 301);
        assert.equal(line!.key, undefined, 'no page key');
    });

    it('its CDXJ lines parse and point at the gzip member warcio reads as their record', async (t) => {
        const dir = await tempDir(t, 'archive');
        const store = await open(dir, { maxBatchSize: 2, maxSegmentBytes: 4000 });
        const written = Array.from({ length: 8 }, (_, i) => page(i + 1, i % 3 === 2 ? 'browser' : 'http'));
        await Promise.all(written.map((p) => store.put(p)));
        await store.putRedirect({
            url: 'http://127.0.0.1:8080/p/9',
            status: 301,
            headers: {},
            fetchedAt: page(9).fetchedAt,
        });
        const keys: string[] = [];
        for (const file of await warcFiles(store)) {
            const bytes = await readFile(join(store.dir, file));
            const text = await readFile(join(store.dir, file.replace(/\.warc\.gz$/, '.cdxj')), 'utf8');
            const lines = text.split('\n').filter(Boolean);
            assert.ok(lines.length > 0, file);
            for (const line of lines) {
                const entry = parseCdxjLine(line);
                assert.ok(entry, `a line of ${file} parses: ${line}`);
                assert.match(line, /^1,0,0,127:8080\)\/p(roducts)?\/\d \d{14} \{/);
                assert.equal(entry.filename, file);
                // Its offset and length are one gzip member: warcio reads it alone as the record of the URL.
                const [record, ...more] = await parsed(bytes.subarray(entry.offset, entry.offset + entry.length));
                assert.equal(more.length, 0, 'one record');
                assert.equal(record!.type, entry.key || entry.status === 301 ? 'response' : 'conversion');
                assert.equal(record!.header('WARC-Target-URI'), entry.url);
                assert.equal(record!.header('WARC-Payload-Digest'), entry.digest);
                const date = record!.header('WARC-Date')!;
                assert.equal(line.split(' ')[1], date.replace(/\D/g, '').slice(0, 14), 'its timestamp');
                assert.equal(entry.date, date, 'its WARC-Date in full');
                if (!entry.key) continue;
                // A page's line says where the whole page is: its records from the response on.
                keys.push(entry.key);
                assert.ok(entry.pageLength! > entry.length);
                const pages = await store.pagesAt({ file, offset: entry.offset, length: entry.pageLength! });
                assert.deepEqual(
                    pages.map((p) => p.key),
                    [entry.key],
                );
                const types = (await parsed(bytes.subarray(entry.offset, entry.offset + entry.pageLength!))).map(
                    (r) => r.type,
                );
                const rendered = entry.key.endsWith('-browser');
                assert.deepEqual(types, ['response', ...(rendered ? ['conversion'] : []), 'metadata']);
            }
        }
        assert.deepEqual(
            keys,
            written.map((p) => p.key),
        );
    });
});

/** The same page fetched a month later, as a second run finds it: `body` when it changed. */
function later(p: PageCapture, body = p.body): PageCapture {
    const fetchedAt = new Date(Date.parse(p.fetchedAt) + 31 * 24 * 3600_000 + 123).toISOString();
    return { ...p, fetchedAt, body };
}

/** A second run's revisit of `p`, which the site sent as it was, referring to `refersTo`. */
function revisitOf(
    p: PageCapture,
    profile: RevisitCapture['profile'],
    refersTo: RevisitCapture['refersTo'],
): RevisitCapture {
    const identical = profile === 'identical-payload-digest';
    return {
        key: p.key,
        url: p.finalUrl,
        profile,
        status: identical ? 200 : 304,
        headers: identical
            ? { 'content-type': 'text/html; charset=utf-8', 'content-encoding': 'gzip', 'set-cookie': 'sid=s3cret' }
            : { etag: '"v1"' },
        fetchedAt: later(p).fetchedAt,
        ...(identical ? { payloadDigest: payloadDigestOf(Buffer.from(p.body)) } : {}),
        refersTo,
        requestHeaders: { 'If-None-Match': '"v1"', Cookie: 'session=s3cret' },
        label: p.label,
        renderer: p.renderer,
    };
}

/**
 * Two runs of pages 1-4 (2 rendered): the second finds 1 not modified, 3 with an identical payload,
 * 4 changed, and a new page 5; it does not fetch 2.
 */
async function twoRuns(dir: string) {
    const first = [page(1), page(2, 'browser'), page(3), page(4)];
    const run1 = await open(dir);
    for (const p of first) await run1.put(p);
    const run2 = await open(dir);
    const revisits = [
        revisitOf(page(1), 'server-not-modified', await run2.latestCapture(page(1).key)),
        revisitOf(page(3), 'identical-payload-digest', await run2.latestCapture(page(3).key)),
    ];
    const changed = later(page(4), '<html><body><h1>Product 4, now on sale</h1></body></html>');
    await run2.putRevisit(revisits[0]!);
    await run2.put(changed);
    await run2.putRevisit(revisits[1]!);
    await run2.put(later(page(5)));
    return { store: run2, first, revisits, changed };
}

describe('ArchiveStore of several runs', () => {
    it('pages() gives each page once, its newest response, in the order written; a revisit is no page', async (t) => {
        const dir = await tempDir(t, 'archive');
        const { store, first, changed } = await twoRuns(dir);
        assert.deepEqual(await warcFiles(store), ['dragnet-000001.warc.gz', 'dragnet-000002.warc.gz']);
        const expected = [first[0]!, first[1]!, first[2]!, changed, later(page(5))].map(comparable);
        assert.deepEqual((await readAll(store)).map(comparable), expected);
        // As read by a store opened later: it is all in the files and their indexes.
        assert.deepEqual((await readAll(await open(dir))).map(comparable), expected);

        assert.deepEqual(comparable((await store.get(page(1).key))!), comparable(page(1)), 'a revisit leaves the page');
        assert.deepEqual(comparable((await store.get(page(4).key))!), comparable(changed));
        assert.equal(await store.get('0000-http'), undefined);
    });

    it('latestCapture() gives the URL, WARC-Date and payload digest of the newest response, whatever revisited it', async (t) => {
        const dir = await tempDir(t, 'archive');
        const { store, changed } = await twoRuns(dir);
        const records = await parsed(gunzipSync(await readFile(join(store.dir, 'dragnet-000002.warc.gz'))));
        const changedResponse = records.find(
            (r) => r.type === 'response' && r.header('WARC-Target-URI') === changed.url,
        )!;
        assert.deepEqual(await store.latestCapture(page(4).key), {
            url: changed.finalUrl,
            date: changed.fetchedAt,
            digest: changedResponse.header('WARC-Payload-Digest'),
        });
        assert.deepEqual(await store.latestCapture(page(1).key), {
            url: page(1).finalUrl,
            date: page(1).fetchedAt,
            digest: payloadDigestOf(Buffer.from(page(1).body)),
        });
        assert.equal(await store.latestCapture('0000-http'), undefined);
    });

    it('writes a revisit as its request, a revisit record of the response headers, and metadata', async (t) => {
        const dir = await tempDir(t, 'archive');
        const { store, revisits } = await twoRuns(dir);
        const bytes = gunzipSync(await readFile(join(store.dir, 'dragnet-000002.warc.gz')));
        const records = await parsed(bytes);
        assert.deepEqual(
            records.map((record) => record.type),
            ['warcinfo', 'request', 'revisit', 'metadata']
                .concat(['request', 'response', 'metadata'])
                .concat(['request', 'revisit', 'metadata'])
                .concat(['request', 'response', 'metadata']),
        );
        const [notModified, identical] = records.filter((record) => record.type === 'revisit');
        for (const [record, revisit] of [
            [notModified!, revisits[0]!],
            [identical!, revisits[1]!],
        ] as const) {
            const id = record.header('WARC-Record-ID');
            const at = records.indexOf(record);
            assert.equal(record.header('WARC-Profile'), `http://netpreserve.org/warc/1.1/revisit/${revisit.profile}`);
            assert.equal(record.header('WARC-Target-URI'), revisit.url);
            assert.equal(record.header('WARC-Date'), revisit.fetchedAt);
            assert.equal(record.header('WARC-Refers-To-Target-URI'), revisit.refersTo!.url);
            assert.equal(record.header('WARC-Refers-To-Date'), revisit.refersTo!.date);
            assert.equal(record.header('WARC-Payload-Digest'), revisit.payloadDigest);
            assert.equal(record.header('WARC-Truncated'), undefined);
            assert.equal(record.header('Content-Type'), 'application/http; msgtype=response');
            assert.equal(records[at - 1]!.header('WARC-Concurrent-To'), id, 'its request');
            assert.equal(records[at + 1]!.header('WARC-Refers-To'), id, 'its metadata');
            assert.match(records[at + 1]!.block.toString('utf8'), new RegExp(`^dragnet-key: ${revisit.key}\r\n`, 'm'));
        }
        assert.equal(notModified!.block.toString('latin1'), 'HTTP/1.1 304 Not Modified\r\netag: "v1"\r\n\r\n');
        assert.equal(
            identical!.block.toString('latin1'),
            'HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\nx-crawler-content-encoding: gzip\r\n' +
                'set-cookie: [redacted]\r\n\r\n',
            'the headers as a response record keeps them beside its decoded payload, credentials masked',
        );
        assert.ok(!bytes.includes('s3cret'), 'no credential of the revisits, in any record');

        const lines = cdxjEntries(store, 'dragnet-000002.warc.gz');
        const revisitLines = lines.filter((line) => line.mime === 'warc/revisit');
        assert.deepEqual(
            revisitLines.map(({ url, status, digest, key, pageLength }) => ({ url, status, digest, key, pageLength })),
            revisits.map(({ url, status, payloadDigest, key }) => ({
                url,
                status,
                digest: payloadDigest,
                key,
                pageLength: undefined,
            })),
        );
        const file = await readFile(join(store.dir, 'dragnet-000002.warc.gz'));
        for (const line of revisitLines) {
            const [record] = await parsed(gunzipSync(file.subarray(line.offset, line.offset + line.length)));
            assert.equal(record!.type, 'revisit');
            assert.equal(record!.header('WARC-Date'), line.date);
        }
    });

    it('rejects a revisit by identical payload digest without its digest, and writes nothing', async (t) => {
        const dir = await tempDir(t, 'archive');
        const store = await open(dir);
        const { payloadDigest: _, ...withoutDigest } = revisitOf(page(1), 'identical-payload-digest', undefined);
        await assert.rejects(store.putRevisit(withoutDigest), /needs its payload digest/);
        assert.equal(await ArchiveStore.hasPages({ archiveDir: archiveDirOf(dir), site: SITE }), false);
    });

    it('payloadDigestOf gives the payload digest put() writes, whatever the page', async (t) => {
        const dir = await tempDir(t, 'archive');
        const store = await open(dir);
        const legacy = iconv.encode('<p>café €5</p>', 'windows-1252');
        const written: [PageCapture, Buffer][] = [
            [page(1), Buffer.from(page(1).body)],
            [{ ...page(2), charset: 'windows-1252', body: '<p>café €5</p>', payload: legacy }, legacy],
            [page(3, 'browser'), page(3, 'browser').payload!],
        ];
        for (const [p] of written) await store.put(p);
        const lines = cdxjEntries(store, 'dragnet-000001.warc.gz');
        for (const [p, payload] of written) {
            const digest = payloadDigestOf(payload);
            assert.equal(lines.find((line) => line.key === p.key)?.digest, digest, p.key);
            assert.equal((await store.latestCapture(p.key))?.digest, digest, p.key);
        }
    });

    it('the newest response is the latest WARC-Date, whichever file holds it; at one moment, the one written later', async (t) => {
        const dir = await tempDir(t, 'archive');
        const [a, b] = [await open(dir, { writer: 'a' }), await open(dir, { writer: 'b' })];
        // a's file comes first in the archive's order, but holds the later capture.
        const newer = later(page(1), 'newer');
        await a.put(newer);
        await b.put({ ...page(1), body: 'older' });
        const reader = await open(dir);
        assert.deepEqual((await readAll(reader)).map(comparable), [comparable(newer)]);
        assert.equal((await reader.get(page(1).key))?.body, 'newer');
        // Two captures at the same moment: the one written later is the newest.
        await b.put({ ...newer, body: 'newer still' });
        assert.deepEqual(
            (await readAll(reader)).map((p) => p.body),
            ['newer still'],
        );
        assert.equal((await reader.latestCapture(page(1).key))?.date, newer.fetchedAt);
    });

    it('reads the pages of a file whose index is gone, and takes an older line without warcDate to the second', async (t) => {
        const dir = await tempDir(t, 'archive');
        const store = await open(dir);
        for (const n of [1, 2])
            await store.put({ ...page(n), fetchedAt: new Date(Date.UTC(2024, 0, 1, 0, 0, n, 500)).toISOString() });
        const index = join(store.dir, 'dragnet-000001.cdxj');
        const text = await readFile(index, 'utf8');
        await writeFile(index, text.replace(/,"warcDate":"[^"]+"/g, ''));
        assert.equal((await store.latestCapture(page(2).key))?.date, '2024-01-01T00:00:02Z');
        await rm(index);
        assert.deepEqual(
            (await readAll(store)).map((p) => p.key),
            [page(1).key, page(2).key],
        );
    });

    it('reparse --warc reads its responses and skips its revisits, as revisits', async (t) => {
        const dir = await tempDir(t, 'archive');
        const { store } = await twoRuns(dir);
        const pages = new WarcPages({
            site: demoSite,
            files: await warcFilesAt(store.dir),
            reading: { decodeBody, checkResponse },
        });
        const urls: string[] = [];
        for await (const p of pages.pages()) urls.push(p.url);
        // Every response a WARC holds is a page to reparse --warc, the superseded ones too.
        assert.deepEqual(
            urls,
            [1, 2, 3, 4, 4, 5].map((n) => page(n).url),
        );
        assert.deepEqual(pages.skipped.counts, { revisit: 2 });
        assert.deepEqual(
            pages.skipped.examples.map((example) => [example.reason, example.detail]),
            [
                ['revisit', page(1).url],
                ['revisit', page(3).url],
            ],
        );
    });
});
