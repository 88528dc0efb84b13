/**
 * A recrawl killed with SIGKILL in the middle, from another process, and started again on the same
 * storage dir: the second session resumes the recrawl (it does not start another one), and the
 * change log at the end is exactly the shop's changes, with every product of the changed shop
 * stored once.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { type CatalogChanges, type Shop, startShop } from '../../src/demo/shop.js';
import type { StoredItem } from '../../src/store/records.js';
import type { RunSummary } from '../../src/vocabulary/report.js';
import { type CliResult, runCli, runScript, startCli } from '../helpers/cli.js';
import { CHANGING_SHOP, changeLogLines, jsonLines, expectedChangeLog } from '../helpers/recrawlWorld.js';
import { readDataset } from '../helpers/stores.js';

describe('a recrawl killed mid-run and started again', () => {
    let shop: Shop;
    let storageDir: string;
    let changes: CatalogChanges;
    let killed: CliResult;
    let resumed: CliResult;
    let args: string[];

    before(async () => {
        shop = await startShop({ ...CHANGING_SHOP, latencyMs: 20 });
        storageDir = await mkdtemp(join(tmpdir(), 'dragnet-recrawl-resume-'));
        args = [
            ...['--site', 'demo-shop', '--start-url', `${shop.url}/`, '--storage-dir', storageDir],
            ...['--max-concurrency', '6', '--summary-json', join(storageDir, 'summary.json')],
        ];
        const first = await runCli(args);
        assert.equal(first.code, 0, first.stderr);
        changes = shop.advance();
        shop.resetStats();
        const recrawl = startCli(args);
        while (shop.stats().total < 150) await sleep(5);
        recrawl.child.kill('SIGKILL');
        killed = await recrawl.result;
        resumed = await runCli(args);
    });
    after(async () => {
        await shop?.close();
        if (storageDir) await rm(storageDir, { recursive: true, force: true });
    });

    it('resumes the recrawl in its second session', async () => {
        assert.equal(killed.signal, 'SIGKILL');
        assert.equal(resumed.code, 0, resumed.stderr);
        const summary = JSON.parse(await readFile(join(storageDir, 'summary.json'), 'utf8')) as RunSummary;
        assert.equal(summary.recrawl?.run, 2);
        assert.equal(summary.resumed?.sessions, 1);
    });

    it("ends with the shop's changes as its change log, and every product once", async () => {
        const run = await runScript('src/commands/export.ts', [
            ...['--changes', '--format', 'jsonl', '--site', 'demo-shop', '--storage-dir', storageDir],
        ]);
        assert.equal(run.code, 0, run.stderr);
        assert.deepEqual(changeLogLines(jsonLines(run.stdout)), expectedChangeLog(changes, shop.url));
        const items = await readDataset<StoredItem>(storageDir, 'demo-shop');
        assert.deepEqual(
            items.map((item) => item._url).sort(),
            shop.products.map((product) => `${shop.url}${product.path}`).sort(),
        );
    });
});
