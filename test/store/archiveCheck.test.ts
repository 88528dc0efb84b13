/**
 * A real crawl's archive, checked by a reader that shares no code with the writer: the fixture shop
 * (a fifth of its product pages filled in only by script, so rendered by the browser) is crawled
 * in-process, and every record of every WARC file is read with warcio.js's parser and its digests
 * computed here (SHA-1, RFC 4648 base32 written below). Every stored item's page must be there as
 * a response record of its URL, and every rendered page as a conversion record of that response.
 * Then an archive of two runs, the second with revisits of both profiles (written through the
 * archive's API, as the crawl writes them), checked the same way, each revisit against the response
 * it refers to, and its CDXJ line against warcio.js's own indexer.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CDXIndexer, WARCParser } from 'warcio';

import siteDefinition from '../../routes/demo-shop.js';
import { findChromium } from '../../src/fetch/browser/chromium.js';
import { ArchiveStore, archiveDirOf } from '../../src/store/archive/archiveStore.js';
import { parseCdxjLine } from '../../src/store/archive/cdxj.js';
import { payloadDigestOf } from '../../src/store/archive/pageRecords.js';
import { type PageCapture, rawPageKey } from '../../src/store/archive/rawPage.js';
import { crawlShop, type ShopCrawl } from '../helpers/crawlShop.js';

const chromiumPath = findChromium();

interface ReadRecord {
    file: string;
    /** The record's first line: `WARC/1.1`. */
    version: string;
    type: string;
    id: string;
    targetUri?: string;
    header: (name: string) => string | undefined;
    contentLength: number;
    /** The block, as stored: Content-Length bytes after the blank line that ends the WARC headers. */
    block: Buffer;
    /** warcio's reading of an HTTP record's start line, and its payload: the block past the HTTP headers. */
    http?: { startLine: string; payload: Buffer };
}

/** RFC 4648 base32, unpadded: each 5 bits of the input, most significant first, a letter or a digit 2-7. */
function base32(bytes: Buffer): string {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
    const bits = [...bytes].map((byte) => byte.toString(2).padStart(8, '0')).join('');
    let text = '';
    for (let at = 0; at < bits.length; at += 5)
        text += alphabet[Number.parseInt(bits.slice(at, at + 5).padEnd(5, '0'), 2)];
    return text;
}

function sha1(bytes: Buffer): string {
    return `sha1:${base32(createHash('sha1').update(bytes).digest())}`;
}

/** The body of an HTTP message: everything past the first CRLF CRLF. */
function httpBody(block: Buffer): Buffer {
    const end = block.indexOf('\r\n\r\n');
    assert.ok(end >= 0, 'an HTTP message has a blank line after its headers');
    return block.subarray(end + 4);
}

/**
 * Every record of a WARC file, read twice by warcio: once as stored (the block, for its digest),
 * once with its HTTP message parsed. Fails unless the records run to the end of the file.
 */
async function recordsOf(path: string, file: string): Promise<ReadRecord[]> {
    const records: ReadRecord[] = [];
    const raw = new WARCParser(createReadStream(path), { parseHttp: false });
    let end = 0;
    for await (const record of raw) {
        const block = Buffer.from(await record.readFully(false));
        end = raw.offset + raw.recordLength;
        records.push({
            file,
            version: record.warcHeaders.statusline,
            type: record.warcType ?? '',
            id: record.warcHeader('WARC-Record-ID') ?? '',
            targetUri: record.warcTargetURI ?? undefined,
            header: (name) => record.warcHeader(name) ?? undefined,
            contentLength: Number(record.warcHeader('Content-Length')),
            block,
        });
    }
    assert.equal(end, (await stat(path)).size, `${file}: the records run to the end of the file`);
    let index = 0;
    for await (const record of new WARCParser(createReadStream(path), { parseHttp: true })) {
        const payload = Buffer.from(await record.readFully(false));
        const mine = records[index++];
        assert.equal(record.warcHeader('WARC-Record-ID'), mine?.id, `${file}: the same records both times`);
        if (record.httpHeaders) mine!.http = { startLine: record.httpHeaders.statusline, payload };
    }
    assert.equal(index, records.length);
    return records;
}

/** Every record is WARC/1.1 with the standard's mandatory fields, each file opened by warcinfo. */
function checkRecords(files: string[], records: ReadRecord[]): void {
    for (const file of files) assert.equal(records.find((record) => record.file === file)?.type, 'warcinfo', file);
    for (const record of records) {
        const where = `${record.file}: ${record.type} ${record.id}`;
        assert.equal(record.version, 'WARC/1.1', where);
        assert.match(record.id, /^<urn:uuid:[0-9a-f-]{36}>$/, where);
        assert.ok(!Number.isNaN(Date.parse(record.header('WARC-Date') ?? '')), where);
        assert.equal(record.block.length, record.contentLength, `${where}: its block is Content-Length bytes`);
        assert.ok(record.header('Content-Type'), where);
    }
    assert.equal(new Set(records.map((record) => record.id)).size, records.length, 'record IDs are unique');
    for (const record of records.filter((r) => ['request', 'response', 'revisit'].includes(r.type))) {
        assert.ok(record.http, `${record.type} ${record.targetUri}: warcio reads its HTTP message`);
        const msgtype = record.type === 'request' ? 'request' : 'response';
        assert.equal(record.header('Content-Type'), `application/http; msgtype=${msgtype}`);
    }
    for (const request of records.filter((record) => record.type === 'request')) {
        assert.match(request.http!.startLine, /^GET \/\S* HTTP\/1\.1$/, request.targetUri);
        const hosts = request.block.toString('latin1').match(/^host:/gim) ?? [];
        assert.equal(hosts.length, 1, `${request.targetUri}: one Host header`);
    }
    for (const response of records.filter((record) => record.type === 'response' || record.type === 'revisit'))
        assert.match(response.http!.startLine, /^HTTP\/1\.1 \d{3}\b/, response.targetUri);
}

/**
 * Every block digest matches its block, and every payload digest its payload. A revisit holds no
 * payload: its payload digest is checked against the response it refers to (checkRevisits).
 */
function checkDigests(records: ReadRecord[]): void {
    for (const record of records) {
        const where = `${record.file}: ${record.type} of ${record.targetUri ?? 'no URI'}`;
        assert.equal(record.header('WARC-Block-Digest'), sha1(record.block), `${where}: block digest`);
        const payloadDigest = record.header('WARC-Payload-Digest');
        if (record.type === 'response' || record.type === 'request') {
            // The payload, found here past the first CRLF CRLF, is what warcio reads past the HTTP headers.
            const payload = httpBody(record.block);
            assert.ok(payload.equals(record.http!.payload), `${where}: payload`);
            if (record.type === 'response') assert.ok(payloadDigest, `${where} has a payload digest`);
            if (payloadDigest) assert.equal(payloadDigest, sha1(payload), `${where}: payload digest`);
        } else if (record.type === 'conversion') {
            assert.equal(payloadDigest, sha1(record.block), `${where}: payload digest`);
        } else if (record.type === 'revisit') {
            assert.equal(httpBody(record.block).length, 0, `${where}: the block ends with the HTTP headers`);
        } else {
            assert.equal(payloadDigest, undefined, `${where} has no payload`);
        }
    }
}

/**
 * Every request is concurrent to a response or revisit of its URL; every conversion and metadata
 * record refers to one of its URL.
 */
function checkLinks(records: ReadRecord[]): void {
    const byId = new Map(records.map((record) => [record.id, record]));
    for (const request of records.filter((record) => record.type === 'request')) {
        const response = byId.get(request.header('WARC-Concurrent-To') ?? '');
        assert.ok(response?.type === 'response' || response?.type === 'revisit', `the request of ${request.targetUri}`);
        assert.equal(response.targetUri, request.targetUri);
    }
    for (const record of records.filter((r) => r.type === 'conversion' || r.type === 'metadata')) {
        const response = byId.get(record.header('WARC-Refers-To') ?? '');
        assert.ok(
            response?.type === 'response' || response?.type === 'revisit',
            `the ${record.type} of ${record.targetUri}`,
        );
        assert.equal(response.targetUri, record.targetUri);
        if (record.type === 'conversion') assert.equal(response.type, 'response');
    }
}

/** The `name: value` lines of an application/warc-fields block. */
function warcFields(record: ReadRecord): Record<string, string> {
    return Object.fromEntries(
        record.block
            .toString('utf8')
            .split('\r\n')
            .filter(Boolean)
            .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]),
    );
}

describe('the archive of a crawl of the fixture shop', { skip: chromiumPath ? false : 'no Chromium found' }, () => {
    let run: ShopCrawl;
    let files: string[];
    let records: ReadRecord[];
    const byId = new Map<string, ReadRecord>();
    const ofType = (type: string) => records.filter((record) => record.type === type);

    before(async () => {
        run = await crawlShop(
            {
                seed: 17,
                products: 80,
                categories: 2,
                productsPerPage: 20,
                scriptOnlyRate: 0.2,
                transientFailureRate: 0,
                notFoundLinks: 2,
            },
            { maxConcurrency: 10, browserConcurrency: 2, requestTimeoutSecs: 15, adaptiveTimeout: false, chromiumPath },
        );
        const dir = join(archiveDirOf(run.storageDir), siteDefinition.name);
        files = (await readdir(dir)).filter((file) => file.endsWith('.warc.gz')).sort();
        records = [];
        for (const file of files) records.push(...(await recordsOf(join(dir, file), file)));
        for (const record of records) byId.set(record.id, record);
    });

    after(() => run?.close());

    test("the test's base32 gives RFC 4648's test vectors", () => {
        const vectors = { f: 'MY', fo: 'MZXQ', foo: 'MZXW6', foob: 'MZXW6YQ', fooba: 'MZXW6YTB', foobar: 'MZXW6YTBOI' };
        for (const [text, encoded] of Object.entries(vectors)) assert.equal(base32(Buffer.from(text)), encoded);
    });

    test('the crawl stored every product, some rendered by the browser', () => {
        assert.equal(run.exitCode, 0);
        assert.equal(run.items.length, run.shop.products.length);
        const rendered = run.items.filter((item) => item._renderer === 'browser').length;
        assert.equal(rendered, run.shop.products.filter((product) => product.scriptOnly).length);
        assert.ok(rendered > 0);
        assert.ok(files.length > 0);
    });

    test("every record parses as WARC/1.1 with the standard's mandatory fields, each file opened by warcinfo", () =>
        checkRecords(files, records));

    test('every block digest and every payload digest matches', () => checkDigests(records));

    test('every request is concurrent to a response of its URL; every conversion refers to a response of its URL', () => {
        assert.ok(ofType('request').length >= run.items.length);
        assert.ok(ofType('conversion').length > 0);
        checkLinks(records);
    });

    test('every redirect the shop sent is a response record of its URL, and no page', () => {
        const redirects = Object.entries(run.shop.stats().byPath).filter(([, counts]) => counts['301']);
        assert.ok(redirects.length > 0, 'the shop links aliases that redirect');
        const pageResponses = new Set(ofType('metadata').map((metadata) => metadata.header('WARC-Refers-To')));
        for (const [path] of redirects) {
            const url = `${run.shop.url}${path}`;
            const response = ofType('response').find((record) => record.targetUri === url);
            assert.match(response?.http?.startLine ?? '', /^HTTP\/1\.1 301\b/, url);
            assert.ok(!pageResponses.has(response!.id), `${url} has no metadata record`);
        }
    });

    test("every stored item's page is a response record of its URL, each rendered one with its conversion", () => {
        // A page's metadata record names its key and refers to its response.
        const pages = new Map<string, { response: ReadRecord; renderer: string }[]>();
        for (const metadata of ofType('metadata')) {
            const fields = warcFields(metadata);
            assert.equal(metadata.header('Content-Type'), 'application/warc-fields');
            const response = byId.get(metadata.header('WARC-Refers-To') ?? '');
            assert.equal(response?.type, 'response', `the metadata of ${metadata.targetUri}`);
            const key = fields['dragnet-key'];
            assert.ok(key, `the metadata of ${metadata.targetUri} names its page`);
            const renderer = fields['dragnet-renderer'];
            assert.ok(
                renderer === 'http' || renderer === 'browser',
                `the metadata of ${metadata.targetUri}: ${renderer}`,
            );
            pages.set(key, [...(pages.get(key) ?? []), { response, renderer }]);
        }
        const conversionOf = new Map(ofType('conversion').map((record) => [record.header('WARC-Refers-To'), record]));
        for (const item of run.items) {
            const captures = pages.get(item._rawKey) ?? [];
            assert.ok(
                captures.some(({ response }) => response.targetUri === item._url),
                `${item._url} (${item._rawKey}) has a response record of its URL`,
            );
            for (const { response, renderer } of captures) {
                assert.equal(renderer, item._renderer, item._url);
                assert.match(response.http!.startLine, /^HTTP\/1\.1 200\b/, item._url);
                if (renderer !== 'browser') continue;
                const conversion = conversionOf.get(response.id);
                assert.ok(conversion, `${item._url}, rendered, has a conversion record`);
                // The DOM the browser made: what the item's values were read from.
                assert.ok(conversion.block.toString('utf8').includes(String(item.title)), item._url);
            }
        }
        // Every page the browser rendered, item or not (a listing page), has its conversion.
        for (const captures of pages.values())
            for (const { response, renderer } of captures)
                if (renderer === 'browser') assert.ok(conversionOf.get(response.id), response.targetUri);
    });
});

const SHOP = 'http://127.0.0.1:8080';

function shopPage(
    n: number,
    renderer: 'http' | 'browser',
    fetchedAt: string,
    body = `<h1>Product ${n}</h1>`,
): PageCapture {
    const url = `${SHOP}/products/${n}`;
    return {
        key: rawPageKey(url, renderer),
        url,
        finalUrl: url,
        status: 200,
        headers: { 'content-type': 'text/html; charset=utf-8', etag: `"${n}-1"`, 'content-encoding': 'br' },
        fetchedAt,
        renderer,
        label: 'product',
        body: renderer === 'browser' ? `${body}<p>filled in by script</p>` : body,
        payload: Buffer.from(body),
        requestHeaders: { 'User-Agent': 'dragnet-test', Cookie: 'sid=1' },
    };
}

describe('an archive of two runs, the second with revisits of both profiles', () => {
    let tmp: string;
    let dir: string;
    let files: string[];
    let records: ReadRecord[];
    const revisits = () => records.filter((record) => record.type === 'revisit');

    before(async () => {
        tmp = await mkdtemp(join(tmpdir(), 'dragnet-archive-check-'));
        const archiveDir = archiveDirOf(tmp);
        const first = [1, 2, 3].map((n) => shopPage(n, n === 2 ? 'browser' : 'http', `2024-03-01T10:00:0${n}.250Z`));
        const run1 = await ArchiveStore.open({ archiveDir, site: 'shop', run: 'run-1' });
        for (const page of first) await run1.put(page);
        await run1.putRedirect({
            url: `${SHOP}/p/1`,
            status: 301,
            headers: { location: first[0]!.url },
            fetchedAt: '2024-03-01T10:00:00Z',
        });

        const run2 = await ArchiveStore.open({ archiveDir, site: 'shop', run: 'run-2' });
        const [one, two, three] = first as [PageCapture, PageCapture, PageCapture];
        const common = {
            status: 304,
            headers: { etag: '"1-1"' },
            requestHeaders: { 'If-None-Match': '"1-1"' },
            label: 'product',
        };
        await run2.putRevisit({
            ...common,
            key: one.key,
            url: one.url,
            profile: 'server-not-modified',
            fetchedAt: '2024-04-01T10:00:01.500Z',
            refersTo: await run2.latestCapture(one.key),
            renderer: 'http',
        });
        await run2.putRevisit({
            ...common,
            key: three.key,
            url: three.url,
            profile: 'identical-payload-digest',
            status: 200,
            headers: three.headers,
            fetchedAt: '2024-04-01T10:00:03.500Z',
            payloadDigest: payloadDigestOf(three.payload!),
            refersTo: await run2.latestCapture(three.key),
            renderer: 'http',
        });
        await run2.put(shopPage(2, 'browser', '2024-04-01T10:00:02.500Z', '<h1>Product 2, changed</h1>'));
        // A revisit that names no capture: WARC/1.1 makes the Refers-To fields optional.
        await run2.putRevisit({
            ...common,
            key: two.key,
            url: two.url,
            profile: 'server-not-modified',
            fetchedAt: '2024-04-01T10:00:04Z',
            renderer: 'browser',
        });

        dir = join(archiveDir, 'shop');
        files = (await readdir(dir)).filter((file) => file.endsWith('.warc.gz')).sort();
        records = [];
        for (const file of files) records.push(...(await recordsOf(join(dir, file), file)));
    });

    after(() => rm(tmp, { recursive: true, force: true }));

    test('every record parses as WARC/1.1 with the mandatory fields, and every digest matches', () => {
        assert.deepEqual(files, ['dragnet-000001.warc.gz', 'dragnet-000002.warc.gz']);
        assert.equal(revisits().length, 3);
        checkRecords(files, records);
        checkDigests(records);
        checkLinks(records);
    });

    test("each revisit names its profile, and the response it refers to by that response's URI and date", () => {
        const profiles = revisits().map((revisit) => revisit.header('WARC-Profile'));
        assert.deepEqual(profiles, [
            'http://netpreserve.org/warc/1.1/revisit/server-not-modified',
            'http://netpreserve.org/warc/1.1/revisit/identical-payload-digest',
            'http://netpreserve.org/warc/1.1/revisit/server-not-modified',
        ]);
        for (const revisit of revisits()) {
            const where = `the revisit of ${revisit.targetUri}`;
            assert.equal(revisit.header('WARC-Truncated'), undefined, where);
            const uri = revisit.header('WARC-Refers-To-Target-URI');
            const date = revisit.header('WARC-Refers-To-Date');
            if (uri === undefined) {
                assert.equal(date, undefined, where);
                continue;
            }
            const original = records.find(
                (record) =>
                    record.type === 'response' && record.targetUri === uri && record.header('WARC-Date') === date,
            );
            assert.ok(original, `${where} refers to a response record by its URI and date`);
            assert.equal(original.targetUri, revisit.targetUri, where);
            assert.ok(original.header('WARC-Date')! < revisit.header('WARC-Date')!, `${where}: an earlier capture`);
            const digest = revisit.header('WARC-Payload-Digest');
            if (revisit.header('WARC-Profile')!.endsWith('/identical-payload-digest'))
                assert.equal(
                    digest,
                    sha1(httpBody(original.block)),
                    `${where}: the payload digest of the one it refers to`,
                );
            else assert.equal(digest, undefined, where);
        }
    });

    test('a revisit holds the status line and headers of the response, and a metadata record names its page', () => {
        const [notModified, identical] = revisits();
        assert.equal(notModified!.http!.startLine, 'HTTP/1.1 304 Not Modified');
        assert.equal(identical!.http!.startLine, 'HTTP/1.1 200 OK');
        // As a response record keeps them beside its decoded payload.
        assert.match(identical!.block.toString('latin1'), /\r\nx-crawler-content-encoding: br\r\n/);
        for (const revisit of revisits()) {
            const metadata = records.find(
                (record) => record.type === 'metadata' && record.header('WARC-Refers-To') === revisit.id,
            );
            assert.ok(metadata, revisit.targetUri);
            assert.equal(metadata.header('WARC-Concurrent-To'), revisit.id);
            const fields = warcFields(metadata);
            assert.equal(fields['dragnet-key'], rawPageKey(revisit.targetUri!, fields['dragnet-renderer'] as 'http'));
            assert.equal(fields['dragnet-label'], 'product');
        }
    });

    test("each revisit's CDXJ line says what warcio.js's indexer says of the record", async () => {
        for (const file of files) {
            const ours = (await readFile(join(dir, file.replace(/\.warc\.gz$/, '.cdxj')), 'utf8'))
                .split('\n')
                .flatMap((line) => parseCdxjLine(line) ?? []);
            const theirs: Record<string, unknown>[] = [];
            for await (const entry of new CDXIndexer({ format: 'cdxj' }).iterIndex([
                { filename: file, reader: createReadStream(join(dir, file)) },
            ]))
                theirs.push(entry);
            const theirRevisits = theirs.filter((entry) => entry.mime === 'warc/revisit');
            assert.equal(theirRevisits.length, revisits().filter((record) => record.file === file).length, file);
            for (const entry of theirRevisits) {
                const line = ours.find((mine) => mine.offset === entry.offset);
                assert.ok(line, `${file}@${entry.offset}: a line of ours`);
                assert.deepEqual(
                    {
                        url: line.url,
                        mime: line.mime,
                        status: line.status,
                        digest: line.digest?.replace(/^sha1:/, ''),
                        length: line.length,
                        timestamp: line.date.replace(/\D/g, '').slice(0, 14),
                    },
                    {
                        url: entry.url,
                        mime: 'warc/revisit',
                        status: entry.status,
                        digest: entry.digest ?? undefined,
                        length: entry.length,
                        timestamp: entry.timestamp,
                    },
                );
            }
        }
    });
});
