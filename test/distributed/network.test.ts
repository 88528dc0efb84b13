/**
 * Faults across a real network: Redis, PostgreSQL and three workers each on a host of its own
 * (network namespaces on a bridge, test/helpers/netWorld.ts), the fixture shop on the bridge's
 * address. What crosses the network is cut, slowed and lost, and the servers restart, while the
 * fleet crawls; after each crawl every product is stored exactly once, and no request is in two
 * stores. Needs root (CI has it); says why when it cannot run.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { type Shop, startShop } from '../../src/demo/shop.js';
import { openPostgres, type PgDatabase } from '../../src/store/postgres/database.js';
import { iterateItems, type PgStore } from '../../src/store/postgres/reader.js';
import type { StoredItem } from '../../src/store/records.js';
import type { DeadLetterEntry } from '../../src/vocabulary/failure.js';
import type { CliResult, RunningCli } from '../helpers/cli.js';
import { chromiumPath } from '../helpers/fleet.js';
import { type NetWorld, netemProblem, netWorldProblem, openNetWorld } from '../helpers/netWorld.js';

/** Short enough for a partition to outlast a worker's job locks; the finish grace likewise. */
const LOCK_SECS = 10;
const skip = netWorldProblem ?? (chromiumPath ? false : 'no Chromium found');

interface NetFleet {
    world: NetWorld;
    workers: RunningCli[];
    shop: Shop;
    db: PgDatabase;
    results: Promise<CliResult[]>;
    close(): Promise<void>;
}

/**
 * A network world, a shop of `products` on its bridge, and three workers crawling it. What was
 * opened is closed again when a later step fails, so a failed start leaves no server or handle behind.
 */
async function startNetFleet(products: number): Promise<NetFleet> {
    const opened: Array<() => Promise<unknown>> = [];
    const close = async () => {
        for (const closeOne of opened.reverse()) await closeOne();
    };
    try {
        const world = await openNetWorld(3);
        opened.push(() => world.close());
        const shop = await startShop({
            host: world.gateway,
            seed: 23,
            products,
            categories: 5,
            scriptOnlyRate: 0,
            transientFailureRate: 0,
            notFoundLinks: 0,
            // Slow enough that the crawl is still going when the faults come.
            latencyMs: 300,
        });
        opened.push(() => shop.close());
        const dir = await mkdtemp(join(tmpdir(), 'dragnet-net-fleet-'));
        opened.push(() => rm(dir, { recursive: true, force: true }));
        const db = await openPostgres(world.postgres.url);
        opened.push(() => db.close());
        const workers = world.workers.map((_, index) =>
            world.startWorker(
                index,
                ['--start-url', `${shop.url}/`, '--max-concurrency', '6', '--storage-dir', join(dir, `w${index}`)],
                {
                    REDIS_URL: world.redis.url,
                    DATABASE_URL: world.postgres.url,
                    DRAGNET_JOB_LOCK_SECS: `${LOCK_SECS}`,
                    DRAGNET_FINISH_GRACE_SECS: '2',
                    CHROMIUM_PATH: chromiumPath ?? '',
                },
            ),
        );
        opened.push(async () => {
            for (const worker of workers) worker.child.kill('SIGKILL');
            await Promise.all(workers.map((worker) => worker.result.catch(() => undefined)));
        });
        return { world, workers, shop, db, results: Promise.all(workers.map((worker) => worker.result)), close };
    } catch (error) {
        await close();
        throw error;
    }
}

async function stored<T>(db: PgDatabase, store: PgStore): Promise<T[]> {
    const rows: T[] = [];
    for await (const row of iterateItems(db, 'demo-shop', store)) rows.push(row as T);
    return rows;
}

/** Resolves once the fleet has stored `count` items. */
async function itemsReach(db: PgDatabase, count: number): Promise<void> {
    for (;;) {
        const { rows } = await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${db.table('items')}`);
        if (Number(rows[0]?.n) >= count) return;
        await sleep(200);
    }
}

/**
 * Resolves once one of `workers` has written `pattern` to stderr; fails after `timeoutMs`. Waits for
 * what the fleet does rather than a fixed time: when BullMQ's stalled-job check runs depends on
 * each worker's timer and on which worker set the fleet-wide check key last.
 */
function untilStderr(workers: RunningCli[], pattern: RegExp, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
        const seen = workers.map(() => '');
        const listeners = workers.map((worker, index) => {
            const listener = (chunk: string) => {
                seen[index] += chunk;
                if (pattern.test(seen[index]!)) done(resolve);
            };
            worker.child.stderr!.on('data', listener);
            return listener;
        });
        const timer = setTimeout(
            () => done(() => reject(new Error(`no ${pattern} from the workers in ${timeoutMs} ms`))),
            timeoutMs,
        );
        const done = (settle: () => void) => {
            clearTimeout(timer);
            for (const [index, worker] of workers.entries()) worker.child.stderr!.off('data', listeners[index]!);
            settle();
        };
    });
}

/** Every product once in items, nothing in quarantine or dead-letter, no request in two stores. */
async function assertEveryProductOnce(fleet: NetFleet): Promise<void> {
    const items = await stored<StoredItem>(fleet.db, 'items');
    const urls = items.map((item) => item._url);
    assert.equal(new Set(urls).size, urls.length, 'no product stored twice');
    const { shop } = fleet;
    assert.deepEqual([...urls].sort(), shop.products.map((product) => `${shop.url}${product.path}`).sort());
    const deadLetters = await stored<DeadLetterEntry>(fleet.db, 'deadLetter');
    assert.deepEqual(
        deadLetters.map((entry) => `${entry.reason} ${entry.url}`),
        [],
    );
    assert.deepEqual(await stored(fleet.db, 'quarantine'), []);
}

function assertExitedCleanly(results: CliResult[]): void {
    for (const [index, result] of results.entries())
        assert.equal(
            result.code,
            0,
            `worker ${index} exited ${result.code ?? result.signal}: ${result.stderr.slice(-3000)}`,
        );
}

describe('a fleet across a network that fails', { skip }, () => {
    describe('with one worker cut off from Redis and PostgreSQL for longer than its locks, then back', () => {
        let fleet: NetFleet;
        let results: CliResult[];

        before(async () => {
            fleet = await startNetFleet(600);
            const cutOff = fleet.world.workers[0]!;
            await itemsReach(fleet.db, 60);
            fleet.world.cut(cutOff);
            // Healed once another worker has taken a job back: the cut has outlasted the lock.
            await untilStderr(fleet.workers.slice(1), /took back job/, LOCK_SECS * 4 * 1000);
            fleet.world.heal(cutOff);
            results = await fleet.results;
        });
        after(() => fleet?.close());

        it('stores every product exactly once, nothing in two stores, and every worker ends cleanly', async () => {
            assertExitedCleanly(results);
            await assertEveryProductOnce(fleet);
        });

        it("has the others take the cut-off worker's jobs once its locks expire", () => {
            const others = results
                .slice(1)
                .map((result) => result.stderr)
                .join('\n');
            assert.match(others, /took back job/);
        });
    });

    describe('with a worker on a slow link that loses packets', { skip: netemProblem }, () => {
        let fleet: NetFleet;
        let results: CliResult[];

        before(async () => {
            fleet = await startNetFleet(600);
            fleet.world.netem(fleet.world.workers[1]!, ['delay', '40ms', '10ms', 'loss', '5%']);
            results = await fleet.results;
        });
        after(() => fleet?.close());

        it('stores every product exactly once, nothing in two stores, and every worker ends cleanly', async () => {
            assertExitedCleanly(results);
            await assertEveryProductOnce(fleet);
        });
    });

    describe('with Redis (AOF on) and then PostgreSQL restarted mid-run', () => {
        let fleet: NetFleet;
        let results: CliResult[];

        before(async () => {
            fleet = await startNetFleet(600);
            await itemsReach(fleet.db, 60);
            await fleet.world.redis.restart();
            await itemsReach(fleet.db, 250);
            await fleet.world.postgres.restart();
            results = await fleet.results;
        });
        after(() => fleet?.close());

        it('stores every product exactly once, nothing in two stores, and every worker ends cleanly', async () => {
            assertExitedCleanly(results);
            await assertEveryProductOnce(fleet);
        });
    });
});
