/**
 * The PostgreSQL sink against a real server: DRAGNET_TEST_POSTGRES, default
 * postgres://127.0.0.1:5432/test (trust auth, the OS user). Each test gets a schema of its own
 * through the URL's search_path and drops it when it ends.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdir, readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it, type TestContext } from 'node:test';

import type { Renderer } from '../../src/site/site.js';
import { isConnectionError, openPostgres, PgDatabase, schemaOf } from '../../src/store/postgres/database.js';
import { IndexedRawPages } from '../../src/store/postgres/indexedRawPages.js';
import { iterateItems } from '../../src/store/postgres/reader.js';
import { PgSink, type PgOutcome } from '../../src/store/postgres/sink.js';
import type { RawPages } from '../../src/store/rawPages.js';
import type { ArchiveStore } from '../../src/store/archive/archiveStore.js';
import { rawPageKey, type RawPage } from '../../src/store/archive/rawPage.js';
import type { QuarantineEntry, StoredItem } from '../../src/store/records.js';
import type { DeadLetterEntry } from '../../src/vocabulary/failure.js';
import { tempDir } from '../helpers/tempDir.js';

const SERVER = process.env.DRAGNET_TEST_POSTGRES ?? 'postgres://127.0.0.1:5432/test';

/** The URL of `server` with a search_path of a fresh schema, dropped (with a pool of its own) when the test ends. */
function freshSchema(t: TestContext, server = SERVER): { url: string; schema: string } {
    const schema = `dragnet_test_${randomBytes(6).toString('hex')}`;
    const url = `${server}?application_name=${schema}&options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    t.after(async () => {
        const admin = new PgDatabase(SERVER);
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await admin.close();
    });
    return { url, schema };
}

async function open(t: TestContext) {
    const { url, schema } = freshSchema(t);
    const db = await openPostgres(url);
    t.after(() => db.close());
    return { db, url, schema, sink: new PgSink(db) };
}

function item(n: number, page = 'p1'): StoredItem {
    return {
        title: `Item ${n}`,
        price: n,
        _url: `http://shop.test/${page}`,
        _route: 'product',
        _rawKey: `${page}-http`,
        _renderer: 'http',
        _fetchedAt: '2024-01-01T00:00:00.000Z',
    };
}

function quarantined(page: string): QuarantineEntry {
    return {
        url: `http://shop.test/${page}`,
        route: 'product',
        rawKey: `${page}-http`,
        renderer: 'http',
        issues: ['price: required'],
        fields: ['price'],
        record: { title: 'x' },
        quarantinedAt: '2024-01-01T00:00:00.000Z',
    };
}

function deadLetter(page: string, reason = 'http-404', at = '2024-01-01T00:00:00.000Z'): DeadLetterEntry {
    return {
        url: `http://shop.test/${page}`,
        failureClass: 'permanent',
        reason,
        error: 'Not Found',
        status: 404,
        attempts: 1,
        stage: 'http',
        deadLetteredAt: at,
    };
}

const group: PgOutcome[] = [
    { requestKey: 'p1', items: [item(1), item(2), item(3)] },
    { requestKey: 'p2', items: [item(4, 'p2')], quarantine: [quarantined('p2')] },
    { requestKey: 'p3', deadLetter: deadLetter('p3') },
    { requestKey: 'p4', deadLetter: deadLetter('p4', 'timeout') },
];

async function all<T>(generator: AsyncIterable<T>): Promise<T[]> {
    const out: T[] = [];
    for await (const value of generator) out.push(value);
    return out;
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
        fetchedAt: new Date(Date.UTC(2024, 0, 1, 0, 0, n % 60, n % 1000)).toISOString(),
        renderer,
        label: 'product',
        body:
            `<html><body><h1>Product ${n}</h1>\n` +
            `<p>“quoted” – ünïcode</p>${'<li>row</li>'.repeat(n % 50)}</body></html>`,
        // The encoding the HTTP stage read the page in: kept so a reparse knows it.
        ...(renderer === 'http' ? { charset: 'windows-1252' } : {}),
    };
}

/** A TCP proxy in front of the server that can be cut (every connection reset, new ones refused) and restored. */
async function proxy(t: TestContext) {
    const target = new URL(SERVER);
    const sockets = new Set<Socket>();
    const server: Server = createServer((client) => {
        const upstream = connect(Number(target.port || 5432), target.hostname);
        for (const socket of [client, upstream]) {
            sockets.add(socket);
            socket.on('error', () => {});
            socket.on('close', () => sockets.delete(socket));
        }
        client.pipe(upstream).pipe(client);
    });
    const listen = (port: number) => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
    await listen(0);
    const port = (server.address() as AddressInfo).port;
    t.after(() => {
        for (const socket of sockets) socket.destroy();
        server.close();
    });
    return {
        url: `postgres://127.0.0.1:${port}${target.pathname}`,
        cut: () => {
            server.close();
            for (const socket of sockets) socket.resetAndDestroy();
        },
        restore: () => listen(port),
    };
}

describe('PostgreSQL database', () => {
    it('takes the schema from the URL search_path option, else public', () => {
        assert.equal(schemaOf('postgres://h/db?options=-c%20search_path%3Dshop_a'), 'shop_a');
        assert.equal(schemaOf('postgres://h/db?options=-c%20search_path%3D%22%24user%22%2Cshop_b'), 'shop_b');
        assert.equal(schemaOf('postgres://h/db'), 'public');
    });

    it('migrates from 5 pools at once: every one succeeds, each migration runs once', async (t) => {
        const { url, schema } = freshSchema(t);
        const dbs = await Promise.all(Array.from({ length: 5 }, () => openPostgres(url)));
        t.after(() => Promise.all(dbs.map((db) => db.close())));
        const db = dbs[0]!;
        const versions = await db.query(`SELECT version FROM ${db.table('dragnet_migrations')} ORDER BY version`);
        assert.deepEqual(
            versions.rows,
            [1, 2, 3, 4, 5, 6, 7].map((version) => ({ version })),
        );
        const tables = await db.query(
            `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name`,
            [schema],
        );
        assert.deepEqual(
            tables.rows.map((row) => row.table_name),
            [
                'backlog',
                'dead_letter',
                'dragnet_migrations',
                'items',
                'outcome_fences',
                'page_history',
                'quarantine',
                'raw_index',
                'raw_pages_v1',
                'site_runs',
            ],
        );
        await openPostgres(url).then((again) => again.close()); // and once more, on a database up to date
    });

    it(`keeps the first of jobs spilled twice when it adds \
the backlog index to a database from before it`, async (t) => {
        const { url, schema } = freshSchema(t);
        const db = await openPostgres(url);
        t.after(() => db.close());
        // The database as version 3 left it: no index, and a job spilled twice.
        await db.query(`DROP INDEX ${schema}.backlog_job`);
        await db.query(`DELETE FROM ${db.table('dragnet_migrations')} WHERE version = 4`);
        await db.query(
            `INSERT INTO ${db.table('backlog')} (site, queue, job_id, priority, data) VALUES
             ('shop', 'shop-http', 'a', 1, '{"n":1}'), ('shop', 'shop-http', 'b', 1, '{}'), \
('shop', 'shop-http', 'a', 1, '{"n":2}'), ('shop', 'other', 'a', 1, '{}')`,
        );
        await openPostgres(url).then((again) => again.close());
        const { rows } = await db.query(`SELECT queue, job_id, data FROM ${db.table('backlog')} ORDER BY seq`);
        assert.deepEqual(rows, [
            { queue: 'shop-http', job_id: 'a', data: { n: 1 } },
            { queue: 'shop-http', job_id: 'b', data: {} },
            { queue: 'other', job_id: 'a', data: {} },
        ]);
    });

    it('turns a refused connection into one clear line', async () => {
        await assert.rejects(openPostgres('postgres://127.0.0.1:1/test'), (error: Error) => {
            assert.match(error.message, /^PostgreSQL is unreachable at 127\.0\.0\.1:1 \(.*ECONNREFUSED.*\)$/);
            assert.doesNotMatch(error.message, /\n/);
            return true;
        });
    });
});

describe('PgSink', () => {
    it(`stores a group of items, quarantine entries and \
dead-letter entries, and reads them back in order`, async (t) => {
        const { db, sink } = await open(t);
        await sink.commit('shop', group);
        assert.deepEqual(await sink.counts('shop'), { items: 4, quarantine: 1, deadLetter: 2, rawPages: 0 });
        assert.deepEqual(await all(iterateItems(db, 'shop', 'items', { batchSize: 3 })), [
            item(1),
            item(2),
            item(3),
            item(4, 'p2'),
        ]);
        assert.deepEqual(await all(iterateItems(db, 'shop', 'quarantine')), [quarantined('p2')]);
        assert.deepEqual(await all(iterateItems(db, 'shop', 'deadLetter')), [
            deadLetter('p3'),
            deadLetter('p4', 'timeout'),
        ]);
        assert.deepEqual(await sink.deadLetterByReason('shop'), [
            { reason: 'http-404', failureClass: 'permanent', count: 1 },
            { reason: 'timeout', failureClass: 'permanent', count: 1 },
        ]);
        assert.deepEqual(
            await sink.counts('other'),
            { items: 0, quarantine: 0, deadLetter: 0, rawPages: 0 },
            'sites apart',
        );
    });

    it('stores a group committed twice once (a page re-done by another worker)', async (t) => {
        const { db, sink } = await open(t);
        await sink.commit('shop', group);
        await sink.commit('shop', group);
        await Promise.all([sink.commit('shop', group), sink.commit('shop', [...group].reverse())]);
        assert.deepEqual(await sink.counts('shop'), { items: 4, quarantine: 1, deadLetter: 2, rawPages: 0 });
        assert.equal((await all(iterateItems(db, 'shop', 'items'))).length, 4);
    });

    it(`removes a dead-letter entry once its request has items, \
and keeps a judged request out of dead-letter`, async (t) => {
        const { db, sink } = await open(t);
        await sink.commit('shop', [{ requestKey: 'p3', deadLetter: deadLetter('p3', 'timeout') }]);
        await sink.commit('shop', [
            { requestKey: 'p3', deadLetter: deadLetter('p3', 'http-503', '2024-01-02T00:00:00.000Z') },
        ]);
        await sink.commit('shop', [
            { requestKey: 'p3', deadLetter: deadLetter('p3', 'stale', '2023-12-31T00:00:00.000Z') },
        ]);
        assert.deepEqual(
            await sink.deadLetterByReason('shop'),
            [{ reason: 'http-503', failureClass: 'permanent', count: 1 }],
            'the latest entry wins',
        );

        await sink.commit('shop', [{ requestKey: 'p3', items: [item(9, 'p3')] }]);
        assert.deepEqual(await sink.counts('shop'), { items: 1, quarantine: 0, deadLetter: 0, rawPages: 0 });
        // A worker that lost the job and failed it late does not put it back.
        await sink.commit('shop', [
            { requestKey: 'p3', deadLetter: deadLetter('p3', 'timeout', '2024-02-01T00:00:00.000Z') },
        ]);
        assert.deepEqual(await all(iterateItems(db, 'shop', 'deadLetter')), []);
    });

    it(`stores a request in one table when two workers commit different outcomes \
for it at once (its job's lease expired under one, the other finished it)`, async (t) => {
        const { db, sink } = await open(t);
        const keys = Array.from({ length: 300 }, (_, n) => `race-${n}`);
        // One worker judged each page, the other dead-lettered it; their commits overlap.
        await Promise.all(
            keys.flatMap((key, n) => {
                const judged = sink.commit('shop', [{ requestKey: key, items: [item(n, key)] }]);
                const failed = sink.commit('shop', [{ requestKey: key, deadLetter: deadLetter(key, 'timeout') }]);
                return n % 2 === 0 ? [judged, failed] : [failed, judged];
            }),
        );
        const inItems = new Set((await all(iterateItems(db, 'shop', 'items'))).map((row) => (row as StoredItem)._url));
        const both = (await all(iterateItems(db, 'shop', 'deadLetter')))
            .map((row) => (row as DeadLetterEntry).url)
            .filter((url) => inItems.has(url));
        assert.deepEqual(both, [], 'in items and in dead-letter');
        assert.deepEqual(await sink.counts('shop'), { items: 300, quarantine: 0, deadLetter: 0, rawPages: 0 });
    });

    it(`is read from one snapshot while workers write: every row committed before \
the read began, once, and none committed after, whatever its place in the order`, async (t) => {
        const { db, sink } = await open(t);
        const commitItems = (from: number, count: number) =>
            sink.commit(
                'shop',
                Array.from({ length: count }, (_, n) => ({
                    requestKey: `p${from + n}`,
                    items: [item(from + n, `p${from + n}`)],
                })),
            );
        await commitItems(0, 25);
        // A worker's commit under way as the read starts: its row has its place in the order (its seq) already.
        let letCommit!: () => void;
        const commitLater = new Promise<void>((resolve) => (letCommit = resolve));
        let inserted!: () => void;
        const insertedLate = new Promise<void>((resolve) => (inserted = resolve));
        const slowCommit = db.transaction(async (client) => {
            await client.query(
                `INSERT INTO ${db.table('items')} (site, request_key, ordinal, item) VALUES ('shop', 'slow', 0, $1)`,
                [JSON.stringify(item(999, 'slow'))],
            );
            inserted();
            await commitLater;
        });
        await insertedLate;
        await commitItems(25, 5);

        const reading = iterateItems(db, 'shop', 'items', { batchSize: 10 })[Symbol.asyncIterator]();
        const read = [(await reading.next()).value as StoredItem];
        await commitItems(30, 10); // after the read began, with later places in the order
        letCommit();
        await slowCommit; // after the read began, with a place among the rows read
        for (let next = await reading.next(); !next.done; next = await reading.next())
            read.push(next.value as StoredItem);

        const urls = read.map((row) => row._url);
        assert.equal(new Set(urls).size, urls.length, 'no row read twice');
        assert.deepEqual([...urls].sort(), Array.from({ length: 30 }, (_, n) => `http://shop.test/p${n}`).sort());
        assert.equal((await all(iterateItems(db, 'shop', 'items'))).length, 41, 'a read begun later sees them all');
    });

    it('stores text with a NUL in it, without the NUL', async (t) => {
        const { db, sink } = await open(t);
        await sink.commit('shop', [
            { requestKey: 'p1', items: [{ ...item(1), title: 'a\u0000b', note: 'c\\u0000d' }] },
        ]);
        const [stored] = await all(iterateItems(db, 'shop', 'items'));
        assert.equal(stored?.title, 'ab');
        assert.equal(stored?.note, 'c\\u0000d', 'a backslash and the text u0000 stay');
    });

    it('purges one site from every table', async (t) => {
        const { db, sink } = await open(t);
        await sink.commit('shop', group);
        await sink.commit('other', group);
        await (await indexed(t, db)).put(page(1));
        await sink.purge('shop');
        assert.deepEqual(await sink.counts('shop'), { items: 0, quarantine: 0, deadLetter: 0, rawPages: 0 });
        assert.deepEqual(await sink.counts('other'), { items: 4, quarantine: 1, deadLetter: 2, rawPages: 0 });
    });

    it('recovers on the next commit when its server connection is killed', async (t) => {
        const { db, sink, schema } = await open(t);
        await sink.commit('shop', [group[0]!]);
        const pid = async () => (await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
        const before = await pid();
        const admin = new PgDatabase(SERVER);
        t.after(() => admin.close());
        const killed = await admin.query(
            'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
            [schema],
        );
        assert.ok(killed.rowCount! >= 1);
        await sink.commit('shop', [group[1]!]); // its first try meets the dead connection (57P01) and is retried
        assert.notEqual(await pid(), before, 'a new connection');
        assert.deepEqual(await sink.counts('shop'), { items: 4, quarantine: 1, deadLetter: 0, rawPages: 0 });
    });

    it('retries a commit while the server is cut off, and loses nothing', async (t) => {
        const link = await proxy(t);
        const db = await openPostgres(freshSchema(t, link.url).url);
        t.after(() => db.close());
        const sink = new PgSink(db, { retryForMs: 10_000, retryDelayMs: 100 });
        await sink.commit('shop', [group[0]!]);
        link.cut();
        const committing = sink.commit('shop', group.slice(1));
        await sleep(1000);
        await link.restore();
        await committing;
        assert.deepEqual(await sink.counts('shop'), { items: 4, quarantine: 1, deadLetter: 2, rawPages: 0 });

        link.cut();
        const short = new PgSink(db, { retryForMs: 300, retryDelayMs: 100 });
        await assert.rejects(
            short.commit('shop', group),
            (error) => isConnectionError(error),
            'gives up after retryForMs',
        );
    });
});

/** Raw pages of `site` in a storage dir of the test's own (or `storageDir`), written as `writer`. */
async function indexed(
    t: TestContext,
    db: PgDatabase,
    options: {
        site?: string;
        writer?: string;
        storageDir?: string;
        maxBatchSize?: number;
        readBatchSize?: number;
    } = {},
) {
    const { site = 'shop', writer = 'w1', storageDir = await tempDir(t, 'indexed-raw'), ...rest } = options;
    return IndexedRawPages.open(db, site, { archiveDir: storageDir, writer, ...rest });
}

describe('IndexedRawPages', () => {
    it('is a RawPages, as the file store is', () => {
        const fileStoreIsRawPages: ArchiveStore extends RawPages ? true : false = true;
        assert.equal(fileStoreIsRawPages, true);
    });

    it('archives pages in its own WARC file and reads them back whole, through the index', async (t) => {
        const { db } = await open(t);
        const raw = await indexed(t, db, { writer: 'host-1:42' });
        const written = [page(1), page(2, 'browser'), page(3)];
        await Promise.all(written.map((p) => raw.put(p)));
        assert.deepEqual(await raw.get(written[1]!.key), written[1]);
        assert.equal(await raw.get('missing'), undefined);
        assert.deepEqual(await all(raw.pages()), written);
        const other = await indexed(t, db, { site: 'other', storageDir: dirname(dirname(raw.dir)) });
        assert.equal(await other.get(written[0]!.key), undefined, 'sites apart');

        const files = await readdir(raw.dir);
        assert.deepEqual(files, ['dragnet-host-1_42-000001.cdxj', 'dragnet-host-1_42-000001.warc.gz']);
        assert.deepEqual([...(await readFile(join(raw.dir, files[1]!))).subarray(0, 2)], [0x1f, 0x8b], 'gzip');
        const { rows } = await db.query(`SELECT key, file FROM ${db.table('raw_index')} ORDER BY seq`);
        assert.deepEqual(
            rows,
            written.map((p) => ({ key: p.key, file: files[1] })),
        );
    });

    it('reads the pages of two writers sharing one directory, each in files of its own', async (t) => {
        const { db } = await open(t);
        const storageDir = await tempDir(t, 'indexed-shared');
        const [a, b] = await Promise.all([
            indexed(t, db, { storageDir, writer: 'a' }),
            indexed(t, db, { storageDir, writer: 'b' }),
        ]);
        const written = Array.from({ length: 6 }, (_, i) => page(i + 1));
        for (const [i, p] of written.entries()) await (i % 2 === 0 ? a : b).put(p);
        assert.deepEqual(await readdir(a.dir), [
            'dragnet-a-000001.cdxj',
            'dragnet-a-000001.warc.gz',
            'dragnet-b-000001.cdxj',
            'dragnet-b-000001.warc.gz',
        ]);
        const reader = await IndexedRawPages.open(db, 'shop', { archiveDir: storageDir });
        assert.deepEqual(await all(reader.pages()), written, 'in the order they were written');
        await assert.rejects(reader.put(page(7)), /read-only/);
    });

    it(`appends the pages that arrive while a write is under way together, indexed in one INSERT, and a page fetched again becomes the newest`, async (t) => {
        const { db } = await open(t);
        const raw = await indexed(t, db, { maxBatchSize: 50 });
        const inserts: number[] = [];
        const query = db.query.bind(db);
        db.query = ((text: string, values?: unknown[]) => {
            if (text.trimStart().startsWith('INSERT')) inserts.push((values![1] as unknown[]).length);
            return query(text, values);
        }) as typeof db.query;
        await Promise.all(Array.from({ length: 60 }, (_, i) => raw.put(page(i + 1))));
        assert.deepEqual(inserts, [1, 50, 9]);
        const { rows } = await db.query(`SELECT DISTINCT file, page_offset FROM ${db.table('raw_index')}`);
        assert.equal(rows.length, 60, 'a place of its own for each page');

        const again = { ...page(1), status: 203, body: '<html>new</html>' };
        await raw.put(again);
        const pages = await all(raw.pages());
        assert.equal(pages.length, 60);
        assert.deepEqual(pages.at(-1), again);
        assert.deepEqual(await raw.get(again.key), again);
    });

    it('says which file it cannot find and where to look, rather than skip the page', async (t) => {
        const { db } = await open(t);
        const raw = await indexed(t, db);
        await raw.put(page(1));
        await rm(raw.dir, { recursive: true });
        await assert.rejects(all(raw.pages()), (error: Error) => {
            assert.match(error.message, /dragnet-w1-000001\.warc\.gz, which is not on this machine/);
            assert.match(error.message, /the same --archive-dir/);
            return true;
        });
    });

    it('streams 1,200 pages in order, a bounded batch at a time', async (t) => {
        const { db } = await open(t);
        const raw = await indexed(t, db, { readBatchSize: 500 });
        const written = Array.from({ length: 1200 }, (_, i) => page(i + 1));
        for (let i = 0; i < written.length; i += 100)
            await Promise.all(written.slice(i, i + 100).map((p) => raw.put(p)));

        const reads: number[] = [];
        const readSnapshot = db.readSnapshot.bind(db);
        db.readSnapshot = async () => {
            const snapshot = await readSnapshot();
            const query = (async (text: string, values?: unknown[]) => {
                const result = await snapshot.query(text, values);
                if (text.startsWith('SELECT seq')) reads.push(result.rows.length);
                return result;
            }) as typeof snapshot.query;
            return { ...snapshot, query };
        };
        const keys: string[] = [];
        for await (const stored of raw.pages()) {
            if (keys.length === 0) assert.deepEqual(reads, [500], 'one batch read before the first page');
            keys.push(stored.key);
        }
        assert.deepEqual(
            keys,
            written.map((p) => p.key),
        );
        assert.deepEqual(reads, [500, 500, 200]);
    });
});
