/**
 * `npm run dead-letter`: listing and re-queueing a site's dead-letter. The stores are real SQLite
 * files in a temp dir, filled through the same `Outcomes` a crawl uses (as test/store/outcomes.test.ts
 * does), or by a real crawl of the fixture shop; the command runs as a child process where its
 * output and exit code are what is tested.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it, type TestContext } from 'node:test';
import { getRequestId, type Request } from '@crawlee/core';
import type { RequestSchema } from '@crawlee/types';

import siteDefinition from '../../routes/demo-shop.js';
import { deadLetterOutcome } from '../../src/frontier/deadLetter.js';
import type { DeadLetterEntry, FailureClass } from '../../src/vocabulary/failure.js';
import { createLogger } from '../../src/monitor/logger.js';
import { crawl } from '../../src/run.js';
import { DeadLetterStore } from '../../src/store/deadLetterStore.js';
import { openStorage, storeNames } from '../../src/store/datasets.js';
import { SqliteOutcomes as Outcomes } from '../../src/store/sqlite/outcomes.js';
import { RunState } from '../../src/store/runState.js';
import { openSiteStores } from '../../src/wiring/open.js';
import { SqliteDatasetClient } from '../../src/store/sqlite/datasetClient.js';
import { SqliteRequestQueueClient } from '../../src/store/sqlite/requestQueueClient.js';
import { startShop } from '../../src/demo/shop.js';
import { assertOneLineError } from '../helpers/cli.js';
import { readDataset } from '../helpers/stores.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SITE = 'dl-site';
const NAMES = storeNames(SITE);
const url = (path: string) => `http://127.0.0.1:9/${path}`;

async function storageDir(t: TestContext): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'dragnet-dead-letter-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    return dir;
}

interface Seed {
    path: string;
    stage: 'http' | 'browser';
    label: string;
    failureClass: FailureClass;
    reason: string;
    status?: number;
}

/** Five dead-lettered requests over both queues, three classes and two labels, plus one that succeeded. */
const SEEDS: Seed[] = [
    { path: 'a', stage: 'http', label: 'product', failureClass: 'permanent', reason: 'http-404', status: 404 },
    { path: 'b', stage: 'http', label: 'category', failureClass: 'transient', reason: 'http-503', status: 503 },
    { path: 'c', stage: 'browser', label: 'product', failureClass: 'transient', reason: 'timeout' },
    { path: 'd', stage: 'http', label: 'product', failureClass: 'permanent', reason: 'http-410', status: 410 },
    { path: 'e', stage: 'browser', label: 'category', failureClass: 'blocked', reason: 'http-403', status: 403 },
];

/**
 * A storage dir as a finished run leaves it: each seed's request fetched, failed (its attempts,
 * error messages, retry time and session rotations on it, as the crawler leaves them) and
 * dead-lettered; one more request stored an item.
 */
async function seedStores(dir: string): Promise<void> {
    const stores = await openSiteStores({ site: SITE, storageDir: dir });
    const outcomes = new Outcomes(stores);
    const queueOf = (stage: 'http' | 'browser') => (stage === 'http' ? stores.httpQueue : stores.browserQueue);
    for (const seed of SEEDS)
        await queueOf(seed.stage).addRequest({ url: url(seed.path), uniqueKey: url(seed.path), label: seed.label });
    await stores.httpQueue.addRequest({ url: url('ok'), uniqueKey: url('ok'), label: 'product' });
    for (const seed of SEEDS) {
        const queue = queueOf(seed.stage);
        const request = (await queue.fetchNextRequest()) as Request;
        assert.equal(request.url, url(seed.path));
        request.retryCount = 3;
        request.noRetry = true;
        request.pushErrorMessage(new Error(`failed: ${seed.reason}`));
        request.sessionRotationCount = 2;
        request.userData.retryAt = Date.now() + 60_000;
        request.userData.firstFailedAt = new Date(0).toISOString();
        const { path: _path, label: _label, ...entry } = seed;
        await outcomes.settle(
            queue,
            request,
            deadLetterOutcome({ ...entry, url: request.url, label: request.label, error: seed.reason, attempts: 4 }),
        );
    }
    const ok = (await stores.httpQueue.fetchNextRequest())!;
    await outcomes.settle(stores.httpQueue, ok, {
        items: [{ title: 'ok', _url: ok.url, _route: 'product', _rawKey: 'k', _renderer: 'http', _fetchedAt: '' }],
    });
    stores.lock.release();
    await stores.storage.close();
}

/** Reads the queues, dead-letter rows and saved counters straight from the database. */
async function inspect(dir: string) {
    const { storage } = openStorage(dir);
    try {
        const queueInfo = (name: string) => {
            const row = storage.db
                .prepare('SELECT total_count, handled_count FROM request_queues WHERE name = ?')
                .get(name) as { total_count: number; handled_count: number } | undefined;
            return row && { total: row.total_count, pending: row.total_count - row.handled_count };
        };
        const pendingUrls = (name: string) =>
            storage.db
                .prepare(
                    `SELECT json_extract(r.json, '$.url') FROM requests r JOIN request_queues q ON q.seq = r.queue_seq
                     WHERE q.name = ? AND r.order_no IS NOT NULL ORDER BY r.order_no`,
                )
                .pluck()
                .all(name) as string[];
        const deadLetter = storage.db
            .prepare(
                `SELECT i.idx, i.json FROM dataset_items i JOIN datasets ` +
                    `d ON d.seq = i.dataset_seq WHERE d.name = ? ORDER BY i.idx`,
            )
            .all(NAMES.deadLetter) as { idx: number; json: string }[];
        const itemCount =
            (storage.db
                .prepare('SELECT item_count FROM datasets WHERE name = ?')
                .pluck()
                .get(NAMES.deadLetter) as number) ?? 0;
        // Every seeded request as stored, by queue and path.
        const stored = new Map<string, RequestSchema | undefined>();
        for (const queue of [NAMES.httpQueue, NAMES.browserQueue]) {
            const client = new SqliteRequestQueueClient(storage.db, queue);
            for (const { path } of SEEDS) stored.set(`${queue} ${path}`, client.readRequest(getRequestId(url(path))));
        }
        return {
            http: { ...queueInfo(NAMES.httpQueue)!, urls: pendingUrls(NAMES.httpQueue) },
            browser: { ...queueInfo(NAMES.browserQueue)!, urls: pendingUrls(NAMES.browserQueue) },
            deadLetter: {
                idx: deadLetter.map((row) => row.idx),
                urls: deadLetter.map((row) => (JSON.parse(row.json) as DeadLetterEntry).url),
                itemCount,
            },
            counters: new RunState(storage.db, SITE).loadStats()?.counters,
            request: (queue: string, path: string) => stored.get(`${queue} ${path}`),
        };
    } finally {
        await storage.close();
    }
}

function openStore(dir: string, site = SITE): DeadLetterStore {
    const store = DeadLetterStore.open(dir, site);
    assert.ok(store, 'the dead-letter store opens');
    return store;
}

async function collect(store: DeadLetterStore, filter: Parameters<DeadLetterStore['entries']>[0]): Promise<string[]> {
    const urls: string[] = [];
    for await (const entry of store.entries(filter)) urls.push(entry.url);
    return urls;
}

interface Run {
    code: number | null;
    stdout: string;
    stderr: string;
}

/**
 * `node --import tsx src/commands/deadLetter.ts …` as
 * `npm run dead-letter` runs it, with no DRAGNET_* from outside.
 */
function runCommand(args: string[]): Promise<Run> {
    const env = { ...process.env, DRAGNET_SITE: '', DRAGNET_STORAGE_DIR: '' };
    return new Promise((resolve) => {
        execFile(
            process.execPath,
            ['--import', 'tsx', 'src/commands/deadLetter.ts', ...args],
            { cwd: ROOT, env, timeout: 60_000 },
            (error, stdout, stderr) =>
                resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
        );
    });
}

describe('SqliteDatasetClient.removeItems', () => {
    it('removes the items picked and renumbers the rest 1..n in their order, across read batches', async (t) => {
        const dir = await storageDir(t);
        const { storage } = openStorage(dir);
        t.after(() => storage.close());
        await storage.datasets().getOrCreate('numbers');
        const dataset = new SqliteDatasetClient<{ n: number }>(storage.db, 'numbers');
        dataset.appendItems(Array.from({ length: 9 }, (_, i) => ({ n: i + 1 })));
        const removed = dataset.removeItems((item) => item.n === 2 || item.n % 3 === 0, 2);
        assert.deepEqual(
            removed.map((item) => item.n),
            [2, 3, 6, 9],
        );
        const rows = storage.db.prepare('SELECT idx, json FROM dataset_items ORDER BY idx').all() as {
            idx: number;
            json: string;
        }[];
        assert.deepEqual(
            rows.map((row) => row.idx),
            [1, 2, 3, 4, 5],
        );
        assert.deepEqual(
            rows.map((row) => (JSON.parse(row.json) as { n: number }).n),
            [1, 4, 5, 7, 8],
        );
        assert.equal((await dataset.get())?.itemCount, 5);
        assert.deepEqual((await dataset.listItems({ offset: 3 })).items, [{ n: 7 }, { n: 8 }]);
        assert.deepEqual(
            dataset.removeItems(() => false),
            [],
        );
    });
});

describe('DeadLetterStore', () => {
    it('lists the entries that match every filter given, in order', async (t) => {
        const dir = await storageDir(t);
        await seedStores(dir);
        const store = openStore(dir);
        t.after(() => store.close());
        assert.deepEqual(await collect(store, {}), ['a', 'b', 'c', 'd', 'e'].map(url));
        assert.deepEqual(await collect(store, { failureClass: 'permanent' }), ['a', 'd'].map(url));
        assert.deepEqual(await collect(store, { failureClass: 'transient', label: 'product' }), [url('c')]);
        assert.deepEqual(await collect(store, { label: 'category', reason: 'http-503' }), [url('b')]);
        assert.deepEqual(await collect(store, { failureClass: 'invalid' }), []);
    });

    it(`re-queues exactly the entries of a class: pending with fresh \
attempts, out of the dead-letter, out of the counters`, async (t) => {
        const dir = await storageDir(t);
        await seedStores(dir);
        const before = await inspect(dir);
        assert.deepEqual([before.http.pending, before.browser.pending], [0, 0]);
        assert.equal(before.counters?.deadLettered, 5);

        const store = openStore(dir);
        const result = store.requeue({ failureClass: 'transient' });
        store.close();
        assert.deepEqual(
            result.entries.map((e) => e.url),
            ['b', 'c'].map(url),
        );
        assert.deepEqual(result.byQueue, { [NAMES.httpQueue]: 1, [NAMES.browserQueue]: 1 });
        assert.deepEqual([result.added, result.alreadyPending], [0, 0]);

        const after = await inspect(dir);
        assert.deepEqual(after.http.urls, [url('b')]);
        assert.deepEqual(after.browser.urls, [url('c')]);
        assert.deepEqual([after.http.total, after.browser.total], [before.http.total, before.browser.total]);
        assert.deepEqual(after.deadLetter, { idx: [1, 2, 3], urls: ['a', 'd', 'e'].map(url), itemCount: 3 });
        assert.equal(after.counters?.deadLettered, 3);
        assert.deepEqual(after.counters?.deadLetterReasons, { 'http-404': 1, 'http-410': 1, 'http-403': 1 });
        assert.deepEqual(
            after.counters?.errorsByClass,
            before.counters?.errorsByClass,
            'the errors happened: they stay counted',
        );

        const request = after.request(NAMES.httpQueue, 'b')!;
        assert.equal(request.handledAt, undefined);
        assert.equal(request.retryCount, 0);
        assert.equal(request.noRetry, false);
        assert.deepEqual(request.errorMessages, []);
        assert.equal(request.userData?.retryAt, undefined);
        assert.equal(request.userData?.firstFailedAt, undefined);
        assert.equal(request.userData?.label, 'category');
        assert.equal(
            (request.userData?.__crawlee as { sessionRotationCount?: number } | undefined)?.sessionRotationCount,
            undefined,
        );
        assert.ok(after.request(NAMES.httpQueue, 'a')!.handledAt, 'an entry not chosen stays handled');
    });

    it('re-queues by label, and adds a request that is missing from its queue', async (t) => {
        const dir = await storageDir(t);
        await seedStores(dir);
        {
            const { storage } = openStorage(dir);
            await new SqliteRequestQueueClient(storage.db, NAMES.browserQueue).deleteRequest(getRequestId(url('e')));
            await storage.close();
        }
        const store = openStore(dir);
        const result = store.requeue({ label: 'category' });
        store.close();
        assert.deepEqual(
            result.entries.map((e) => e.url),
            ['b', 'e'].map(url),
        );
        assert.equal(result.added, 1);
        const after = await inspect(dir);
        assert.deepEqual([after.http.urls, after.browser.urls], [[url('b')], [url('e')]]);
        assert.equal(after.request(NAMES.browserQueue, 'e')?.userData?.label, 'category');
        assert.deepEqual(after.deadLetter, { idx: [1, 2, 3], urls: ['a', 'c', 'd'].map(url), itemCount: 3 });

        // The next run resumes: the re-queued requests are what is pending.
        const resumed = await openSiteStores({ site: SITE, storageDir: dir });
        t.after(() => resumed.storage.close());
        assert.equal(resumed.resumed?.pending, 2);
        assert.equal(resumed.stats.deadLettered, 3);
        assert.equal((await resumed.httpQueue.fetchNextRequest())?.url, url('b'));
        assert.equal((await resumed.browserQueue.fetchNextRequest())?.url, url('e'));
    });

    it('changes nothing when no entry matches, and is not found where the site never ran', async (t) => {
        const dir = await storageDir(t);
        await seedStores(dir);
        const before = await inspect(dir);
        const store = openStore(dir);
        assert.deepEqual(store.requeue({ failureClass: 'permanent', label: 'category' }).entries, []);
        store.close();
        const after = await inspect(dir);
        assert.deepEqual(after.deadLetter, before.deadLetter);
        assert.deepEqual(after.counters, before.counters);
        assert.equal(DeadLetterStore.open(dir, 'other-site'), undefined);
        const empty = await storageDir(t);
        assert.equal(DeadLetterStore.open(empty, SITE), undefined);
        assert.deepEqual(readdirSync(empty), [], 'nothing created');
    });
});

describe('npm run dead-letter (child process)', () => {
    it('lists as a table with a count by class and reason, and as JSON lines, filtered', async (t) => {
        const dir = await storageDir(t);
        await seedStores(dir);
        const table = await runCommand(['list', '--site', SITE, '--storage-dir', dir, '--class', 'permanent']);
        assert.equal(table.code, 0, table.stderr);
        const lines = table.stdout.trimEnd().split('\n');
        assert.match(lines[0]!, /^url\s+label\s+class\s+reason\s+status\s+attempts\s+dead-lettered at$/);
        assert.match(
            lines[1]!,
            new RegExp(`^${url('a')}\\s+product\\s+permanent\\s+http-404\\s+404\\s+4\\s+\\d{4}-\\d\\d-\\d\\dT`),
        );
        assert.match(lines[2]!, new RegExp(`^${url('d')}\\s+product\\s+permanent\\s+http-410\\s+410\\s+4\\s`));
        assert.equal(lines[3], '2 entries with class permanent: permanent 2 (http-404 1, http-410 1)');
        assert.equal(lines.length, 4);

        const json = await runCommand(['list', '--json', '--site', SITE, '--storage-dir', dir, '--label', 'category']);
        assert.equal(json.code, 0, json.stderr);
        const entries = json.stdout
            .trimEnd()
            .split('\n')
            .map((line) => JSON.parse(line) as DeadLetterEntry);
        assert.deepEqual(
            entries.map((e) => [e.url, e.failureClass, e.reason, e.stage]),
            [
                [url('b'), 'transient', 'http-503', 'http'],
                [url('e'), 'blocked', 'http-403', 'browser'],
            ],
        );
        const limited = await runCommand(['list', '--json', '--limit', '1', '--site', SITE, '--storage-dir', dir]);
        assert.equal(limited.stdout.trimEnd().split('\n').length, 1);
    });

    it(`re-queues and says where to and what to run next; a \
bad class or a missing store is a one-line error`, async (t) => {
        const dir = await storageDir(t);
        await seedStores(dir);
        const requeue = await runCommand(['requeue', '--site', SITE, '--storage-dir', dir, '--reason', 'http-404']);
        assert.equal(requeue.code, 0, requeue.stderr);
        assert.match(
            requeue.stdout,
            new RegExp(`re-queued 1 dead-letter entry of ${SITE} with reason http-404: 1 to ${NAMES.httpQueue}\\n`),
        );
        assert.match(requeue.stdout, new RegExp(`next: npm start -- --site ${SITE} --storage-dir ${dir}`));
        assert.deepEqual((await inspect(dir)).http.urls, [url('a')]);
        const again = await runCommand(['requeue', '--site', SITE, '--storage-dir', dir, '--reason', 'http-404']);
        assert.equal(again.code, 0);
        assert.match(again.stdout, /^nothing matched/);

        assertOneLineError(
            await runCommand(['list', '--site', SITE, '--storage-dir', dir, '--class', 'fatal']),
            2,
            /--class must be one of transient, blocked, permanent, invalid, exit/,
        );
        assertOneLineError(
            await runCommand(['purge', '--site', SITE, '--storage-dir', dir]),
            2,
            /unknown action "purge"/,
        );
        const empty = await storageDir(t);
        const missing = join(empty, 'nowhere');
        assertOneLineError(
            await runCommand(['list', '--storage-dir', missing]),
            2,
            /no dead-letter of demo-shop in .*nowhere/,
        );
        assertOneLineError(await runCommand(['requeue', '--storage-dir', empty]), 2, /no dead-letter of demo-shop/);
        assert.equal(existsSync(missing), false, 'no storage dir created');
        assert.deepEqual(readdirSync(empty), [], 'no database created');
    });
});

describe('re-queued entries in the next run', () => {
    it(`resumes and fetches exactly the re-queued requests; the \
404s come back to the dead-letter, nothing is lost`, async (t) => {
        const shop = await startShop({
            products: 40,
            notFoundLinks: 4,
            transientFailureRate: 0,
            scriptOnlyRate: 0,
            persistentFailures: 1,
        });
        t.after(() => shop.close());
        const dir = await storageDir(t);
        const site = siteDefinition.name;
        const names = storeNames(site);
        const run = () =>
            crawl({
                site: siteDefinition,
                startUrls: [`${shop.url}/`],
                storageDir: dir,
                progressIntervalSecs: 3600,
                chromiumPath: undefined,
                retry: { maxAttempts: 2, baseDelaySecs: 0.01 },
                log: createLogger({ level: 'silent' }),
            });
        const requested = (paths: string[]) => paths.map((path) => shop.stats().byPath[path] ?? {});

        const first = await run();
        assert.equal(first.exitCode, 0);
        const deadLetters = await readDataset<DeadLetterEntry>(dir, names.deadLetter);
        const path = (entry: DeadLetterEntry) => new URL(entry.url).pathname;
        assert.deepEqual(
            deadLetters
                .filter((e) => e.failureClass === 'permanent')
                .map(path)
                .sort(),
            [...shop.notFoundPaths].sort(),
        );
        assert.deepEqual(
            deadLetters.filter((e) => e.failureClass === 'transient').map(path),
            shop.persistentFailurePaths,
        );
        const items = (await readDataset(dir, site)).length;

        const requeue = await runCommand([
            'requeue',
            '--site',
            site,
            '--storage-dir',
            dir,
            '--class',
            'permanent',
            '--label',
            'product',
        ]);
        assert.equal(requeue.code, 0, requeue.stderr);
        assert.match(
            requeue.stdout,
            new RegExp(
                `re-queued ${shop.notFoundPaths.length} dead-letter entries ` +
                    `of ${site} .*: ${shop.notFoundPaths.length} to ${names.httpQueue}`,
            ),
        );
        assert.deepEqual(
            (await readDataset<DeadLetterEntry>(dir, names.deadLetter)).map(path),
            shop.persistentFailurePaths,
        );

        shop.resetStats();
        const second = await run();
        assert.equal(second.exitCode, 0);
        const fetched = Object.keys(shop.stats().byPath).filter((p) => p !== '/robots.txt');
        assert.deepEqual(fetched.sort(), [...shop.notFoundPaths].sort(), 'only the re-queued requests were fetched');
        for (const counts of requested(shop.notFoundPaths))
            assert.equal(
                Object.values(counts).reduce((a, b) => a + b, 0),
                1,
            );

        const after = await readDataset<DeadLetterEntry>(dir, names.deadLetter);
        assert.deepEqual(after.map(path).sort(), deadLetters.map(path).sort(), 'every dead-letter entry is back');
        assert.equal((await readDataset(dir, site)).length, items);
        assert.deepEqual(second.summary.requests, first.summary.requests, 'the counters count each request once');

        // A request whose attempts were used up gets all of them again.
        const store = DeadLetterStore.open(dir, site)!;
        assert.deepEqual(store.requeue({ failureClass: 'transient' }).entries.map(path), shop.persistentFailurePaths);
        store.close();
        shop.resetStats();
        const third = await run();
        assert.equal(third.exitCode, 0);
        assert.deepEqual(requested(shop.persistentFailurePaths), [{ 503: 2 }]);
        const last = await readDataset<DeadLetterEntry>(dir, names.deadLetter);
        assert.deepEqual(last.map(path).sort(), deadLetters.map(path).sort());
        assert.deepEqual(
            last.filter((e) => e.failureClass === 'transient').map((e) => e.attempts),
            [2],
        );
        assert.equal(third.summary.requests.deadLettered, first.summary.requests.deadLettered);
    });
});
