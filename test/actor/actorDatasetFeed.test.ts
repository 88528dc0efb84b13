/**
 * The feed of a site's items into an actor's default dataset (src/runtime/actorDatasetFeed.ts), on a
 * real storage dir and an in-memory stand-in for the actor's storages: items pushed in batches as
 * they are stored, how far it got saved after each batch and gone on from, a dataset left by an
 * earlier run never pushed before the crawl has emptied it, and the whole dataset at the finish.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { Dataset } from '@crawlee/core';
import { openStorage } from '../../src/store/datasets.js';
import { createLogger } from '../../src/monitor/logger.js';
import { ActorDatasetFeed, type ActorStorages } from '../../src/runtime/actorDatasetFeed.js';

const INTERVAL_SECS = 0.02;

/** An actor's default dataset and key-value store, in memory; `pushes` are the batch sizes, in order. */
function actorStorages(
    records: Record<string, unknown> = {},
): ActorStorages & { items: object[]; pushes: number[]; records: Record<string, unknown> } {
    const items: object[] = [];
    const pushes: number[] = [];
    return {
        items,
        pushes,
        records,
        pushData: async (batch) => {
            items.push(...batch);
            pushes.push(batch.length);
        },
        getValue: async <T>(key: string) => (records[key] as T | undefined) ?? null,
        setValue: async (key, value) => {
            records[key] = structuredClone(value);
        },
    };
}

const itemsNumbered = (from: number, count: number) =>
    Array.from({ length: count }, (_, index) => ({ n: from + index, _url: `http://127.0.0.1/p/${from + index}` }));

/** Waits until `done()`, failing after 5 s. */
async function until(done: () => boolean, what: string): Promise<void> {
    const deadline = Date.now() + 5000;
    while (!done()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await sleep(5);
    }
}

describe("the feed of a site's items into the actor's dataset", () => {
    let storageDir: string;
    const log = createLogger({ level: 'silent' });
    const stores = () => openStorage(storageDir);

    before(async () => {
        storageDir = await mkdtemp(join(tmpdir(), 'dragnet-feed-'));
    });
    after(() => rm(storageDir, { recursive: true, force: true }));

    it('pushes items as they are stored, in batches, saving how far it got after each', async () => {
        const { config, storage } = stores();
        const actor = actorStorages();
        try {
            const feed = await ActorDatasetFeed.start({
                storageDir,
                dataset: 'site-a',
                actor,
                log,
                intervalSecs: INTERVAL_SECS,
                batchSize: 4,
            });
            const dataset = await Dataset.open('site-a', { config });
            await dataset.pushData(itemsNumbered(1, 10));
            await until(() => actor.items.length === 10, 'the first items');
            assert.deepEqual(actor.pushes, [4, 4, 2]);
            await dataset.pushData(itemsNumbered(11, 3));
            await until(() => actor.items.length === 13, 'the next items');
            await feed.finish();
            assert.deepEqual(actor.items, itemsNumbered(1, 13), 'every item once, in order, with its fields');
            const info = await dataset.getInfo();
            assert.deepEqual(actor.records.DRAGNET_DATASET_FEED, { dataset: info!.id, pushed: 13 });
        } finally {
            await storage.close();
        }
    });

    it('goes on from the saved progress for the same dataset, and starts over for another', async () => {
        const { config, storage } = stores();
        try {
            const dataset = await Dataset.open('site-b', { config });
            await dataset.pushData(itemsNumbered(1, 5));
            const id = (await dataset.getInfo())!.id;
            const sameRun = actorStorages({ DRAGNET_DATASET_FEED: { dataset: id, pushed: 3 } });
            const feed = await ActorDatasetFeed.start({
                storageDir,
                dataset: 'site-b',
                actor: sameRun,
                log,
                intervalSecs: INTERVAL_SECS,
            });
            await feed.finish();
            assert.deepEqual(sameRun.items, itemsNumbered(4, 2), 'only what was not pushed before');

            const otherDataset = actorStorages({ DRAGNET_DATASET_FEED: { dataset: 'an-emptied-one', pushed: 40 } });
            const again = await ActorDatasetFeed.start({
                storageDir,
                dataset: 'site-b',
                actor: otherDataset,
                log,
                intervalSecs: INTERVAL_SECS,
            });
            await again.finish();
            assert.deepEqual(otherDataset.items, itemsNumbered(1, 5));
        } finally {
            await storage.close();
        }
    });

    it('never pushes a dataset left from before it started until it is written, or the crawl returned', async () => {
        const { config, storage } = stores();
        try {
            const earlier = await Dataset.open('site-c', { config });
            await earlier.pushData(itemsNumbered(1, 6));
            await sleep(5);
            const actor = actorStorages();
            const feed = await ActorDatasetFeed.start({
                storageDir,
                dataset: 'site-c',
                actor,
                log,
                intervalSecs: INTERVAL_SECS,
            });
            await sleep(INTERVAL_SECS * 1000 * 5);
            assert.deepEqual(actor.items, [], "an earlier run's dataset is not pushed while it may be emptied");
            // What a fresh crawl does when it opens its stores: the earlier dataset emptied, a new one written.
            await earlier.drop();
            const fresh = await Dataset.open('site-c', { config });
            await fresh.pushData(itemsNumbered(100, 2));
            await until(() => actor.items.length === 2, 'the new dataset');
            await feed.abandon();
            assert.deepEqual(actor.items, itemsNumbered(100, 2));

            await sleep(5);
            const resumedUnwritten = actorStorages();
            const atTheEnd = await ActorDatasetFeed.start({
                storageDir,
                dataset: 'site-c',
                actor: resumedUnwritten,
                log,
                intervalSecs: INTERVAL_SECS,
            });
            await sleep(INTERVAL_SECS * 1000 * 3);
            assert.deepEqual(resumedUnwritten.items, []);
            await atTheEnd.finish();
            assert.deepEqual(
                resumedUnwritten.items,
                itemsNumbered(100, 2),
                "once the crawl returned, the dataset is the run's",
            );
        } finally {
            await storage.close();
        }
    });
});
