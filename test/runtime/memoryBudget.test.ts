/**
 * The memory budget (src/runtime/memoryBudget.ts): `--memory-mb`, else a runner's ACTOR_MEMORY_MBYTES, sets
 * the V8 heap limit (the CLI starts itself again with it, passing signals on) and the autoscaled
 * pools' ceiling (Crawlee's memoryMbytes).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Shop, startShop } from '../../src/demo/shop.js';
import { heapLimitMbFor, memoryBudgetMb, MIN_HEAP_MB } from '../../src/runtime/memoryBudget.js';
import { openStorage } from '../../src/store/datasets.js';
import { runScript, startScript } from '../helpers/cli.js';

/** The heap limit the crawling process logged, in MB. */
function loggedHeapLimit(stderr: string): number | undefined {
    const line = stderr.split('\n').find((each) => each.includes('"heapLimitMb"'));
    return line ? (JSON.parse(line) as { heapLimitMb: number }).heapLimitMb : undefined;
}

describe('the memory budget', () => {
    let shop: Shop;
    let dir: string;

    before(async () => {
        shop = await startShop({ seed: 9, products: 40, scriptOnlyRate: 0, latencyMs: 150 });
        dir = await mkdtemp(join(tmpdir(), 'dragnet-memory-'));
    });
    after(async () => {
        await shop.close();
        await rm(dir, { recursive: true, force: true });
    });

    it("is --memory-mb, else the runner's ACTOR_MEMORY_MBYTES; half of it is the heap, at least 128 MB", () => {
        assert.equal(memoryBudgetMb(512, { ACTOR_MEMORY_MBYTES: '1024' }), 512);
        assert.equal(memoryBudgetMb(undefined, { ACTOR_MEMORY_MBYTES: '1024' }), 1024);
        assert.equal(memoryBudgetMb(undefined, { ACTOR_MEMORY_MBYTES: 'lots' }), undefined);
        assert.equal(memoryBudgetMb(undefined, {}), undefined);
        assert.equal(heapLimitMbFor(1024), 512);
        assert.equal(heapLimitMbFor(200), MIN_HEAP_MB);
    });

    it("sets the autoscaled pools' ceiling", async () => {
        const { config, storage } = openStorage(join(dir, 'ceiling'), {}, 700);
        try {
            assert.equal(config.get('memoryMbytes'), 700);
        } finally {
            storage.close();
        }
    });

    it('runs the crawl with the heap limit of the budget, from the flag or the runner', async () => {
        const crawl = (args: string[], env = {}) =>
            runScript(
                'src/main.ts',
                [
                    '--start-url',
                    `${shop.url}/`,
                    '--allow-private-network',
                    '--max-requests',
                    '10',
                    '--storage-dir',
                    join(dir, 'crawl'),
                    '--fresh',
                    '--log-level',
                    'info',
                    ...args,
                ],
                env,
            );
        const unlimited = loggedHeapLimit((await crawl([])).stderr);
        assert.equal(unlimited, undefined, 'no budget, no restart');
        const flagged = await crawl(['--memory-mb', '400']);
        assert.equal(flagged.code, 0, flagged.stderr);
        const fromFlag = loggedHeapLimit(flagged.stderr)!;
        // V8's limit is the old space asked for (200 MB) and its young generation.
        assert.ok(fromFlag >= 200 && fromFlag < 300, String(fromFlag));
        const fromRunner = loggedHeapLimit((await crawl([], { ACTOR_MEMORY_MBYTES: '600' })).stderr)!;
        assert.ok(fromRunner >= 300 && fromRunner < 400, String(fromRunner));
    });

    it('passes SIGTERM on to the crawl, which stops gracefully', async () => {
        const running = startScript('src/main.ts', [
            '--start-url',
            `${shop.url}/`,
            '--allow-private-network',
            '--max-concurrency',
            '2',
            '--storage-dir',
            join(dir, 'stopped'),
            '--memory-mb',
            '300',
            '--log-level',
            'info',
        ]);
        let stderr = '';
        let signalled = false;
        running.child.stderr!.on('data', (chunk: string) => {
            stderr += chunk;
            if (signalled || !stderr.includes('"heapLimitMb"') || !stderr.includes('crawling')) return;
            signalled = true;
            // Past the seeding, when the rounds (and their stop handler)
            // have begun: 40 pages at 150 ms, 2 at a time, take 3 s.
            setTimeout(() => running.child.kill('SIGTERM'), 1000);
        });
        const result = await running.result;
        assert.equal(result.code, 143, result.stderr);
        assert.match(result.stdout, /stopped by SIGTERM/, 'the summary of a graceful stop');
    });
});
