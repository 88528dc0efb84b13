/**
 * A fleet for a test of the distributed mode: the fixture shop and N worker processes started as a
 * user starts them (`npm start` with REDIS_URL and DATABASE_URL), in a world of the test's own
 * (fleetWorld.ts); and the checks the tests share, held against the shop's ground truth.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startShop, type Shop, type ShopOptions } from '../../src/demo/shop.js';
import { findChromium } from '../../src/fetch/browser/chromium.js';
import type { StoredItem } from '../../src/store/records.js';
import type { DeadLetterEntry } from '../../src/vocabulary/failure.js';
import type { RunSummary } from '../../src/vocabulary/report.js';
import type { CliResult, RunningCli } from './cli.js';
import { type FleetWorld, openFleetWorld } from './fleetWorld.js';

export const chromiumPath = findChromium();
export const SHOP: ShopOptions = {
    seed: 5,
    products: 1000,
    categories: 5,
    productsPerPage: 20,
    scriptOnlyRate: 0.05,
    transientFailureRate: 0.03,
    notFoundLinks: 0,
};
/**
 * Short enough for a test to see a dead worker's jobs come back; the finish grace likewise. Not
 * shorter: a lock is renewed every half of it, and a worker's thread pauses for seconds on a busy
 * 2-core machine when its browser stage starts (loading Playwright, launching Chromium); with 3 s
 * a live worker's jobs were taken back and fetched twice in about 1 run of 4.
 */
const WORKER_ENV = { DRAGNET_JOB_LOCK_SECS: '10', DRAGNET_FINISH_GRACE_SECS: '2', CHROMIUM_PATH: chromiumPath ?? '' };

export interface Fleet {
    world: FleetWorld;
    shop: Shop;
    workers: RunningCli[];
    dir: string;
    /** The archive dir every worker writes its WARC files into, as a shared volume would be. */
    archiveDir: string;
    results(): Promise<CliResult[]>;
    summaries(): Promise<RunSummary[]>;
    close(): Promise<void>;
}

export interface FleetOptions {
    /** Added to a worker's command line. */
    args?: (index: number) => string[];
    /** The database URL the workers get. Default: the world's. */
    databaseUrl?: (world: FleetWorld) => string;
    /** Added to every worker's environment. */
    env?: NodeJS.ProcessEnv;
}

/** A shop and `count` workers crawling it. */
export async function startFleet(count: number, shopOptions: ShopOptions, options: FleetOptions = {}): Promise<Fleet> {
    const world = await openFleetWorld();
    const shop = await startShop(shopOptions);
    const dir = await mkdtemp(join(tmpdir(), 'dragnet-fleet-'));
    const env = { ...WORKER_ENV, ...options.env, DATABASE_URL: options.databaseUrl?.(world) ?? world.databaseUrl };
    const workers = Array.from({ length: count }, (_, index) =>
        world.worker(
            [
                '--start-url',
                `${shop.url}/`,
                '--max-concurrency',
                '6',
                '--storage-dir',
                join(dir, `w${index}`),
                '--archive-dir',
                join(dir, 'archive'),
                '--summary-json',
                join(dir, `w${index}.json`),
                ...(options.args?.(index) ?? []),
            ],
            env,
        ),
    );
    return {
        world,
        shop,
        workers,
        dir,
        archiveDir: join(dir, 'archive'),
        results: () => Promise.all(workers.map((worker) => worker.result)),
        summaries: () =>
            Promise.all(
                workers.map(
                    async (_, index) => JSON.parse(await readFile(join(dir, `w${index}.json`), 'utf8')) as RunSummary,
                ),
            ),
        close: async () => {
            for (const worker of workers) worker.child.kill('SIGKILL');
            await Promise.all(workers.map((worker) => worker.result.catch(() => undefined)));
            await shop.close();
            await world.close();
            await rm(dir, { recursive: true, force: true });
        },
    };
}

/** Resolves once the fleet has stored at least `count` items. */
export async function itemsReach(world: FleetWorld, count: number): Promise<void> {
    for (;;) {
        const { rows } = await world.db.query<{ n: string }>(`SELECT count(*) AS n FROM ${world.db.table('items')}`);
        if (Number(rows[0]!.n) >= count) return;
        await new Promise((resolve) => setTimeout(resolve, 200));
    }
}

export function assertExited(results: CliResult[], code = 0): void {
    for (const [index, result] of results.entries())
        assert.equal(
            result.code,
            code,
            `worker ${index} exited ${result.code ?? result.signal}: ${result.stderr.slice(-2000)}`,
        );
}

/** Every product stored exactly once, with the shop's values, and nothing in dead-letter. */
export async function assertEveryProductOnce(fleet: Fleet): Promise<void> {
    const { world, shop } = fleet;
    const items = await world.stored<StoredItem>('demo-shop');
    const urls = items.map((item) => item._url);
    assert.equal(new Set(urls).size, urls.length, 'no product stored twice');
    assert.deepEqual([...urls].sort(), shop.products.map((product) => `${shop.url}${product.path}`).sort());
    const byUrl = new Map(items.map((item) => [item._url, item]));
    for (const product of shop.products) assert.equal(byUrl.get(`${shop.url}${product.path}`)!.title, product.title);
    assert.deepEqual(await world.stored<DeadLetterEntry>('demo-shop', 'deadLetter'), []);
}
