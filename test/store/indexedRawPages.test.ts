/**
 * IndexedRawPages across runs, against the machine's PostgreSQL (test/helpers/pgSchema.ts): a revisit
 * goes to the worker's WARC file and its CDXJ, never to `raw_index`, whose row stays the page's newest
 * response; a page fetched again moves its row to the new response; latestCapture() reads the
 * response the row points at. The rest of IndexedRawPages is tested in postgres.test.ts.
 */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { WARCParser } from 'warcio';

import { payloadDigestOf } from '../../src/store/archive/pageRecords.js';
import { type PageCapture, rawPageKey } from '../../src/store/archive/rawPage.js';
import type { PgDatabase } from '../../src/store/postgres/database.js';
import { IndexedRawPages } from '../../src/store/postgres/indexedRawPages.js';
import { testDatabase } from '../helpers/pgSchema.js';
import { tempDir } from '../helpers/tempDir.js';

const SITE = 'shop';

function page(n: number, fetchedAt: string, body = `<h1>Product ${n}</h1>`): PageCapture {
    const url = `http://127.0.0.1:8080/products/${n}`;
    return {
        key: rawPageKey(url, 'http'),
        url,
        finalUrl: url,
        status: 200,
        headers: { 'content-type': 'text/html; charset=utf-8', etag: `"${n}"` },
        fetchedAt,
        renderer: 'http',
        label: 'product',
        body,
        charset: 'UTF-8',
    };
}

async function indexRows(db: PgDatabase): Promise<Record<string, unknown>[]> {
    const { rows } = await db.query(
        `SELECT seq, key, fetched_at, file, page_offset, page_length FROM ${db.table('raw_index')} ORDER BY seq`,
    );
    return rows;
}

describe('IndexedRawPages across runs', () => {
    it('writes a revisit to the worker’s file and leaves the index row on the newest response', async (t) => {
        const { db } = await testDatabase(t);
        const archiveDir = await tempDir(t, 'indexed-revisit');
        const run1 = await IndexedRawPages.open(db, SITE, { archiveDir, writer: 'w1' });
        const first = [page(1, '2024-03-01T10:00:01.250Z'), page(2, '2024-03-01T10:00:02.250Z')];
        for (const p of first) await run1.put(p);
        const before = await indexRows(db);

        const run2 = await IndexedRawPages.open(db, SITE, { archiveDir, writer: 'w2' });
        const refersTo = await run2.latestCapture(first[0]!.key);
        assert.deepEqual(refersTo, {
            url: first[0]!.finalUrl,
            date: first[0]!.fetchedAt,
            digest: payloadDigestOf(Buffer.from(first[0]!.body)),
        });
        await run2.putRevisit({
            key: first[0]!.key,
            url: first[0]!.url,
            profile: 'server-not-modified',
            status: 304,
            headers: { etag: '"1"' },
            fetchedAt: '2024-04-01T10:00:01.500Z',
            refersTo,
            label: 'product',
            renderer: 'http',
        });
        assert.deepEqual(await indexRows(db), before, 'the index is as it was');
        assert.deepEqual((await run2.get(first[0]!.key))?.body, first[0]!.body);
        assert.deepEqual(await run2.latestCapture(first[0]!.key), refersTo);

        const files = (await readdir(run2.dir)).sort();
        assert.deepEqual(files, [
            'dragnet-w1-000001.cdxj',
            'dragnet-w1-000001.warc.gz',
            'dragnet-w2-000001.cdxj',
            'dragnet-w2-000001.warc.gz',
        ]);
        const types: string[] = [];
        const file = gunzipSync(await readFile(join(run2.dir, 'dragnet-w2-000001.warc.gz')));
        for await (const record of new WARCParser([file])) types.push(record.warcType ?? '');
        assert.deepEqual(types, ['warcinfo', 'request', 'revisit', 'metadata']);
        const index = await readFile(join(run2.dir, 'dragnet-w2-000001.cdxj'), 'utf8');
        assert.match(index, /"mime":"warc\/revisit","status":"304"/);

        // The same page fetched again and changed: its row moves to the new response, read from then on.
        const changed = page(1, '2024-04-01T10:00:05.000Z', '<h1>Product 1, on sale</h1>');
        await run2.put(changed);
        const after = await indexRows(db);
        assert.equal(after.length, 2, 'one row a page');
        const row = after.find((r) => r.key === changed.key)!;
        assert.equal(row.file, 'dragnet-w2-000001.warc.gz');
        assert.ok(Number(row.seq) > Number(before.at(-1)!.seq), 'the newest, read last');
        assert.deepEqual((await run2.get(changed.key))?.body, changed.body);
        assert.deepEqual(await run2.latestCapture(changed.key), {
            url: changed.finalUrl,
            date: changed.fetchedAt,
            digest: payloadDigestOf(Buffer.from(changed.body)),
        });
        const pages = [];
        for await (const p of run2.pages()) pages.push(p.body);
        assert.deepEqual(pages, [first[1]!.body, changed.body]);
        assert.equal(await run2.latestCapture('0000-http'), undefined);
    });

    it('takes no revisit without a writer', async (t) => {
        const { db } = await testDatabase(t);
        const reader = await IndexedRawPages.open(db, SITE, { archiveDir: await tempDir(t, 'indexed-revisit') });
        const revisit = { ...page(1, '2024-04-01T10:00:00Z'), profile: 'server-not-modified' as const, status: 304 };
        await assert.rejects(reader.putRevisit(revisit), /read-only/);
    });
});
