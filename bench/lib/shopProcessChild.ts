/**
 * The child side of shopProcess.ts: the fixture shop (src/demo/shop.ts, unchanged) in a process
 * of its own, spoken to over the IPC channel. Started with the shop's options as JSON in argv[2];
 * sends `{ type: 'ready', url, products, listingPaths }`, answers `report` with what it saw, exits on `close`.
 *
 * The in-flight count and the first arrival / last answer are taken as in countingShop.ts, from
 * Node's `http.server.request.start` diagnostics channel: the shop's server is the only one here.
 */
import { subscribe } from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startShop, type ShopOptions } from '../../src/demo/shop.js';
import type { ShopChildMessage, ShopReport } from './shopProcess.js';

const SAMPLE_INTERVAL_MS = 250;
/** The window of `peakCoreShare`: 20 samples, 5 s. */
const CPU_WINDOW_SAMPLES = 20;

const options = JSON.parse(process.argv[2] ?? '{}') as ShopOptions;
let inflight = 0;
/**
 * Requests answered or dropped but `/__stats`, counted here: the shop's `stats()` clones its counts
 * by path, which at the seed's 420,000 paths took longer than the report may.
 */
let requests = 0;
let firstRequestAtMs: number | null = null;
let lastAnswerAtMs: number | null = null;
const inflightSamples: Array<{ atMs: number; inflight: number; cpuSec: number }> = [];
/** CPU seconds of this process so far. */
const cpuSecNow = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1e6;
};

subscribe('http.server.request.start', (message) => {
    inflight += 1;
    firstRequestAtMs ??= Date.now();
    const { request, response } = message as { request: IncomingMessage; response: ServerResponse };
    const counted = !request.url?.startsWith('/__stats');
    response.once('close', () => {
        inflight -= 1;
        if (counted) requests += 1;
        lastAnswerAtMs = Date.now();
    });
});
const sampler = setInterval(
    () => inflightSamples.push({ atMs: Date.now(), inflight, cpuSec: cpuSecNow() }),
    SAMPLE_INTERVAL_MS,
);

const shop = await startShop(options);
const cpuAtReady = process.cpuUsage();
const send = (message: ShopChildMessage) => process.send!(message);
send({ type: 'ready', url: shop.url, products: shop.products.length, listingPaths: shop.listingPaths });

process.on('message', (message: { type: 'report' | 'close' }) => {
    if (message.type === 'report') {
        const cpu = process.cpuUsage(cpuAtReady);
        const served = inflightSamples.filter(
            (s) =>
                firstRequestAtMs !== null &&
                s.atMs >= firstRequestAtMs &&
                lastAnswerAtMs !== null &&
                s.atMs <= lastAnswerAtMs,
        );
        const report: ShopReport = {
            requests,
            firstRequestAtMs,
            lastAnswerAtMs,
            inflightSamples: served.map((s) => s.inflight),
            cpuSec: (cpu.user + cpu.system) / 1e6,
            peakCoreShare: peakCoreShare(served),
        };
        send({ type: 'report', report });
    } else if (message.type === 'close') {
        clearInterval(sampler);
        void shop.close().finally(() => process.exit(0));
    }
});
/**
 * The highest share of one core the shop used over any `CPU_WINDOW_SAMPLES` samples in a row (5 s):
 * near 1, the shop (one thread) is what limits the crawl. 0 with too few samples.
 */
function peakCoreShare(samples: Array<{ atMs: number; cpuSec: number }>): number {
    let peak = 0;
    for (let i = CPU_WINDOW_SAMPLES; i < samples.length; i++) {
        const from = samples[i - CPU_WINDOW_SAMPLES]!;
        const to = samples[i]!;
        peak = Math.max(peak, (to.cpuSec - from.cpuSec) / ((to.atMs - from.atMs) / 1000));
    }
    return Math.round(peak * 1000) / 1000;
}

// The parent went away without saying so: do not outlive it.
process.on('disconnect', () => process.exit(0));
