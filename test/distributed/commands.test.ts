/**
 * The distributed mode from the command line: what a user sees when a part is unreachable or half
 * configured, `npm run status` on a running fleet, and `--fresh` refusing while workers work.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { startShop, type Shop } from '../../src/demo/shop.js';
import { createLogger } from '../../src/monitor/logger.js';
import { PgBacklog } from '../../src/store/postgres/backlog.js';
import type { FleetStatus } from '../../src/wiring/fleetStatus.js';
import { openDistributedStores } from '../../src/wiring/openDistributed.js';
import { type CliResult, ROOT, runCli, type RunningCli } from '../helpers/cli.js';
import { chromiumPath, itemsReach } from '../helpers/fleet.js';
import { type FleetWorld, openFleetWorld, POSTGRES_URL, REDIS_URL } from '../helpers/fleetWorld.js';
import { tempDir } from '../helpers/tempDir.js';

/** `npm run status` in `world`, as JSON. */
function status(world: FleetWorld): Promise<FleetStatus> {
    return new Promise((resolve, reject) => {
        const child = spawn(
            process.execPath,
            ['--import', 'tsx', 'src/commands/status.ts', '--site', 'demo-shop', '--json'],
            { cwd: ROOT, env: { ...process.env, ...world.env } },
        );
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
        child.on('close', (code) =>
            code === 0
                ? resolve(JSON.parse(stdout) as FleetStatus)
                : reject(new Error(`status exited ${code}: ${stderr}`)),
        );
    });
}

describe('the distributed mode misconfigured', () => {
    it('says in one line that Redis is unreachable, exit 2', async () => {
        const result = await runCli([
            '--start-url',
            'http://127.0.0.1:9/',
            '--redis-url',
            'redis://127.0.0.1:1',
            '--database-url',
            POSTGRES_URL,
        ]);
        assert.equal(result.code, 2);
        assert.match(result.stderr, /^dragnet: Redis at redis:\/\/127\.0\.0\.1:1 is unreachable .*REDIS_URL\n$/);
    });

    it('says in one line that PostgreSQL is unreachable, exit 2', async () => {
        const result = await runCli([
            '--start-url',
            'http://127.0.0.1:9/',
            '--redis-url',
            REDIS_URL,
            '--database-url',
            'postgres://127.0.0.1:1/test',
        ]);
        assert.equal(result.code, 2);
        assert.match(result.stderr, /^dragnet: PostgreSQL is unreachable at 127\.0\.0\.1:1 .*DATABASE_URL.*\n$/);
    });

    it('needs both URLs, and start URLs of its own instead of the per-process demo shop', async () => {
        const half = await runCli(['--start-url', 'http://127.0.0.1:9/', '--redis-url', REDIS_URL]);
        assert.equal(half.code, 2);
        assert.match(half.stderr, /needs both --redis-url .* and --database-url/);
        const demo = await runCli([], { REDIS_URL, DATABASE_URL: POSTGRES_URL });
        assert.equal(demo.code, 2);
        assert.match(demo.stderr, /built-in demo starts a shop of its own in each process/);
    });
});

describe('status and --fresh on a running fleet', { skip: chromiumPath ? false : 'no Chromium found' }, () => {
    let world: FleetWorld;
    let shop: Shop;
    let worker: RunningCli;
    let during: FleetStatus;
    let fresh: CliResult;
    let done: CliResult;
    let afterwards: FleetStatus;

    before(async () => {
        world = await openFleetWorld();
        shop = await startShop({
            seed: 9,
            products: 300,
            scriptOnlyRate: 0,
            transientFailureRate: 0,
            notFoundLinks: 2,
            latencyMs: 50,
        });
        const args = ['--start-url', `${shop.url}/`, '--max-concurrency', '4'];
        worker = world.worker(args, { DRAGNET_FINISH_GRACE_SECS: '1', CHROMIUM_PATH: chromiumPath ?? '' });
        await itemsReach(world, 50);
        // The counters come with the worker's heartbeat, every 2 s.
        do during = await status(world);
        while (during.totals.itemsStored === 0);
        fresh = await world.worker([...args, '--fresh']).result;
        done = await worker.result;
        afterwards = await status(world);
    });
    after(async () => {
        worker?.child.kill('SIGKILL');
        await shop?.close();
        await world?.close();
    });

    it('shows the shared queue, the worker and its counters while the run goes on', () => {
        assert.equal(during.workers.length, 1);
        assert.ok(during.queues.http.waiting + during.queues.http.active > 0, JSON.stringify(during.queues));
        assert.ok(
            during.stored.items >= 50 &&
                during.totals.itemsStored! > 0 &&
                during.totals.itemsStored! <= during.stored.items,
            JSON.stringify(during.totals),
        );
    });

    it('refuses --fresh while a worker is active, and the run goes on to its end', () => {
        assert.equal(fresh.code, 2);
        assert.match(fresh.stderr, /--fresh: 1 worker\(s\) of demo-shop are active/);
        assert.equal(done.code, 0, done.stderr);
    });

    it('shows the finished run: no worker, nothing queued, every product stored, dead-letter by reason', () => {
        assert.deepEqual(afterwards.workers, []);
        assert.deepEqual(afterwards.queues, {
            http: { waiting: 0, delayed: 0, active: 0, spilled: 0 },
            browser: { waiting: 0, delayed: 0, active: 0, spilled: 0 },
        });
        assert.equal(afterwards.stored.items, 300);
        // The shop's dead links answer 404 or 410.
        assert.equal(
            afterwards.deadLetter.reduce((sum, { count }) => sum + count, 0),
            shop.notFoundPaths.length,
        );
        assert.ok(
            afterwards.deadLetter.every(
                ({ reason, failureClass }) => /^http-4(04|10)$/.test(reason) && failureClass === 'permanent',
            ),
        );
    });
});

describe('a worker opening a fleet', () => {
    it('joins a run whose only work left is in the PostgreSQL backlog, instead of starting over', async (t) => {
        const world = await openFleetWorld();
        t.after(() => world.close());
        const backlog = new PgBacklog(world.db, 'demo-shop', 'demo-shop-http');
        await backlog.push([
            {
                jobId: 'spilled-1',
                priority: 1,
                data: {
                    url: 'http://127.0.0.1:9/products/1',
                    uniqueKey: 'http://127.0.0.1:9/products/1',
                    userData: {},
                    retryCount: 0,
                    errorMessages: [],
                },
            },
        ]);
        const stores = await openDistributedStores({
            site: 'demo-shop',
            redisUrl: world.redisUrl,
            databaseUrl: world.databaseUrl,
            redisPrefix: world.prefix,
            storageDir: await tempDir(t, 'spilled-join'),
            log: createLogger({ level: 'silent' }),
        });
        // Opening starts the queue's feeder, which may move the job to Redis meanwhile: count both.
        const { waiting, spilled } = await stores.httpQueue.counts();
        await stores.close();
        assert.deepEqual(stores.joined, { workers: 0, queued: 1 });
        assert.equal(waiting + spilled, 1);
    });
});
