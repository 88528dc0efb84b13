/**
 * The parts failing under a running fleet: Redis drops every worker connection (`CLIENT KILL`), then
 * PostgreSQL refuses for a few seconds (a real TCP proxy in front of it, as a restart does). The
 * workers pause, reconnect and lose nothing — with most record pages spilled to the PostgreSQL
 * backlog, so the refusal also hits the frontier's feed.
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
import { killWorkerConnections, POSTGRES_URL } from '../helpers/fleetWorld.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcpProxy.js';

describe('the parts failing under a running fleet', { skip: chromiumPath ? false : 'no Chromium found' }, () => {
    let fleet: Fleet;
    let proxy: TcpProxy;
    let results: CliResult[];
    let connectionsKilled: number;
    let backlogMidRun = 0;

    before(async () => {
        // The workers reach PostgreSQL through a proxy that can refuse them, as a restarting server does.
        proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(POSTGRES_URL).port || 5432) });
        fleet = await startFleet(
            3,
            { ...SHOP, products: 600, latencyMs: 20 },
            {
                databaseUrl: (world) => throughProxy(world.databaseUrl, proxy.port),
                // A small Redis window: most record pages wait in PostgreSQL's backlog, which the refusal hits too.
                env: { DRAGNET_MAX_WAITING_JOBS: '100' },
            },
        );
        await itemsReach(fleet.world, 150);
        connectionsKilled = await killWorkerConnections(fleet.world);
        const { rows } = await fleet.world.db.query<{ n: string }>(
            `SELECT count(*) AS n FROM ${fleet.world.db.table('backlog')}`,
        );
        backlogMidRun = Number(rows[0]!.n);
        await itemsReach(fleet.world, 350);
        proxy.refuseFor(4_000);
        results = await fleet.results();
    });
    after(async () => {
        await fleet?.close();
        await proxy?.close();
    });

    it(`the run completes with nothing lost after Redis drops \
every connection and PostgreSQL refuses for 4 s`, async () => {
        assert.ok(connectionsKilled >= 6, `killed ${connectionsKilled} Redis connections`);
        assertExited(results);
        assert.ok(backlogMidRun > 100, `${backlogMidRun} in the backlog mid-run`);
        await assertEveryProductOnce(fleet);
    });
});

/** The same database URL, reached through the proxy on `port`. */
function throughProxy(databaseUrl: string, port: number): string {
    const url = new URL(databaseUrl);
    url.port = String(port);
    return url.href;
}
