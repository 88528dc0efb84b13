/**
 * The page history (store/pageHistory.ts) on both backends, the storage dir's SQLite and a real
 * PostgreSQL schema of the test's own, held to the same behaviour: what an outcome's page record
 * writes, which pages are due and in what order, what a recrawl carries and reports removed, what a
 * page done twice in one run is compared with, and where a new run of the series starts.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { Dataset } from '@crawlee/core';
import { REVISIT_DEFAULTS } from '../../src/frontier/revisitPolicy.js';
import { openStorage } from '../../src/store/datasets.js';
import type { KnownPage, PageHistory, PageRecord, Schedule, SeriesRun } from '../../src/store/pageHistory.js';
import { PgPageHistory, writePageRecords } from '../../src/store/postgres/pageHistory.js';
import type { StoredItem } from '../../src/store/records.js';
import { SqliteDatasetClient } from '../../src/store/sqlite/datasetClient.js';
import { SqlitePageHistory } from '../../src/store/sqlite/pageHistory.js';
import { startSeries } from '../../src/wiring/recrawl.js';
import { storedRows, testDatabase } from '../helpers/pgSchema.js';
import { tempDir } from '../helpers/tempDir.js';

const SITE = 'shop';
const BOUNDS = { ...REVISIT_DEFAULTS };
const HOUR = 3_600_000;
const NOW = Date.parse('2026-12-07T12:00:00Z');

/** One backend, as a recrawl sees it: the history, the commit that writes page records, and the run's items. */
interface Backend {
    history: PageHistory;
    startRun(series: SeriesRun): Promise<void>;
    commit(run: number, records: { requestKey: string; record: PageRecord }[]): Promise<void>;
    items(): Promise<StoredItem[]>;
}

async function sqliteBackend(t: TestContext): Promise<Backend> {
    const { config, storage } = openStorage(await tempDir(t, 'page-history'));
    t.after(() => storage.close());
    const dataset = await Dataset.open<StoredItem>(SITE, { config });
    const history = new SqlitePageHistory(storage.db, SITE, new SqliteDatasetClient(storage.db, SITE));
    return {
        history,
        startRun: async (series) => history.startRun(series),
        commit: async (run, records) =>
            storage.db.transaction(() => {
                for (const { record } of records) history.record(record, run);
            })(),
        items: async () => (await dataset.getData({ limit: 10_000 })).items,
    };
}

async function postgresBackend(t: TestContext): Promise<Backend> {
    const { db } = await testDatabase(t);
    const history = new PgPageHistory(db, SITE);
    return {
        history,
        startRun: (series) => history.startRun(series),
        commit: (run, records) => db.transaction((client) => writePageRecords(client, db, SITE, run, records)),
        items: () => storedRows<StoredItem>(db, SITE),
    };
}

const item = (url: string, price: number): StoredItem => ({
    title: url,
    price,
    _url: url,
    _route: 'product',
    _rawKey: 'k',
    _renderer: 'http',
    _fetchedAt: new Date(NOW).toISOString(),
});

function page(key: string, over: Partial<KnownPage> = {}): KnownPage {
    return {
        key,
        url: `https://shop.test/${key}`,
        label: 'product',
        navigation: false,
        items: 1,
        checks: 0,
        changes: 0,
        firstCheckedAt: NOW - 10 * HOUR,
        lastCheckedAt: NOW - 10 * HOUR,
        ...over,
    };
}

const fetched = (known: KnownPage, price: number, schedule: Schedule = { nextDueAt: known.lastCheckedAt }) => ({
    requestKey: known.url,
    record: { kind: 'fetched', page: known, schedule, items: [item(known.url, price)] } as PageRecord,
});

for (const [name, open] of [
    ['SQLite', sqliteBackend],
    ['PostgreSQL', postgresBackend],
] as const) {
    describe(`the page history in ${name}`, () => {
        it('gives the due pages listings first, then those with no estimate, then the likeliest changed', async (t) => {
            const { history, commit } = await open(t);
            await commit(1, [
                fetched(page('quiet'), 1, { nextDueAt: NOW - HOUR, rate: 1e-9 }),
                fetched(page('busy'), 1, { nextDueAt: NOW - HOUR, rate: 1e-6 }),
                fetched(page('new'), 1),
                fetched(page('later'), 1, { nextDueAt: NOW + HOUR, rate: 1e-6 }),
                fetched(page('listing', { navigation: true }), 1, { nextDueAt: NOW + 5 * HOUR }),
            ]);
            assert.deepEqual(await history.dueKeys(NOW, BOUNDS), ['listing', 'new', 'busy', 'quiet']);
            assert.deepEqual(await history.notDueKeys(NOW, BOUNDS), ['later']);
            // This run's bounds hold whatever the pages' due times were set under.
            assert.deepEqual((await history.dueKeys(NOW, { revisitMin: 0, revisitMax: 5 * HOUR })).sort(), [
                'busy',
                'later',
                'listing',
                'new',
                'quiet',
            ]);
            assert.deepEqual(await history.dueKeys(NOW, { revisitMin: 20 * HOUR, revisitMax: BOUNDS.revisitMax }), [
                'listing',
            ]);
        });

        it('carries an unchanged page’s items at once, and every unsettled live page at the end, each once', async (t) => {
            const { history, commit, items, startRun } = await open(t);
            const [a, b, c] = ['a', 'b', 'c'].map((key) => page(key));
            await commit(1, [fetched(a!, 10), fetched(b!, 20), fetched(c!, 30)]);
            await startRun({ run: 2, mode: 'recrawl' });
            await commit(2, [
                { requestKey: a!.url, record: { kind: 'unchanged', page: a!, schedule: { nextDueAt: NOW } } },
                { requestKey: b!.url, record: { kind: 'withoutItems', key: 'b' } },
            ]);
            assert.deepEqual(await history.carryUnsettled(2), { product: 1 });
            assert.deepEqual(await history.carryUnsettled(2), {});
            const carried = (await items()).map((stored) => `${stored._url} ${stored.price} ${stored._change}`);
            assert.deepEqual(carried.sort(), [`${a!.url} 10 unchanged`, `${c!.url} 30 unchanged`]);
            assert.equal(await history.settledAny(2), true);
            assert.equal(await history.settledAny(3), false);
        });

        it('reports a removed page’s items once, in the run that found it gone, and leaves it out after', async (t) => {
            const { history, commit } = await open(t);
            await commit(1, [fetched(page('gone'), 5), fetched(page('moved'), 6), fetched(page('stays'), 7)]);
            await commit(2, [
                { requestKey: 'x', record: { kind: 'removed', key: 'gone', removal: { reason: 'http-404' } } },
                {
                    requestKey: 'y',
                    record: {
                        kind: 'removed',
                        key: 'moved',
                        removal: { reason: 'moved', movedTo: 'https://shop.test/new' },
                    },
                },
            ]);
            const removed = [];
            for await (const entry of history.removed(2)) removed.push(entry);
            assert.deepEqual(
                removed.map((entry) => [entry._url, entry._change, entry._removedBecause, entry._movedTo]),
                [
                    ['https://shop.test/gone', 'removed', 'http-404', undefined],
                    ['https://shop.test/moved', 'removed', 'moved', 'https://shop.test/new'],
                ],
            );
            assert.deepEqual((await history.removedKeys()).sort(), ['gone', 'moved']);
            assert.equal(await history.count(), 1);
            assert.deepEqual(await history.dueKeys(NOW, BOUNDS), ['stays']);
        });

        it('compares a page done twice in one run with what it was before the run, not with the first take', async (t) => {
            const { history, commit, startRun } = await open(t);
            const known = page('p');
            await startRun({ run: 1, mode: 'first' });
            await commit(1, [fetched(known, 10)]);
            await startRun({ run: 2, mode: 'recrawl' });
            await commit(2, [fetched(known, 11)]);
            assert.equal((await history.items('p'))?.[0]?.price, 10);
            await commit(2, [fetched(known, 11)]); // the second take
            assert.equal((await history.items('p'))?.[0]?.price, 10);
            await startRun({ run: 3, mode: 'recrawl' });
            assert.equal((await history.items('p'))?.[0]?.price, 11);
        });

        it('keeps the canonical URLs known pages claimed, for the next run to claim again', async (t) => {
            const { history, commit } = await open(t);
            await commit(1, [fetched(page('a', { canonical: 'b' }), 1), fetched(page('c'), 1)]);
            assert.deepEqual(await history.canonicalClaims(), [{ key: 'a', canonical: 'b' }]);
        });

        it('starts a first run, then recrawls; a recrawl that settled nothing is started again as itself', async (t) => {
            const { history, commit } = await open(t);
            assert.deepEqual(await startSeries(history, undefined, {}), {
                series: { run: 1, mode: 'first' },
                lastResults: 'purge',
            });
            await commit(1, [fetched(page('a'), 1), fetched(page('b'), 2)]);
            const first = { run: 1, mode: 'first' } as const;
            assert.deepEqual(await startSeries(history, first, {}), {
                series: { run: 2, mode: 'recrawl' },
                lastResults: 'rotate',
            });
            const failedStart = { run: 2, mode: 'recrawl' } as const;
            assert.deepEqual(await startSeries(history, failedStart, {}), { series: failedStart, lastResults: 'none' });
            assert.deepEqual(await startSeries(history, first, { fresh: true }), {
                series: { run: 1, mode: 'first' },
                lastResults: 'purge',
            });
            // A recrawl cut off before its end had settled one page: the other is carried before run 3 starts.
            await commit(2, [fetched(page('a'), 1)]);
            assert.deepEqual(await startSeries(history, failedStart, {}), {
                series: { run: 3, mode: 'recrawl' },
                lastResults: 'rotate',
            });
            assert.deepEqual(await history.carryUnsettled(2), {});
        });
    });
}
