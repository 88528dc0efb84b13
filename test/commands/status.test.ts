/**
 * `npm run status -- --watch` (a child process) on a fleet's shared state in the machine's real
 * Redis and PostgreSQL (a key prefix and a schema of the test's own): a view every --interval
 * seconds until Ctrl+C, the exits the fleet's breakers hold out among what it shows.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fleetKeys } from '../../src/wiring/openDistributed.js';
import type { FleetStatus } from '../../src/wiring/fleetStatus.js';
import { startScript } from '../helpers/cli.js';
import { type FleetWorld, openFleetWorld } from '../helpers/fleetWorld.js';

describe('npm run status -- --watch', () => {
    let world: FleetWorld;
    before(async () => {
        world = await openFleetWorld();
        const verdict = { openUntil: Date.now() + 60_000, openings: 2 };
        await world.redis.hset(
            fleetKeys(world.prefix, 'demo-shop').exits,
            'datacenter/127.0.0.1:8001',
            JSON.stringify(verdict),
        );
    });
    after(() => world?.close());

    it('shows the fleet again every interval, the resting exits among it, and ends cleanly on Ctrl+C', async () => {
        const running = startScript(
            'src/commands/status.ts',
            ['--site', 'demo-shop', '--watch', '--interval', '0.3', '--json'],
            world.env,
        );
        let seen = '';
        running.child.stdout!.on('data', (chunk: Buffer) => (seen += chunk.toString()));
        for (const started = Date.now(); seen.split('\n').length <= 3 && Date.now() - started < 20_000; )
            await new Promise((resolve) => setTimeout(resolve, 100));
        running.child.kill('SIGINT');
        const result = await running.result;
        assert.equal(result.code, 0, result.stderr);
        const lines = result.stdout
            .trimEnd()
            .split('\n')
            .map((line) => JSON.parse(line) as FleetStatus);
        assert.ok(lines.length >= 3, `${lines.length} views`);
        assert.deepEqual(
            lines[0]!.restingExits.map(({ exit }) => exit),
            ['datacenter/127.0.0.1:8001'],
        );
        assert.equal(lines[0]!.queues.http.waiting, 0);
    });
});
