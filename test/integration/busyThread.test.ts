/**
 * A crawl whose thread cannot keep up still keeps its slots full. 60 slots of 300 ms responses ask
 * for 200 product pages/s, and each costs the crawling thread 5 ms more to handle
 * (fixtures/busyShop.ts), so the thread is the bottleneck and its event loop is late for the whole
 * run. Crawlee's autoscaled pool, left to itself, stops starting requests while the loop was late
 * in most of the last 5 s: in flight drains to one request and stays there for seconds, over and
 * over, while the thread idles (see httpStage.ts). dragnet's pool keeps asking: the shop never
 * waits long with one request or none.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startShop, type Shop } from '../../src/demo/shop.js';
import { runCli, type CliResult } from '../helpers/cli.js';

const PRODUCTS = 800;
const MAX_CONCURRENCY = 60;
const LATENCY_MS = 300;
/**
 * Kept full, the pool leaves the shop near idle for under 0.2 s at a time (while the thread
 * handles a burst of responses); stopped, for 1.5 to 2 s each time.
 */
const LONGEST_NEAR_IDLE_MS = 800;

/**
 * The longest stretch, from the first arrival to the last, in which the
 * shop held at most one request (each held `latencyMs` from its arrival).
 */
function longestNearIdleMs(arrivals: number[], latencyMs: number): number {
    const events = arrivals
        .flatMap(
            (at) =>
                [
                    [at, 1],
                    [at + latencyMs, -1],
                ] as const,
        )
        .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    const end = Math.max(...arrivals);
    let inFlight = 0;
    let nearIdleSince: number | undefined;
    let longest = 0;
    for (const [at, change] of events) {
        if (at > end) break;
        inFlight += change;
        if (inFlight <= 1) nearIdleSince ??= at;
        else if (nearIdleSince !== undefined) {
            longest = Math.max(longest, at - nearIdleSince);
            nearIdleSince = undefined;
        }
    }
    return longest;
}

describe('a crawl whose thread cannot keep up', () => {
    let shop: Shop;
    let storageDir: string;
    let result: CliResult;

    before(async () => {
        shop = await startShop({
            seed: 31,
            products: PRODUCTS,
            categories: 8,
            scriptOnlyRate: 0,
            transientFailureRate: 0,
            notFoundLinks: 0,
            latencyMs: LATENCY_MS,
        });
        storageDir = await mkdtemp(join(tmpdir(), 'dragnet-busy-'));
        result = await runCli([
            '--site',
            'test/integration/fixtures/busyShop.ts',
            '--start-url',
            `${shop.url}/`,
            '--storage-dir',
            storageDir,
            '--max-concurrency',
            String(MAX_CONCURRENCY),
            // Parsed in the crawling thread, and no failures to adapt
            // to: the pool alone decides how many are in flight.
            '--parse-workers',
            '0',
            '--adaptive-concurrency',
            'off',
        ]);
    });
    after(async () => {
        await shop?.close();
        await rm(storageDir, { recursive: true, force: true });
    });

    it('fetches every product once', () => {
        assert.equal(result.code, 0, result.stderr);
        for (const product of shop.products) assert.equal(shop.requestTimes(product.path).length, 1, product.path);
    });

    it('never leaves the shop with one request or none for long', () => {
        const arrivals = [...shop.listingPaths, ...shop.products.map((product) => product.path)].flatMap((path) =>
            shop.requestTimes(path),
        );
        const longest = longestNearIdleMs(arrivals, LATENCY_MS);
        assert.ok(longest < LONGEST_NEAR_IDLE_MS, `the shop held at most one request for ${longest} ms`);
    });
});
