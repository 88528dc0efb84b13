import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';

import { deadLetterOutcome } from '../../src/frontier/deadLetter.js';
import { urlKey } from '../../src/frontier/normalize.js';
import { SqliteOutcomes as Outcomes } from '../../src/store/sqlite/outcomes.js';
import type { StoredItem } from '../../src/store/records.js';
import { openSiteStores, type SiteStores } from '../../src/wiring/open.js';
import { readDataset } from '../helpers/stores.js';

const SITE = 'outcome-site';
const url = (path: string) => `http://127.0.0.1:9/${path}`;

async function storageDir(t: TestContext): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'dragnet-outcomes-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    return dir;
}

function item(path: string): StoredItem {
    return {
        title: path,
        _url: url(path),
        _route: 'product',
        _rawKey: 'k',
        _renderer: 'http',
        _fetchedAt: new Date(0).toISOString(),
    };
}

async function openStores(dir: string, options: { fresh?: boolean } = {}): Promise<SiteStores> {
    return openSiteStores({ site: SITE, storageDir: dir, ...options });
}

/** Stores in a fresh dir with one request, `a`, fetched and in flight. */
async function oneInFlight(t: TestContext) {
    const dir = await storageDir(t);
    const stores = await openStores(dir);
    await stores.httpQueue.addRequest({ url: url('a') });
    return { dir, stores, outcomes: new Outcomes(stores), a: (await stores.httpQueue.fetchNextRequest())! };
}

describe('Outcomes', () => {
    it('stores items and dead-letter entries with the request marked handled and the counters saved', async (t) => {
        const dir = await storageDir(t);
        const stores = await openStores(dir);
        const outcomes = new Outcomes(stores);
        await stores.httpQueue.addRequests(['a', 'b'].map((p) => ({ url: url(p) })));
        const a = (await stores.httpQueue.fetchNextRequest())!;
        await outcomes.settle(stores.httpQueue, a, { items: [item('a')], count: (stats) => (stats.itemsStored += 1) });
        const b = (await stores.httpQueue.fetchNextRequest())!;
        await outcomes.settle(
            stores.httpQueue,
            b,
            deadLetterOutcome({
                url: b.url,
                failureClass: 'permanent',
                reason: 'http-404',
                error: 'HTTP 404',
                attempts: 1,
                stage: 'http',
            }),
        );
        assert.equal((await stores.httpQueue.getInfo())?.handledRequestCount, 2);
        assert.deepEqual(stores.runState.loadStats()?.counters.itemsStored, 1);
        assert.deepEqual(stores.runState.loadStats()?.counters.deadLetterReasons, { 'http-404': 1 });
        await stores.storage.close();
        assert.deepEqual(
            (await readDataset(dir, SITE)).map((i) => i._url),
            [url('a')],
        );
        assert.deepEqual(
            (await readDataset(dir, `${SITE}-dead-letter`)).map((e) => [e.url, e.reason]),
            [[url('b'), 'http-404']],
        );
    });

    it("leaves a settled request as it was stored when Crawlee's own markRequestHandled follows", async (t) => {
        const { stores, outcomes, a } = await oneInFlight(t);
        await outcomes.settle(stores.httpQueue, a, { items: [item('a')] });
        const stored = await stores.httpQueue.getRequest(a.id!);
        // What the crawler does after the request handler returns; the request object has moved on since.
        a.userData.changedAfterSettle = true;
        await stores.httpQueue.markRequestHandled(a);
        assert.deepEqual(await stores.httpQueue.getRequest(a.id!), stored);
        assert.deepEqual(
            await stores.httpQueue.getInfo().then((i) => [i?.handledRequestCount, i?.pendingRequestCount]),
            [1, 0],
        );
        assert.equal(await stores.httpQueue.isFinished(), true);
        await stores.storage.close();
    });

    it(`stores one outcome for a request: a second attempt \
of a handled request stores and counts nothing`, async (t) => {
        const { dir, stores, outcomes, a } = await oneInFlight(t);
        const giveUp = () =>
            deadLetterOutcome({
                url: a.url,
                failureClass: 'transient',
                reason: 'http-503',
                error: 'HTTP 503',
                attempts: 2,
                stage: 'http',
            });
        await outcomes.settle(stores.httpQueue, a, giveUp());
        await outcomes.settle(stores.httpQueue, a, giveUp());
        await outcomes.settle(stores.httpQueue, a, { items: [item('a')], count: (stats) => (stats.itemsStored += 1) });
        assert.equal((await stores.httpQueue.getInfo())?.handledRequestCount, 1);
        assert.deepEqual(stores.runState.loadStats()?.counters.deadLetterReasons, { 'http-503': 1 });
        assert.equal(stores.runState.loadStats()?.counters.itemsStored, 0);
        await stores.storage.close();
        assert.deepEqual(
            (await readDataset(dir, `${SITE}-dead-letter`)).map((e) => [e.url, e.reason]),
            [[url('a'), 'http-503']],
        );
        assert.deepEqual(await readDataset(dir, SITE), []);
    });

    it('stores nothing and leaves the request pending when the outcome cannot be stored', async (t) => {
        const { dir, stores, outcomes, a } = await oneInFlight(t);
        const unstorable: StoredItem = { ...item('a'), size: 10n }; // JSON.stringify throws on a BigInt
        await assert.rejects(
            outcomes.settle(stores.httpQueue, a, {
                items: [item('ok'), unstorable],
                count: (stats) => (stats.itemsStored += 2),
            }),
        );
        assert.equal((await stores.httpQueue.getInfo())?.handledRequestCount, 0);
        assert.equal(stores.stats.itemsStored, 0);
        await stores.storage.close();
        assert.deepEqual(await readDataset(dir, SITE), []);
    });

    it(`commits the outcomes settled in one turn of the event loop \
together, after it; one that cannot be stored fails alone`, async (t) => {
        const dir = await storageDir(t);
        const stores = await openStores(dir);
        const outcomes = new Outcomes(stores);
        await stores.httpQueue.addRequests(['a', 'b', 'c'].map((p) => ({ url: url(p) })));
        const requests = [
            (await stores.httpQueue.fetchNextRequest())!,
            (await stores.httpQueue.fetchNextRequest())!,
            (await stores.httpQueue.fetchNextRequest())!,
        ];
        const unstorable: StoredItem = { ...item('b'), size: 10n };
        const settling = requests.map((request, index) =>
            outcomes.settle(stores.httpQueue, request, {
                items: [index === 1 ? unstorable : item(request.url.slice(-1))],
                count: (stats) => (stats.itemsStored += 1),
            }),
        );
        assert.equal(
            (await stores.httpQueue.getInfo())?.handledRequestCount,
            0,
            'nothing is committed before the turn ends',
        );
        assert.deepEqual(
            (await Promise.allSettled(settling)).map((result) => result.status),
            ['fulfilled', 'rejected', 'fulfilled'],
        );
        assert.equal((await stores.httpQueue.getInfo())?.handledRequestCount, 2);
        assert.equal((await stores.httpQueue.getRequest(requests[1]!.id!))?.handledAt, undefined);
        assert.equal(stores.runState.loadStats()?.counters.itemsStored, 2);
        await stores.storage.close();
        assert.deepEqual(
            (await readDataset(dir, SITE)).map((i) => i._url),
            [url('a'), url('c')],
        );
    });
});

describe('openSiteStores', () => {
    it(`resumes an unfinished run: counters, stored items, the \
seen-set and claims are back; stale locks are freed`, async (t) => {
        const dir = await storageDir(t);
        const first = await openStores(dir);
        const outcomes = new Outcomes(first);
        await first.httpQueue.addRequests(['a', 'b', 'c'].map((p) => ({ url: url(p) })));
        first.stats.admitted = 3;
        const a = (await first.httpQueue.fetchNextRequest())!;
        await outcomes.settle(first.httpQueue, a, {
            items: [item('a')],
            claim: urlKey(url('canonical-of-a')),
            count: (stats) => (stats.itemsStored += 1),
        });
        await first.httpQueue.fetchNextRequest(); // b in flight when the process dies
        await first.storage.close();

        const resumed = await openStores(dir);
        t.after(() => resumed.storage.close());
        assert.deepEqual(resumed.resumed, { pending: 2, handled: 1, locksReleased: 2 });
        assert.equal(resumed.stats.admitted, 3);
        assert.equal(resumed.stats.itemsStored, 1);
        assert.equal(resumed.stats.sessions, 1);
        assert.deepEqual(
            await resumed.seenSet.add(['a', 'b', 'c', 'canonical-of-a', 'new'].map((p) => urlKey(url(p)))),
            [false, false, false, false, true],
        );
        const left: string[] = [];
        for (let r = await resumed.httpQueue.fetchNextRequest(); r; r = await resumed.httpQueue.fetchNextRequest())
            left.push(r.url);
        assert.deepEqual(left, ['b', 'c'].map(url));
        assert.equal((await readDataset(dir, SITE)).length, 1);
    });

    it('starts fresh when the last run finished, or when asked to', async (t) => {
        const dir = await storageDir(t);
        const first = await openStores(dir);
        await first.httpQueue.addRequest({ url: url('a') });
        await new Outcomes(first).settle(first.httpQueue, (await first.httpQueue.fetchNextRequest())!, {
            items: [item('a')],
        });
        await first.storage.close();

        const afterFinished = await openStores(dir);
        assert.equal(afterFinished.resumed, undefined);
        assert.equal((await afterFinished.httpQueue.getInfo())?.totalRequestCount, 0);
        await afterFinished.httpQueue.addRequest({ url: url('b') });
        await afterFinished.storage.close();

        const forced = await openStores(dir, { fresh: true });
        t.after(() => forced.storage.close());
        assert.equal(forced.resumed, undefined);
        assert.equal((await forced.httpQueue.getInfo())?.totalRequestCount, 0);
        assert.equal(forced.runState.loadStats(), undefined);
        assert.deepEqual(await readDataset(dir, SITE), []);
    });
});
