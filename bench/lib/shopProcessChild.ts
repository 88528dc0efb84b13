/**
 * The child side of shopProcess.ts: the fixture shop (src/demo/shop.ts, unchanged) in a process
 * of its own, spoken to over the IPC channel. Started with the shop's options as JSON in argv[2];
 * sends `{ type: 'ready', url }`, answers `report` with what it saw, exits on `close`.
 *
 * The in-flight count and the first arrival / last answer are taken as in countingShop.ts, from
 * Node's `http.server.request.start` diagnostics channel: the shop's server is the only one here.
 */
import { subscribe } from 'node:diagnostics_channel';
import type { ServerResponse } from 'node:http';
import { startShop, type ShopOptions } from '../../src/demo/shop.js';
import type { ShopChildMessage, ShopReport } from './shopProcess.js';

const SAMPLE_INTERVAL_MS = 250;

const options = JSON.parse(process.argv[2] ?? '{}') as ShopOptions;
let inflight = 0;
let firstRequestAtMs: number | null = null;
let lastAnswerAtMs: number | null = null;
const inflightSamples: Array<{ atMs: number; inflight: number }> = [];

subscribe('http.server.request.start', (message) => {
    inflight += 1;
    firstRequestAtMs ??= Date.now();
    (message as { response: ServerResponse }).response.once('close', () => {
        inflight -= 1;
        lastAnswerAtMs = Date.now();
    });
});
const sampler = setInterval(() => inflightSamples.push({ atMs: Date.now(), inflight }), SAMPLE_INTERVAL_MS);

const shop = await startShop(options);
const cpuAtReady = process.cpuUsage();
const send = (message: ShopChildMessage) => process.send!(message);
send({ type: 'ready', url: shop.url, products: shop.products.length });

process.on('message', (message: { type: 'report' | 'close' }) => {
    if (message.type === 'report') {
        const cpu = process.cpuUsage(cpuAtReady);
        const report: ShopReport = {
            requests: shop.stats().total,
            firstRequestAtMs,
            lastAnswerAtMs,
            inflightSamples: inflightSamples
                .filter(
                    (s) =>
                        firstRequestAtMs !== null &&
                        s.atMs >= firstRequestAtMs &&
                        lastAnswerAtMs !== null &&
                        s.atMs <= lastAnswerAtMs,
                )
                .map((s) => s.inflight),
            cpuSec: (cpu.user + cpu.system) / 1e6,
        };
        send({ type: 'report', report });
    } else if (message.type === 'close') {
        clearInterval(sampler);
        void shop.close().finally(() => process.exit(0));
    }
});
// The parent went away without saying so: do not outlive it.
process.on('disconnect', () => process.exit(0));
