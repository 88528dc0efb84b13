import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { appendFile, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { constants, gunzipSync, gzipSync } from 'node:zlib';

import type { Renderer } from '../../src/site/site.js';
import { rawPageKey, RawStore, type RawPage, type RawStoreOptions } from '../../src/store/rawStore.js';

/** A fresh storage directory, removed when the test ends. */
async function storageDir(t: TestContext): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'dragnet-raw-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    return dir;
}

function page(n: number, renderer: Renderer = 'http'): RawPage {
    const url = `http://127.0.0.1:8080/products/${n}`;
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
        body: `<html><body><h1>Product ${n}</h1>\n<p>“quoted” – ünïcode</p></body></html>`,
        // The encoding the HTTP stage read the page in: kept so a reparse knows it.
        ...(renderer === 'http' ? { charset: 'windows-1252' } : {}),
    };
}

async function readAll(store: RawStore): Promise<RawPage[]> {
    const pages: RawPage[] = [];
    for await (const stored of store.pages()) pages.push(stored);
    return pages;
}

async function segments(store: RawStore): Promise<string[]> {
    return (await readdir(store.dir)).sort();
}

/** Read synchronously, so a count taken where a put() resolves shows the file as it was then. */
function lineCount(file: string): number {
    return gunzipSync(readFileSync(file)).toString('utf8').split('\n').filter(Boolean).length;
}

/** A page as one gzip member of its own, the way a batch of one is appended. */
function member(p: RawPage): Buffer {
    return gzipSync(`${JSON.stringify(p)}\n`, { level: constants.Z_BEST_SPEED });
}

describe('rawPageKey', () => {
    it('is stable for the same URL and renderer', () => {
        assert.equal(rawPageKey('http://a.test/x', 'http'), rawPageKey('http://a.test/x', 'http'));
        assert.match(rawPageKey('http://a.test/x', 'http'), /^[0-9a-f]{20}-http$/);
    });

    it('differs by renderer and by URL', () => {
        assert.match(rawPageKey('http://a.test/x', 'browser'), /^[0-9a-f]{20}-browser$/);
        assert.notEqual(
            rawPageKey('http://a.test/x', 'http').split('-')[0],
            rawPageKey('http://a.test/y', 'http').split('-')[0],
        );
        assert.equal(
            rawPageKey('http://a.test/x', 'http').split('-')[0],
            rawPageKey('http://a.test/x', 'browser').split('-')[0],
        );
    });
});

describe('RawStore', () => {
    it('stores pages under raw_pages/<site>/ and reads them back whole, in order', async (t) => {
        const dir = await storageDir(t);
        const store = await RawStore.open({ storageDir: dir, site: 'shop' });
        assert.equal(store.dir, join(dir, 'raw_pages', 'shop'));
        const written = Array.from({ length: 7 }, (_, i) => page(i + 1, i % 2 ? 'browser' : 'http'));
        for (const p of written) await store.put(p);
        assert.deepEqual(await readAll(store), written);
    });

    it(`stores every text as it was: one-byte, two-byte and astral \
characters, lone surrogates, and pages past the encoding buffer`, async (t) => {
        const dir = await storageDir(t);
        const store = await RawStore.open({ storageDir: dir, site: 'shop' });
        const bodies = [
            'plain ascii',
            'latin-1 only: café ÿ',
            '★ two-byte ’ … €',
            'astral: 😀𝄞 and a lone surrogate \ud800 between',
            // Just under the 256 K UTF-16 units the store encodes through its
            // buffer, each unit 3 bytes of UTF-8: the buffer's worst case.
            '€'.repeat(255_000),
            // Past them, and then a short one again after it.
            `<p>${'€😀'.repeat(100_000)}</p>`,
            `<p>${'x'.repeat(300_000)}</p>`,
            'short again ✓',
        ];
        const written = bodies.map((body, i) => ({ ...page(i + 1), body }));
        await Promise.all(written.map((p) => store.put(p)));
        // JSON.stringify escapes a lone surrogate, so it survives UTF-8 too.
        // Compared one by one: a failure names the page, not 600 K characters.
        const read = await readAll(store);
        assert.equal(read.length, bodies.length);
        for (const [i, stored] of read.entries())
            assert.ok(stored.body === bodies[i], `page ${i + 1} (${bodies[i]!.length} characters) came back changed`);
        assert.equal(lineCount(join(store.dir, (await segments(store))[0]!)), bodies.length);
    });

    it(`put() keeps no hold of the page while its write is pending: \
a waiting page costs its encoded bytes, not its HTML`, async (t) => {
        const dir = await storageDir(t);
        const store = await RawStore.open({ storageDir: dir, site: 'shop' });
        setFlagsFromString('--expose-gc');
        const gc = runInNewContext('gc') as () => void;
        // A large page first: the next one waits for its write, and then for its own.
        const first = store.put({ ...page(0), body: 'x'.repeat(8 * 1024 * 1024) });
        let written = false;
        let pending: Promise<void> | undefined;
        const kept = (() => {
            const p = page(1);
            pending = store.put(p).then(() => {
                written = true;
            });
            return new WeakRef(p);
        })();
        // A WeakRef holds its target until the end of the job that made it.
        await new Promise((resolve) => setImmediate(resolve));
        gc();
        assert.equal(written, false, 'the page is still waiting for its write');
        assert.equal(
            kept.deref(),
            undefined,
            'the page outlived its put() call; an async put() holds it until the write resolves',
        );
        await first;
        await pending;
        assert.equal(lineCount(join(store.dir, 'pages-000001.jsonl.gz')), 2);
    });

    it('put() resolves once the page is in its segment file', async (t) => {
        const dir = await storageDir(t);
        const store = await RawStore.open({ storageDir: dir, site: 'shop' });
        await store.put(page(1));
        assert.equal(lineCount(join(store.dir, 'pages-000001.jsonl.gz')), 1);
        await store.put(page(2));
        assert.equal(lineCount(join(store.dir, 'pages-000001.jsonl.gz')), 2);
    });

    it('pages put while a write is under way go together in the next write, at most maxBatchSize', async (t) => {
        const dir = await storageDir(t);
        const store = await RawStore.open({ storageDir: dir, site: 'shop', maxBatchSize: 3 });
        const written = Array.from({ length: 10 }, (_, i) => page(i + 1));
        const file = join(store.dir, 'pages-000001.jsonl.gz');
        // Lines on disk when each put resolves: at least up to its own page, and whole writes only.
        const linesWhenStored = await Promise.all(written.map((p) => store.put(p).then(() => lineCount(file))));
        for (const [index, lines] of linesWhenStored.entries())
            assert.ok(lines >= index + 1, `page ${index + 1} resolved with ${lines} lines on disk`);
        // The first page is written alone, at once; the nine put meanwhile go three by three.
        assert.ok(
            linesWhenStored.every((lines) => [1, 4, 7, 10].includes(lines)),
            `${linesWhenStored}`,
        );
        assert.deepEqual(await readAll(store), written);
    });

    it('get(key) finds a page, the newest of a re-fetched one, and undefined for an unknown key', async (t) => {
        const dir = await storageDir(t);
        const store = await RawStore.open({ storageDir: dir, site: 'shop', maxBatchSize: 2 });
        for (const n of [1, 2, 3]) await store.put(page(n));
        const refetched = { ...page(2), status: 203, body: 'second fetch' };
        await store.put(refetched);
        await store.put(page(2, 'browser'));
        assert.deepEqual(await store.get(page(1).key), page(1));
        assert.deepEqual(await store.get(page(2).key), refetched);
        assert.equal((await store.get(page(2, 'browser').key))?.renderer, 'browser');
        assert.equal(await store.get('0000-http'), undefined);
    });

    it('starts a new segment past maxSegmentBytes and reads across segments in order', async (t) => {
        const dir = await storageDir(t);
        const memberBytes = Math.max(...[1, 2, 3, 4, 5].map((n) => member(page(n)).length));
        // Room for two pages (the test pages differ by a digit, so their members by a byte at most) but not three.
        const store = await RawStore.open({
            storageDir: dir,
            site: 'shop',
            maxBatchSize: 1,
            maxSegmentBytes: memberBytes * 2 + 1,
        });
        const written = Array.from({ length: 5 }, (_, i) => page(i + 1));
        for (const p of written) await store.put(p);
        await store.flush();
        const files = await segments(store);
        assert.deepEqual(files, ['pages-000001.jsonl.gz', 'pages-000002.jsonl.gz', 'pages-000003.jsonl.gz']);
        assert.deepEqual(
            files.map((f) => lineCount(join(store.dir, f))),
            [2, 2, 1],
        );
        for (const f of files) assert.ok((await stat(join(store.dir, f))).size <= memberBytes * 2 + 1);
        assert.deepEqual(await readAll(store), written);
    });

    it('skips a line a crash cut short, and a reopened store keeps writing readable pages', async (t) => {
        const dir = await storageDir(t);
        const options: RawStoreOptions = { storageDir: dir, site: 'shop', maxBatchSize: 2 };
        const first = await RawStore.open(options);
        for (const n of [1, 2, 3]) await first.put(page(n));
        await first.flush();
        // The process dies halfway through writing page 4's batch.
        const torn = member(page(4));
        await appendFile(join(first.dir, 'pages-000001.jsonl.gz'), torn.subarray(0, Math.floor(torn.length / 2)));

        assert.deepEqual(await readAll(first), [page(1), page(2), page(3)]);

        const reopened = await RawStore.open(options);
        for (const n of [4, 5]) await reopened.put(page(n));
        await reopened.flush();
        // The new pages go to a new segment, so the torn member is not glued to the next page.
        assert.deepEqual(await segments(reopened), ['pages-000001.jsonl.gz', 'pages-000002.jsonl.gz']);
        assert.deepEqual(
            await readAll(reopened),
            [1, 2, 3, 4, 5].map((n) => page(n)),
        );
        assert.deepEqual(await reopened.get(page(4).key), page(4));
    });

    it('writes pages gzipped: a run of pages sharing their chrome takes a fraction of its size', async (t) => {
        const dir = await storageDir(t);
        const store = await RawStore.open({ storageDir: dir, site: 'shop' });
        const chrome = Array.from({ length: 150 }, (_, i) => `<a href="/d/department-${i}">Department ${i}</a>`).join(
            '',
        );
        const written = Array.from({ length: 50 }, (_, i) => ({
            ...page(i + 1),
            body: `<html><body><nav>${chrome}</nav><h1>Product ${i + 1}</h1></body></html>`,
        }));
        await Promise.all(written.map((p) => store.put(p)));
        const json = Buffer.byteLength(written.map((p) => `${JSON.stringify(p)}\n`).join(''));
        const [file] = await segments(store);
        const onDisk = (await stat(join(store.dir, file!))).size;
        assert.ok(onDisk < json / 5, `${onDisk} bytes on disk for ${json} bytes of JSON`);
        assert.deepEqual(await readAll(store), written);
    });

    it('reads segments of plain JSON lines written before compression, in order with the gzipped ones', async (t) => {
        const dir = await storageDir(t);
        const options: RawStoreOptions = { storageDir: dir, site: 'shop' };
        const old = await RawStore.open(options);
        await writeFile(
            join(old.dir, 'pages-000001.jsonl'),
            [1, 2].map((n) => `${JSON.stringify(page(n))}\n`).join(''),
        );
        const store = await RawStore.open(options);
        await store.put(page(3));
        assert.deepEqual(await segments(store), ['pages-000001.jsonl', 'pages-000002.jsonl.gz']);
        assert.deepEqual(
            await readAll(store),
            [1, 2, 3].map((n) => page(n)),
        );
    });

    it('purge removes every page of the site and no other', async (t) => {
        const dir = await storageDir(t);
        const shop = await RawStore.open({ storageDir: dir, site: 'shop' });
        const other = await RawStore.open({ storageDir: dir, site: 'other' });
        await shop.put(page(1));
        await other.put(page(2));
        await Promise.all([shop.flush(), other.flush()]);

        await RawStore.purge({ storageDir: dir, site: 'shop' });
        await assert.rejects(stat(shop.dir), { code: 'ENOENT' });
        assert.deepEqual(await readAll(await RawStore.open({ storageDir: dir, site: 'shop' })), []);
        assert.deepEqual(await readAll(other), [page(2)]);
        await RawStore.purge({ storageDir: dir, site: 'never-written' }); // nothing there: no error
    });
});
