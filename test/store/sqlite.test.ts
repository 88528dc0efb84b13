import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it, type TestContext } from 'node:test';
import { CheerioCrawler } from '@crawlee/cheerio';
import { Configuration, Dataset, log, RequestQueue } from '@crawlee/core';

import { BoundedRequestQueue } from '../../src/store/sqlite/boundedRequestQueue.js';
import type { SqliteRequestQueueClient } from '../../src/store/sqlite/requestQueueClient.js';
import { SqliteStorageClient } from '../../src/store/sqlite/storageClient.js';

log.setLevel(log.LEVELS.WARNING);

/** A fresh storage dir, removed when the test ends. */
async function storageDir(t: TestContext): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'dragnet-sqlite-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    return dir;
}

/** Crawlee storage over a SqliteStorageClient on `dir`, torn down when the test ends. */
function open(t: TestContext, dir: string, options: { releaseLocksOnOpen?: boolean } = {}) {
    const storage = new SqliteStorageClient({ storageDir: dir, ...options });
    t.after(() => storage.close());
    return { storage, config: new Configuration({ storageClient: storage }) };
}

const url = (path: string) => `http://127.0.0.1:9/${path}`;

async function drain(queue: RequestQueue): Promise<string[]> {
    const order: string[] = [];
    for (let request = await queue.fetchNextRequest(); request; request = await queue.fetchNextRequest()) {
        order.push(request.url);
        await queue.markRequestHandled(request);
    }
    return order;
}

describe('SqliteStorageClient request queues', () => {
    it('adds, deduplicates and reports requests already present or handled', async (t) => {
        const dir = await storageDir(t);
        const { config, storage } = open(t, dir);
        const queue = await RequestQueue.open('q', { config });
        const first = await queue.addRequests([{ url: url('a') }, { url: url('b') }]);
        assert.deepEqual(
            first.processedRequests.map((r) => r.wasAlreadyPresent),
            [false, false],
        );

        // The client itself, not Crawlee's cache in front of it, knows what is stored.
        const client = storage.requestQueue(queue.id);
        const again = await client.batchAddRequests([
            { url: url('a'), uniqueKey: url('a') },
            { url: url('c'), uniqueKey: url('c') },
        ]);
        assert.deepEqual(
            again.processedRequests.map((r) => [r.uniqueKey, r.wasAlreadyPresent]),
            [
                [url('a'), true],
                [url('c'), false],
            ],
        );

        const a = (await queue.fetchNextRequest())!;
        await queue.markRequestHandled(a);
        const handled = await client.addRequest({ url: url('a'), uniqueKey: url('a') });
        assert.deepEqual(handled, { requestId: a.id, wasAlreadyPresent: true, wasAlreadyHandled: true });
        assert.equal((await queue.getRequest(a.id!))?.handledAt, a.handledAt);
        assert.deepEqual(
            await client.get().then((i) => [i?.totalRequestCount, i?.handledRequestCount, i?.pendingRequestCount]),
            [3, 1, 2],
        );
    });

    it('serves forefront requests first, latest first, then the rest in insertion order', async (t) => {
        const { config } = open(t, await storageDir(t));
        const queue = await RequestQueue.open('q', { config });
        await queue.addRequests(['a', 'b', 'c'].map((p) => ({ url: url(p) })));
        await queue.addRequest({ url: url('x') }, { forefront: true });
        await queue.addRequest({ url: url('y') }, { forefront: true });
        assert.deepEqual(await drain(queue), ['y', 'x', 'a', 'b', 'c'].map(url));
    });

    it('stores the batches added in one turn together at its end, each batch whole or not at all', async (t) => {
        const { config, storage } = open(t, await storageDir(t));
        const queue = await RequestQueue.open('q', { config });
        const client = storage.requestQueue(queue.id);
        const batch = (...paths: string[]) => paths.map((p) => ({ url: url(p), uniqueKey: url(p) }));
        // JSON.stringify throws on a BigInt: this batch cannot be stored, and its first request must not be either.
        const unstorable = [...batch('u'), { url: url('v'), uniqueKey: url('v'), userData: { n: 1n } }];
        const adds = [
            client.batchAddRequests(batch('a', 'b')),
            client.batchAddRequests(unstorable as Parameters<typeof client.batchAddRequests>[0]),
            client.batchAddRequests(batch('x'), { forefront: true }),
            client.batchAddRequests(batch('c')),
        ];
        assert.equal((await client.listHead()).items.length, 0, 'nothing is stored within the turn');
        const [ab, uv, x, c] = await Promise.allSettled(adds);
        assert.equal(uv!.status, 'rejected');
        assert.match(String((uv as PromiseRejectedResult).reason), /BigInt/);
        for (const settled of [ab, x, c]) assert.equal(settled!.status, 'fulfilled');
        assert.deepEqual(
            (
                ab as PromiseFulfilledResult<{ processedRequests: { wasAlreadyPresent: boolean }[] }>
            ).value.processedRequests.map((r) => r.wasAlreadyPresent),
            [false, false],
        );
        assert.deepEqual(
            await client.get().then((i) => [i?.totalRequestCount, i?.pendingRequestCount]),
            [4, 4],
            'counted without the failed batch',
        );
        assert.deepEqual(await drain(queue), ['x', 'a', 'b', 'c'].map(url));
    });

    it('fetches, marks handled and reclaims; isFinished and counts follow', async (t) => {
        const { config } = open(t, await storageDir(t));
        const queue = await RequestQueue.open('q', { config });
        await queue.addRequests(['a', 'b', 'c'].map((p) => ({ url: url(p) })));
        const a = (await queue.fetchNextRequest())!;
        assert.equal(a.url, url('a'));
        await queue.reclaimRequest(a); // back of the queue
        assert.equal(await queue.isFinished(), false);
        const b = (await queue.fetchNextRequest())!;
        await queue.reclaimRequest(b, { forefront: true }); // front of the queue
        assert.deepEqual(await drain(queue), ['b', 'c', 'a'].map(url));
        assert.equal(await queue.isFinished(), true);
        assert.equal(await queue.handledCount(), 3);
        assert.deepEqual(await queue.getInfo().then((i) => [i?.totalRequestCount, i?.pendingRequestCount]), [3, 0]);
    });

    it('locks belong to one client until they expire', async (t) => {
        const { storage } = open(t, await storageDir(t));
        const info = await storage.requestQueues().getOrCreate('q');
        const mine = storage.requestQueue(info.id, { clientKey: 'mine' });
        const theirs = storage.requestQueue(info.id, { clientKey: 'theirs' });
        await mine.batchAddRequests(['a', 'b'].map((p) => ({ url: url(p), uniqueKey: url(p) })));

        const locked = await mine.listAndLockHead({ limit: 1, lockSecs: 0.3 });
        const [a] = locked.items;
        assert.equal(a?.url, url('a'));
        assert.equal(locked.queueHasLockedRequests, true);
        assert.deepEqual(
            (await theirs.listHead()).items.map((i) => i.url),
            [url('b')],
        );
        await assert.rejects(theirs.prolongRequestLock(a!.id, { lockSecs: 10 }), /locked by another client/);
        await assert.rejects(theirs.deleteRequestLock(a!.id), /locked by another client/);
        const theirLock = await theirs.listAndLockHead({ limit: 5, lockSecs: 0.3 });
        assert.deepEqual(
            theirLock.items.map((i) => i.url),
            [url('b')],
        );
        assert.equal((await theirs.listAndLockHead({ limit: 5, lockSecs: 60 })).items.length, 0);

        await sleep(400); // both locks expired: the requests are free again, from their old places
        const retaken = await theirs.listAndLockHead({ limit: 5, lockSecs: 60 });
        assert.deepEqual(
            retaken.items.map((i) => i.url),
            [url('a'), url('b')],
        );
        await assert.rejects(mine.prolongRequestLock(a!.id, { lockSecs: 10 }), /locked by another client/);
        await theirs.deleteRequestLock(a!.id);
        assert.deepEqual(
            (await mine.listHead()).items.map((i) => i.url),
            [url('a')],
        );
    });

    it(`answers the prolong and the hydration right after a listing from \
what the listing read, and reads anew once the request changed`, async (t) => {
        const { storage } = open(t, await storageDir(t));
        const info = await storage.requestQueues().getOrCreate('q');
        const client = storage.requestQueue(info.id, { clientKey: 'mine' }) as SqliteRequestQueueClient;
        await client.batchAddRequests(
            ['a', 'b', 'c', 'd'].map((p) => ({ url: url(p), uniqueKey: url(p), userData: { n: 1 } })),
        );
        const { items } = await client.listAndLockHead({ limit: 4, lockSecs: 60 });
        const [a, b, c, d] = items;

        // As Crawlee hydrates a listed request: prolong, then get — the listing's own object, once.
        assert.equal(
            (await client.prolongRequestLock(a!.id, { lockSecs: 60 })).lockExpiresAt.getTime() > Date.now() + 55_000,
            true,
        );
        assert.equal(await client.getRequest(a!.id), a);
        const again = await client.getRequest(a!.id);
        assert.notEqual(again, a);
        assert.deepEqual(again, a);

        // Each change this client makes is read back from the queue, not from the listing.
        await client.updateRequest({ ...b!, userData: { n: 2 } });
        assert.deepEqual((await client.getRequest(b!.id))?.userData, { n: 2 });
        assert.equal(client.markHandled(c as never), 'marked');
        assert.ok((await client.getRequest(c!.id))?.handledAt);
        await client.deleteRequestLock(d!.id, { forefront: true });
        assert.equal((await client.listHead({ limit: 1 })).items[0]?.id, d!.id, 'given back to the front');
        await client.updateRequest({ ...d!, userData: { n: 3 } });
        assert.deepEqual((await client.getRequest(d!.id))?.userData, { n: 3 });
    });

    it('a request fetched by a client that never finishes it goes to another once the lock expires', async (t) => {
        const dir = await storageDir(t);
        const crashed = await RequestQueue.open('q', { config: open(t, dir).config });
        crashed.requestLockSecs = 0.5;
        await crashed.addRequest({ url: url('a') });
        assert.equal((await crashed.fetchNextRequest())?.url, url('a'));

        const survivor = await RequestQueue.open('q', { config: open(t, dir).config });
        assert.equal(await survivor.fetchNextRequest(), null);
        assert.equal(await survivor.isFinished(), false, 'a request locked by another client is not finished');
        await sleep(1100); // listAndLockHead's lock, then fetchNextRequest's prolong
        assert.deepEqual(await drain(survivor), [url('a')]);
        assert.equal(await survivor.isFinished(), true);
    });

    it('reopening the storage dir gives the same queue', async (t) => {
        const dir = await storageDir(t);
        const first = open(t, dir);
        const queue = await RequestQueue.open('q', { config: first.config });
        await queue.addRequests(['a', 'b', 'c', 'd'].map((p) => ({ url: url(p) })));
        await queue.addRequest({ url: url('f') }, { forefront: true });
        await queue.markRequestHandled((await queue.fetchNextRequest())!);
        const before = await queue.getInfo();
        await first.storage.close();

        const reopened = await RequestQueue.open('q', { config: open(t, dir, { releaseLocksOnOpen: true }).config });
        const after = await reopened.getInfo();
        assert.deepEqual([after?.id, after?.totalRequestCount, after?.handledRequestCount], [before?.id, 5, 1]);
        assert.deepEqual(await drain(reopened), ['a', 'b', 'c', 'd'].map(url));
    });

    it('drop() deletes the queue and its requests', async (t) => {
        const { config, storage } = open(t, await storageDir(t));
        const queue = await RequestQueue.open('q', { config });
        await queue.addRequest({ url: url('a') });
        await queue.drop();
        assert.deepEqual((await storage.requestQueues().list()).items, []);
        assert.deepEqual(storage.db.prepare('SELECT count(*) AS n FROM requests').get(), { n: 0 });
        const fresh = await RequestQueue.open('q', { config });
        assert.equal(await fresh.isFinished(), true);
    });
});

describe('SqliteStorageClient retry waits, random order and outcome commits', () => {
    it(`a reclaimed request with a future retryAt waits without blocking \
the rest, and the queue is not finished meanwhile`, async (t) => {
        const { config } = open(t, await storageDir(t));
        const queue = await RequestQueue.open('q', { config });
        await queue.addRequests(['a', 'b', 'c'].map((p) => ({ url: url(p) })));
        const a = (await queue.fetchNextRequest())!;
        const waitMs = 600;
        const reclaimedAt = Date.now();
        a.userData.retryAt = reclaimedAt + waitMs;
        await queue.reclaimRequest(a);

        // The others come first, and the waiting one is not handed out before its time.
        const order: string[] = [];
        for (let request = await queue.fetchNextRequest(); request; request = await queue.fetchNextRequest()) {
            order.push(request.url);
            await queue.markRequestHandled(request);
        }
        assert.deepEqual(order, ['b', 'c'].map(url));
        assert.equal(await queue.isFinished(), false, 'a request waiting for its retry keeps the queue unfinished');

        let retried: Awaited<ReturnType<typeof queue.fetchNextRequest>> = null;
        while (!retried) {
            retried = await queue.fetchNextRequest();
            if (!retried) await sleep(50);
        }
        assert.equal(retried.url, url('a'));
        assert.ok(Date.now() >= reclaimedAt + waitMs, 'not before its retry time');
        await queue.markRequestHandled(retried);
        assert.equal(await queue.isFinished(), true);
    });

    it('a retry whose wait is over comes before the requests queued meanwhile', async (t) => {
        const { config } = open(t, await storageDir(t));
        const queue = await RequestQueue.open('q', { config });
        await queue.addRequest({ url: url('a') });
        const a = (await queue.fetchNextRequest())!;
        a.userData.retryAt = Date.now() + 300;
        await queue.reclaimRequest(a);
        const later = Array.from({ length: 100 }, (_, i) => url(`later-${i}`));
        await queue.addRequests(later.map((u) => ({ url: u })));
        const first = (await queue.fetchNextRequest())!;
        assert.equal(first.url, later[0], 'during the wait the rest goes on');
        await queue.markRequestHandled(first);
        await sleep(350);
        const order: string[] = [];
        for (let request = await queue.fetchNextRequest(); request; request = await queue.fetchNextRequest()) {
            order.push(request.url);
            await queue.markRequestHandled(request);
        }
        // Crawlee's RequestQueue takes requests from the queue 25 at a time, and hands those out first.
        assert.ok(
            order.indexOf(url('a')) <= 25,
            `the retry came ${order.indexOf(url('a')) + 1}th of ${order.length}, not at the end`,
        );
    });

    it("releasing a dead process's locks frees fetched requests but keeps retry waits", async (t) => {
        const dir = await storageDir(t);
        const before = await RequestQueue.open('q', { config: open(t, dir).config });
        await before.addRequests(['a', 'b', 'c'].map((p) => ({ url: url(p) })));
        const a = (await before.fetchNextRequest())!;
        a.userData.retryAt = Date.now() + 60_000;
        await before.reclaimRequest(a);
        // b is being fetched and c waits in the process's local head: both locked, as by a process killed now.
        await before.fetchNextRequest();

        const { storage } = open(t, dir);
        const info = await storage.requestQueues().getOrCreate('q');
        const client = storage.requestQueue(info.id) as SqliteRequestQueueClient;
        assert.deepEqual((await client.listHead()).items, []);
        assert.equal(client.releaseLocks(), 2);
        assert.deepEqual(
            (await client.listHead()).items.map((i) => i.url),
            ['b', 'c'].map(url),
        );
    });

    it(`random order hands out every request once, not in \
insertion order; forefront requests still come first`, async (t) => {
        const dir = await storageDir(t);
        const storage = new SqliteStorageClient({ storageDir: dir, randomOrder: true });
        t.after(() => storage.close());
        const queue = await RequestQueue.open('q', { config: new Configuration({ storageClient: storage }) });
        const paths = Array.from({ length: 200 }, (_, i) => `p${i}`);
        await queue.addRequests(paths.map((p) => ({ url: url(p) })));
        await queue.addRequest({ url: url('first') }, { forefront: true });
        const order = await drain(queue);
        assert.equal(order[0], url('first'));
        const rest = order.slice(1);
        assert.deepEqual([...rest].sort(), paths.map(url).sort(), 'each request exactly once');
        assert.notDeepEqual(rest, paths.map(url), 'shuffled');
        // Not merely rotated or reversed: far from sorted by insertion.
        const inPlace = rest.filter((u, i) => u === url(paths[i]!)).length;
        assert.ok(inPlace < 20, `${inPlace} of 200 in their insertion place`);
    });

    it("markHandled commits inside the caller's transaction; Crawlee's mark after it writes nothing", async (t) => {
        const { storage, config } = open(t, await storageDir(t));
        const queue = await RequestQueue.open('q', { config });
        await queue.addRequests(['a', 'b'].map((p) => ({ url: url(p) })));
        const client = queue.client as SqliteRequestQueueClient;
        const a = (await queue.fetchNextRequest())!;
        // A transaction that fails after marking leaves the request pending.
        assert.throws(() =>
            storage.db.transaction(() => {
                assert.equal(client.markHandled(a), 'marked');
                throw new Error('the outcome could not be stored');
            })(),
        );
        assert.equal((await queue.getInfo())?.handledRequestCount, 0);

        assert.equal(client.markHandled(a), 'marked');
        assert.equal(client.markHandled(a), 'handled-already');
        assert.equal(client.markHandled({ url: url('elsewhere'), uniqueKey: url('elsewhere') } as never), 'not-here');
        const stored = await queue.getRequest(a.id!);
        await queue.markRequestHandled(a);
        assert.equal((await queue.getRequest(a.id!))?.handledAt, stored?.handledAt);
        assert.deepEqual(await queue.getInfo().then((i) => [i?.handledRequestCount, i?.pendingRequestCount]), [1, 1]);
    });
});

describe('BoundedRequestQueue', () => {
    it('keeps order, dedup and counts with caches far smaller than the queue', async (t) => {
        const saved = [BoundedRequestQueue.requestCacheSize, BoundedRequestQueue.seenCacheSlots] as const;
        [BoundedRequestQueue.requestCacheSize, BoundedRequestQueue.seenCacheSlots] = [3, 2];
        t.after(() => ([BoundedRequestQueue.requestCacheSize, BoundedRequestQueue.seenCacheSlots] = saved));

        const { config } = open(t, await storageDir(t));
        const queue = await BoundedRequestQueue.open('q', { config });
        assert.ok(queue instanceof BoundedRequestQueue);
        const paths = Array.from({ length: 20 }, (_, i) => `r${i}`);
        for (let i = 0; i < paths.length; i += 5)
            await queue.addRequests(paths.slice(i, i + 5).map((p) => ({ url: url(p) })));
        await queue.addRequest({ url: url('f') }, { forefront: true });

        const again = await queue.addRequests(paths.map((p) => ({ url: url(p) })));
        assert.ok(
            again.processedRequests.every((r) => r.wasAlreadyPresent),
            'the database answers what the caches forgot',
        );
        assert.deepEqual(await drain(queue), [url('f'), ...paths.map(url)]);
        assert.equal(await queue.isFinished(), true);
        assert.equal(await queue.handledCount(), 21);
        const handled = await queue.addRequest({ url: url('r0') });
        assert.deepEqual([handled.wasAlreadyPresent, handled.wasAlreadyHandled], [true, true]);
        // biome-ignore lint/plugin/noDoubleCast: the request LRU is private in Crawlee's types
        assert.ok((queue as unknown as { requestCache: { length(): number } }).requestCache.length() <= 3);
    });

    it('a reclaimed request fetched again before the reclaim has finished is handed out once', async (t) => {
        const { config } = open(t, await storageDir(t));
        const queue = await BoundedRequestQueue.open('q', { config });
        await queue.addRequest({ url: url('a') });
        const first = (await queue.fetchNextRequest())!;
        // Crawlee's reclaim stores the request, then deletes its lock: the store has made it pending,
        // and another task of the crawler fetches and locks it before that delete.
        const reclaiming = queue.reclaimRequest(first);
        const second = await queue.fetchNextRequest();
        await reclaiming;
        assert.equal(second?.url, url('a'));
        assert.equal(await queue.fetchNextRequest(), null, 'the request is in progress: not handed out again');
        await queue.markRequestHandled(second!);
        assert.equal(await queue.isFinished(), true);

        // Reclaimed to the front, it comes next, before the requests this queue has listed already.
        const rest = Array.from({ length: 60 }, (_, i) => url(`r${i}`));
        await queue.addRequests(rest.map((u) => ({ url: u })));
        const r0 = (await queue.fetchNextRequest())!;
        await queue.reclaimRequest(r0, { forefront: true });
        const order = await drain(queue);
        assert.equal(order[0], r0.url);
        assert.deepEqual(order.sort(), rest.sort());
    });
});

describe('SqliteStorageClient datasets', () => {
    it('pushes and pages items with offset, limit and desc', async (t) => {
        const { config, storage } = open(t, await storageDir(t));
        const dataset = await Dataset.open<{ n: number }>('d', { config });
        await dataset.pushData({ n: 0 });
        await dataset.pushData(Array.from({ length: 9 }, (_, i) => ({ n: i + 1 })));
        const ns = (items: Array<{ n: number }>) => items.map((item) => item.n);

        const all = await dataset.getData();
        assert.deepEqual([all.total, all.count, ns(all.items)], [10, 10, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]]);
        assert.deepEqual(ns((await dataset.getData({ offset: 3, limit: 2 })).items), [3, 4]);
        assert.deepEqual(ns((await dataset.getData({ desc: true, limit: 3 })).items), [9, 8, 7]);
        assert.deepEqual(ns((await dataset.getData({ desc: true, offset: 8, limit: 5 })).items), [1, 0]);
        assert.deepEqual(ns((await dataset.getData({ offset: 20 })).items), []);
        assert.equal((await dataset.getInfo())?.itemCount, 10);

        const iterated: number[] = [];
        for await (const item of dataset.values({ offset: 7 })) iterated.push(item.n);
        assert.deepEqual(iterated, [7, 8, 9]);
        const entries: Array<[number, unknown]> = [];
        for await (const [index, item] of dataset.entries({ limit: 2 })) entries.push([index, item]);
        assert.deepEqual(entries, [
            [0, { n: 0 }],
            [1, { n: 1 }],
        ]);
        const batched: number[] = [];
        for await (const item of storage.iterateItems<{ n: number }>('d', { batchSize: 3 })) batched.push(item.n);
        assert.deepEqual(batched, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    });

    it('rejects items that are not objects, storing none of the batch', async (t) => {
        const { storage } = open(t, await storageDir(t));
        const { id } = await storage.datasets().getOrCreate('d');
        const client = storage.dataset(id);
        await assert.rejects(client.pushItems(['{"ok":1}', '[1]']), /must be a JSON object/);
        await assert.rejects(client.pushItems('[{"ok":1},5]'), /must be a JSON object/);
        assert.equal((await client.get())?.itemCount, 0);
        await client.pushItems('[{"ok":1},{"ok":2}]');
        assert.equal((await client.get())?.itemCount, 2);
    });

    it('drop() deletes the dataset; items survive a reopen', async (t) => {
        const dir = await storageDir(t);
        const first = open(t, dir);
        await (await Dataset.open('kept', { config: first.config })).pushData([{ a: 1 }, { a: 2 }]);
        await (await Dataset.open('dropped', { config: first.config })).drop();
        await first.storage.close();

        const { config, storage } = open(t, dir);
        assert.deepEqual(
            (await storage.datasets().list()).items.map((d) => [d.name, d.itemCount]),
            [['kept', 2]],
        );
        assert.deepEqual((await (await Dataset.open('kept', { config })).getData()).items, [{ a: 1 }, { a: 2 }]);
    });

    it('purge() empties the default storages and keeps named ones', async (t) => {
        const { config, storage } = open(t, await storageDir(t));
        await (await Dataset.open(undefined, { config })).pushData({ a: 1 });
        await (await Dataset.open('named', { config })).pushData({ a: 1 });
        await storage.purge();
        assert.deepEqual(
            (await storage.datasets().list()).items.map((d) => d.name),
            ['named'],
        );
    });
});

describe('SqliteStorageClient under a real CheerioCrawler', () => {
    it('crawls 200 linked pages on a local server: each fetched once, 200 items stored', async (t) => {
        const pages = 200;
        const hits = new Map<string, number>();
        const server = createServer((req, res) => {
            hits.set(req.url!, (hits.get(req.url!) ?? 0) + 1);
            const n = Number(req.url!.split('/').pop());
            const links = [(n + 1) % pages, (n * 7 + 3) % pages].map((m) => `<a href="/p/${m}">${m}</a>`).join(' ');
            res.writeHead(200, { 'content-type': 'text/html' }).end(
                `<html><title>page ${n}</title><body>${links}</body></html>`,
            );
        });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        t.after(() => server.close());
        const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

        const { config } = open(t, await storageDir(t));
        const crawler = new CheerioCrawler(
            {
                maxConcurrency: 20,
                requestHandler: async ({ request, $, enqueueLinks, pushData }) => {
                    await pushData({ url: request.url, title: $('title').text() });
                    await enqueueLinks();
                },
            },
            config,
        );
        const stats = await crawler.run([`${origin}/p/0`]);

        assert.equal(stats.requestsFinished, pages);
        assert.equal(hits.size, pages);
        assert.deepEqual([...new Set(hits.values())], [1], 'every page fetched exactly once');
        const dataset = await Dataset.open(undefined, { config });
        assert.equal((await dataset.getInfo())?.itemCount, pages);
        const queue = await RequestQueue.open(null, { config });
        assert.deepEqual(await queue.getInfo().then((i) => [i?.totalRequestCount, i?.handledRequestCount]), [
            pages,
            pages,
        ]);
    });
});
