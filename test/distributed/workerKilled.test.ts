/**
 * A worker killed with SIGKILL in the middle of a distributed run: its job locks expire, the
 * stalled-job check returns its jobs, and the other workers finish them; nothing lost, nothing
 * stored twice.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertEveryProductOnce, assertExited, chromiumPath, type Fleet, itemsReach, SHOP, startFleet } from '../helpers/fleet.js';
import type { CliResult } from '../helpers/cli.js';

describe('a worker killed mid-run', { skip: chromiumPath ? false : 'no Chromium found' }, () => {
    let fleet: Fleet;
    let results: CliResult[];

    before(async () => {
        fleet = await startFleet(3, { ...SHOP, latencyMs: 40 });
        await itemsReach(fleet.world, 250);
        fleet.workers[0]!.child.kill('SIGKILL');
        results = await fleet.results();
    });
    after(() => fleet?.close());

    it("loses nothing: once its locks expire the others finish its work, storing nothing twice", async () => {
        assert.equal(results[0]!.signal, 'SIGKILL');
        assertExited(results.slice(1));
        await assertEveryProductOnce(fleet);
    });
});

