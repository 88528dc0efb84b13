/**
 * A worker killed with SIGKILL in the middle of a distributed run: its job locks expire, the
 * stalled-job check returns its jobs, and the other workers finish them; nothing lost, nothing
 * stored twice. And a worker stopped with SIGTERM: it finishes its pages in flight, gives back the
 * jobs it took ahead, and a worker started later finishes the run.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
    assertEveryProductOnce,
    assertExited,
    chromiumPath,
    type Fleet,
    itemsReach,
    SHOP,
    startFleet,
} from '../helpers/fleet.js';
import type { CliResult } from '../helpers/cli.js';

describe('a worker killed mid-run', { skip: chromiumPath ? false : 'no Chromium found' }, () => {
    let fleet: Fleet;
    let results: CliResult[];

    before(async () => {
        fleet = await startFleet(3, { ...SHOP, products: 600, latencyMs: 40 });
        await itemsReach(fleet.world, 150);
        fleet.workers[0]!.child.kill('SIGKILL');
        results = await fleet.results();
    });
    after(() => fleet?.close());

    it('loses nothing: once its locks expire the others finish its work, storing nothing twice', async () => {
        assert.equal(results[0]!.signal, 'SIGKILL');
        assertExited(results.slice(1));
        assert.ok(
            results.slice(1).some((result) => /took back job/.test(result.stderr)),
            'a survivor took back the jobs the dead worker held',
        );
        await assertEveryProductOnce(fleet);
    });
});

describe('a worker stopped with SIGTERM', { skip: chromiumPath ? false : 'no Chromium found' }, () => {
    let fleet: Fleet;
    let stopped: CliResult;
    let successor: CliResult;

    before(async () => {
        fleet = await startFleet(1, { ...SHOP, products: 400, latencyMs: 40 });
        await itemsReach(fleet.world, 100);
        fleet.workers[0]!.child.kill('SIGTERM');
        stopped = await fleet.workers[0]!.result;
        const { rows } = await fleet.world.db.query<{ n: string }>(
            `SELECT count(*) AS n FROM ${fleet.world.db.table('items')}`,
        );
        storedWhenStopped = Number(rows[0]!.n);
        successor = await fleet.world.worker(['--start-url', `${fleet.shop.url}/`], {
            DRAGNET_FINISH_GRACE_SECS: '2',
            CHROMIUM_PATH: chromiumPath ?? '',
        }).result;
    });
    let storedWhenStopped = 0;
    after(() => fleet?.close());

    it("ends gracefully with the signal's exit code, leaving the rest queued for the next worker", async () => {
        assert.equal(stopped.code, 143, stopped.stderr);
        assert.ok(storedWhenStopped < fleet.shop.products.length, `${storedWhenStopped} stored when it stopped`);
        assert.equal(successor.code, 0, successor.stderr);
        await assertEveryProductOnce(fleet);
    });
});
