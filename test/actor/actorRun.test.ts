/**
 * The CLI as an actor (src/runtime/actor.ts), in a child process, with Apify's SDK in its local
 * mode (DRAGNET_ACTOR=1): its storages in its local layout under ./storage, which is also dragnet's
 * storage dir, as both are by default; the platform's events from a real WebSocket server on
 * 127.0.0.1 (ACTOR_EVENTS_WEBSOCKET_URL), read by the SDK's platform event manager. The SDK's API
 * is pointed at a closed loopback port: nothing may reach the Apify platform.
 *
 * A run of the fixture shop ends with the SDK's default dataset holding dragnet's items, fields
 * and order alike; `aborting` mid-run stops it as SIGTERM does (exit 143, state saved, the items
 * stored so far in the actor's dataset) and the next run resumes without fetching a product page
 * again; `migrating` stops it the same way.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it, type TestContext } from 'node:test';
import { type Shop, type ShopOptions, startShop } from '../../src/demo/shop.js';
import { inputFileIn } from '../../src/options/runInput.js';
import type { StoredItem } from '../../src/store/records.js';
import type { RunSummary } from '../../src/vocabulary/report.js';
import { ROOT, type CliResult, startScript } from '../helpers/cli.js';
import { readDataset } from '../helpers/stores.js';
import { platformEvents } from './platform.js';

/** Enough, at its latency, for the crawl to outlast the feed's first pushes (every 2 s). */
const PRODUCTS = 600;

/**
 * A shop and a work dir holding the actor's input in ./storage, and the
 * project's .actor/ (whose input schema's defaults the SDK adds locally).
 */
async function setUp(
    t: TestContext,
    shopOptions: ShopOptions,
): Promise<{ shop: Shop; workDir: string; storageDir: string }> {
    const shop = await startShop({
        seed: 41,
        scriptOnlyRate: 0,
        transientFailureRate: 0,
        notFoundLinks: 0,
        latencyMs: 15,
        ...shopOptions,
    });
    const workDir = await mkdtemp(join(tmpdir(), 'dragnet-actor-'));
    t.after(async () => {
        await shop.close();
        await rm(workDir, { recursive: true, force: true });
    });
    const storageDir = join(workDir, 'storage');
    await mkdir(join(storageDir, 'key_value_stores', 'default'), { recursive: true });
    const input = {
        startUrls: [{ url: `${shop.url}/` }],
        allowPrivateNetwork: true,
        maxConcurrency: 8,
        retryBaseDelaySecs: 0.1,
        summaryJson: 'storage/summary.json',
    };
    await writeFile(inputFileIn(storageDir), JSON.stringify(input));
    await cp(join(ROOT, '.actor'), join(workDir, '.actor'), { recursive: true });
    return { shop, workDir, storageDir };
}

/** The CLI as an actor in `workDir`, with no flag: everything from the actor's input. */
function startActor(workDir: string, eventsUrl: string) {
    return startScript(
        'src/main.ts',
        [],
        { DRAGNET_ACTOR: '1', ACTOR_EVENTS_WEBSOCKET_URL: eventsUrl, APIFY_API_BASE_URL: 'http://127.0.0.1:9' },
        workDir,
    );
}

/**
 * The files of the SDK's default dataset as its local layout
 * keeps it: one JSON file per item, numbered in push order.
 */
async function actorDatasetFiles(storageDir: string): Promise<string[]> {
    const dir = join(storageDir, 'datasets', 'default');
    const names = existsSync(dir) ? await readdir(dir) : [];
    return names
        .filter((name) => name.endsWith('.json'))
        .sort()
        .map((name) => join(dir, name));
}

async function actorDataset(storageDir: string): Promise<StoredItem[]> {
    return Promise.all(
        (await actorDatasetFiles(storageDir)).map(
            async (file) => JSON.parse(await readFile(file, 'utf8')) as StoredItem,
        ),
    );
}

async function assertActorDatasetIsDragnets(storageDir: string): Promise<StoredItem[]> {
    const items = await readDataset<StoredItem>(storageDir, 'demo-shop');
    const pushed = await actorDataset(storageDir);
    assert.equal(pushed.length, items.length, "as many items in the actor's dataset as in dragnet's");
    assert.deepEqual(
        pushed.map((item) => item._url),
        items.map((item) => item._url),
        'the same URLs, in order',
    );
    assert.deepEqual(pushed, items, 'the same fields');
    return items;
}

function productPagesServed(shop: Shop): number {
    const { byPath } = shop.stats();
    return shop.products.reduce((sum, product) => sum + (byPath[product.path]?.['200'] ?? 0), 0);
}

async function summaryOf(storageDir: string): Promise<RunSummary> {
    return JSON.parse(await readFile(join(storageDir, 'summary.json'), 'utf8')) as RunSummary;
}

function assertExited(run: CliResult, code: number): void {
    assert.equal(run.code, code, `exit code; stderr:\n${run.stderr}`);
    assert.doesNotMatch(run.stdout, /System info/, "stdout carries only the summary, not the SDK's start-up lines");
}

describe('the CLI as an actor, with the SDK in its local layout and the platform events on a local WebSocket', () => {
    it("ends with dragnet's items in the SDK's default dataset, fields and order alike", async (t) => {
        const { shop, workDir, storageDir } = await setUp(t, { products: 60 });
        const events = await platformEvents(t);
        const run = await startActor(workDir, events.url).result;
        assertExited(run, 0);
        assert.equal(events.connections(), 1, "the SDK listened to the platform's events");
        const items = await assertActorDatasetIsDragnets(storageDir);
        assert.equal(items.length, shop.products.length);
        const summary = await summaryOf(storageDir);
        assert.equal(
            summary.items.stored,
            shop.products.length,
            'the options came from the actor input (summaryJson, startUrls)',
        );
    });

    it(`stops gracefully on aborting, as on SIGTERM, and the next \
run resumes without fetching a product page again`, async (t) => {
        const { shop, workDir, storageDir } = await setUp(t, { products: PRODUCTS, latencyMs: 50 });
        const events = await platformEvents(t);
        const first = startActor(workDir, events.url);
        // Items in the actor's dataset while the crawl goes on: pushed as they are stored, not at the end.
        const deadline = Date.now() + 60_000;
        while ((await actorDatasetFiles(storageDir)).length === 0) {
            if (Date.now() > deadline) throw new Error("nothing was pushed to the actor's dataset");
            await sleep(20);
        }
        events.send('aborting');
        const stopped = await first.result;
        assertExited(stopped, 143);
        assert.match(stopped.stderr, /the actor's aborting event: stopping/);
        assert.match(stopped.stdout, /stopped by SIGTERM/);
        assert.ok(productPagesServed(shop) < PRODUCTS, 'stopped before the crawl was done');
        assert.equal((await summaryOf(storageDir)).stopped, 'SIGTERM');
        const storedBeforeTheStop = await assertActorDatasetIsDragnets(storageDir);
        assert.ok(storedBeforeTheStop.length > 0);

        const second = await startActor(workDir, events.url).result;
        assertExited(second, 0);
        assert.match(second.stdout, /session 2/);
        const items = await assertActorDatasetIsDragnets(storageDir);
        assert.deepEqual(
            items.map((item) => item._url).sort(),
            shop.products.map((product) => `${shop.url}${product.path}`).sort(),
            'every product once',
        );
        const { byPath } = shop.stats();
        for (const product of shop.products)
            assert.equal(byPath[product.path]?.['200'], 1, `${product.path} fetched once`);
    });

    it('stops gracefully on migrating too, and the next run does the rest', async (t) => {
        const { shop, workDir, storageDir } = await setUp(t, { products: 100 });
        const events = await platformEvents(t);
        const first = startActor(workDir, events.url);
        // Sent once the actor run has started (its feed opened dragnet's database) and before or as the crawl starts.
        while (!existsSync(join(storageDir, 'dragnet.sqlite'))) await sleep(1);
        events.send('migrating');
        const stopped = await first.result;
        assertExited(stopped, 143);
        assert.match(stopped.stderr, /the actor's migrating event: stopping/);
        assert.ok(productPagesServed(shop) < shop.products.length, 'stopped before the crawl was done');

        assertExited(await startActor(workDir, events.url).result, 0);
        assert.equal((await assertActorDatasetIsDragnets(storageDir)).length, shop.products.length);
        const { byPath } = shop.stats();
        for (const product of shop.products)
            assert.equal(byPath[product.path]?.['200'], 1, `${product.path} fetched once`);
    });
});
