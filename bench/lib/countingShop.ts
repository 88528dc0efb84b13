/**
 * The fixture shop (src/demo/shop.ts, unchanged) with an in-flight count taken at the shop
 * side: Node's diagnostics channel `http.server.request.start` fires for every request any
 * HTTP server in this process receives, and the response's 'close' event fires once when it
 * was sent or the connection dropped. The bench parent runs only the shop's server, so the
 * count is exactly the requests the shop holds open — what a slow target sees, measured the
 * same way for every crawler and without looking inside any of them.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { ServerResponse } from 'node:http';
import { startShop, type Shop, type ShopOptions } from '../../src/demo/shop.js';

export interface InflightSample {
    atMs: number;
    inflight: number;
}

export interface CountingShop {
    shop: Shop;
    /** One sample per interval since the shop started. */
    samples(): InflightSample[];
    close(): Promise<void>;
}

const REQUEST_START = 'http.server.request.start';

export async function startCountingShop(options: ShopOptions, sampleIntervalMs: number): Promise<CountingShop> {
    let inflight = 0;
    const samples: InflightSample[] = [];
    const onRequest = (message: unknown) => {
        inflight += 1;
        (message as { response: ServerResponse }).response.once('close', () => {
            inflight -= 1;
        });
    };
    subscribe(REQUEST_START, onRequest);
    const timer = setInterval(() => samples.push({ atMs: Date.now(), inflight }), sampleIntervalMs);
    const shop = await startShop(options);
    return {
        shop,
        samples: () => samples,
        async close() {
            clearInterval(timer);
            unsubscribe(REQUEST_START, onRequest);
            await shop.close();
        },
    };
}

/**
 * A shop where every page answers 200 at the first try and none needs a browser, so the CPU and
 * latency suites measure crawling itself, not retries or rendering. Same seed every run.
 */
export const CLEAN_SHOP = {
    seed: 1,
    scriptOnlyRate: 0,
    transientFailureRate: 0,
    notFoundLinks: 0,
} as const satisfies ShopOptions;
