/**
 * The day after, in a fleet: three workers crawl a shop, the shop changes, and three workers recrawl
 * it from the history in PostgreSQL; one of them is killed with SIGKILL in the middle. Its jobs come
 * back to the others, and the change log is still exactly the shop's changes, each change once.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CatalogChanges } from '../../src/demo/shop.js';
import type { StoredItem } from '../../src/store/records.js';
import { type CliResult, type RunningCli, runScript } from '../helpers/cli.js';
import { assertExited, chromiumPath, type Fleet, startFleet } from '../helpers/fleet.js';
import { CHANGING_SHOP, changeLogLines, jsonLines, comparable, expectedChangeLog } from '../helpers/recrawlWorld.js';

describe('a fleet recrawling a shop that changed, one worker killed', {
    skip: chromiumPath ? false : 'no Chromium found',
}, () => {
    let fleet: Fleet;
    let changes: CatalogChanges;
    let firstItems: StoredItem[];
    let recrawl: CliResult[];

    before(async () => {
        fleet = await startFleet(3, { ...CHANGING_SHOP, latencyMs: 100 });
        assertExited(await fleet.results());
        firstItems = await fleet.world.stored<StoredItem>('demo-shop');
        changes = fleet.shop.advance();
        const workers = [0, 1, 2].map((index) =>
            fleet.world.worker(
                [
                    ...['--start-url', `${fleet.shop.url}/`, '--max-concurrency', '6'],
                    ...['--storage-dir', join(fleet.dir, `r${index}`), '--archive-dir', fleet.archiveDir],
                ],
                {
                    DRAGNET_JOB_LOCK_SECS: '10',
                    DRAGNET_FINISH_GRACE_SECS: '2',
                    CHROMIUM_PATH: chromiumPath ?? '',
                    LOG_LEVEL: 'info',
                },
            ),
        );
        // Killed once it is crawling, with pages of its own in work.
        await said(workers[0]!, /crawling demo-shop/);
        await recrawlItemsReach(fleet, 100);
        workers[0]!.child.kill('SIGKILL');
        recrawl = await Promise.all(workers.map((worker) => worker.result));
    });
    after(() => fleet?.close());

    it('recrawls: the survivors end cleanly, having taken back the killed one’s jobs', () => {
        assert.equal(recrawl[0]!.signal, 'SIGKILL');
        assertExited(recrawl.slice(1));
        const survivors = recrawl.slice(1);
        const said = survivors.map((result) => result.stdout + result.stderr).join('\n');
        assert.match(said, /recrawling demo-shop \(run 2/);
        assert.match(said, /took back job/);
    });

    it("writes the change log of the shop's changes, each once", async () => {
        const run = await runScript(
            'src/commands/export.ts',
            ['--changes', '--format', 'jsonl', '--site', 'demo-shop'],
            {
                DATABASE_URL: fleet.world.databaseUrl,
            },
        );
        assert.equal(run.code, 0, run.stderr);
        assert.deepEqual(changeLogLines(jsonLines(run.stdout)), expectedChangeLog(changes, fleet.shop.url));
    });

    it('stores every product of the changed shop once, the unchanged ones as they were', async () => {
        const items = await fleet.world.stored<StoredItem & { _change: string }>('demo-shop');
        const urls = items.map((item) => item._url).sort();
        assert.deepEqual(urls, fleet.shop.products.map((product) => `${fleet.shop.url}${product.path}`).sort());
        const unchanged = items.filter((item) => item._change === 'unchanged');
        const before = new Set(comparable(firstItems));
        for (const line of comparable(unchanged)) assert.ok(before.has(line), line);
    });
});

/** Resolves once the recrawl has stored `count` items (the first run's are `demo-shop-previous` by then). */
async function recrawlItemsReach({ world }: Fleet, count: number): Promise<void> {
    for (;;) {
        const { rows } = await world.db.query<{ n: string }>(
            `SELECT count(*) AS n FROM ${world.db.table('items')} WHERE site = 'demo-shop'`,
        );
        if (Number(rows[0]!.n) >= count) return;
        await new Promise((resolve) => setTimeout(resolve, 200));
    }
}

/** Resolves once `worker` has written `pattern` to either stream. */
function said(worker: RunningCli, pattern: RegExp): Promise<void> {
    return new Promise((resolve) => {
        let seen = '';
        const listen = (chunk: Buffer | string) => {
            seen += String(chunk);
            if (!pattern.test(seen)) return;
            worker.child.stdout!.off('data', listen);
            worker.child.stderr!.off('data', listen);
            resolve();
        };
        worker.child.stdout!.on('data', listen);
        worker.child.stderr!.on('data', listen);
    });
}
