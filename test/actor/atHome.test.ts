/**
 * The CLI as an actor on the platform's own path (APIFY_IS_AT_HOME): Apify's SDK with the
 * variables the platform sets, talking to stand-ins for the platform's API and event socket on
 * 127.0.0.1 (test/actor/platform.ts). The input comes from the API's key-value store; `aborting`
 * mid-run stops the crawl as SIGTERM does, with the items stored so far pushed to the API's dataset;
 * the same actor run going on (what a migration does: the same storages, the same storage dir)
 * pushes only the rest, so the actor's dataset holds every product once. The SDK asks the API for
 * nothing but what the stand-in knows. A bad input from the API is a one-line error, and the SDK,
 * started by then, is let go of: the process ends.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { startShop } from '../../src/demo/shop.js';
import type { StoredItem } from '../../src/store/records.js';
import { assertOneLineError, startScript } from '../helpers/cli.js';
import { readDataset } from '../helpers/stores.js';
import { atHomeEnv, platformApi, platformEvents } from './platform.js';

describe('the CLI as an actor at home, against stand-ins for the platform on 127.0.0.1', () => {
    it(`takes its input from the API, pushes the items there, stops \
on aborting and goes on without pushing an item twice`, async (t) => {
        const shop = await startShop({
            seed: 43,
            products: 500,
            scriptOnlyRate: 0,
            transientFailureRate: 0,
            notFoundLinks: 0,
            latencyMs: 50,
        });
        const workDir = await mkdtemp(join(tmpdir(), 'dragnet-at-home-'));
        t.after(async () => {
            await shop.close();
            await rm(workDir, { recursive: true, force: true });
        });
        const storageDir = join(workDir, 'dragnet');
        const api = await platformApi(t, {
            startUrls: [{ url: `${shop.url}/` }],
            allowPrivateNetwork: true,
            maxConcurrency: 8,
            storageDir,
        });
        const events = await platformEvents(t);
        const env = atHomeEnv(api, events);

        const first = startScript('src/main.ts', [], env, workDir);
        const deadline = Date.now() + 60_000;
        while (api.items.length === 0) {
            if (Date.now() > deadline) throw new Error('nothing was pushed to the dataset');
            await sleep(20);
        }
        events.send('aborting');
        const stopped = await first.result;
        assert.equal(stopped.code, 143, stopped.stderr);
        assert.match(stopped.stderr, /the actor's aborting event: stopping/);
        const storedBeforeTheStop = await readDataset<StoredItem>(storageDir, 'demo-shop');
        assert.ok(storedBeforeTheStop.length < shop.products.length, 'stopped before the crawl was done');
        assert.deepEqual(
            api.items,
            storedBeforeTheStop,
            "what was stored is in the actor's dataset, fields and order alike",
        );

        const goingOn = await startScript('src/main.ts', [], env, workDir).result;
        assert.equal(goingOn.code, 0, goingOn.stderr);
        const items = await readDataset<StoredItem>(storageDir, 'demo-shop');
        assert.equal(items.length, shop.products.length);
        assert.deepEqual(
            api.items,
            items,
            "every product once in the actor's dataset: the second run went on from what the first pushed",
        );
        assert.deepEqual(api.unexpected, []);
        assert.equal(events.connections(), 2);
    });

    it('refuses a bad input from the API in one line naming Actor.getInput(), exit 2, and ends', async (t) => {
        const workDir = await mkdtemp(join(tmpdir(), 'dragnet-at-home-'));
        t.after(() => rm(workDir, { recursive: true, force: true }));
        const api = await platformApi(t, { maxConcurency: 4 });
        const events = await platformEvents(t);
        assertOneLineError(
            await startScript('src/main.ts', [], atHomeEnv(api, events), workDir).result,
            2,
            /^dragnet: Actor\.getInput\(\): unknown key "maxConcurency"$/,
        );
        assert.equal(events.connections(), 1, 'the SDK had started');
    });
});
