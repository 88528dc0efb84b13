/**
 * Crawler child of the render suite: dragnet's `crawl()` over the fixture shop with Chromium,
 * the CLI's defaults but for the case's concurrencies, logs off. Prints one RenderResult line.
 * The bench parent samples this process's tree (Node and Chromium) from /proc; this side adds
 * what only the crawler's process sees:
 *
 * - every request Chromium sent. The browser stage launches Chromium with a proxy: a
 *   proxy-chain server inside this process (the egress proxy). So the browser's requests arrive
 *   at this process's only HTTP server (`http.server.request.start`);
 * - every cheap fetch: dragnet's HTTP client is undici, whose requests its diagnostics channels
 *   (`undici:request:*`) report;
 * - every page the run stored in its raw store, by renderer, with the time it was handled;
 * - CPU time: its own during `crawl()`, and that of its reaped children (/proc/self/stat
 *   cutime + cstime) — Chromium's, to the extent Chromium reaped its own helpers before exiting.
 *
 *   node --import tsx bench/crawlers/dragnetRender.ts '<RenderCase as JSON>'
 */
import { subscribe } from 'node:diagnostics_channel';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import demoShop from '../../routes/demo-shop.js';
import { findChromium } from '../../src/fetch/browser/chromium.js';
import { limitHeapGrowth } from '../../src/runtime/heapGrowth.js';
import type { RenderLearningOptions } from '../../src/fetch/browser/renderLearning.js';
import { createLogger } from '../../src/monitor/logger.js';
import type { RunSummary } from '../../src/vocabulary/report.js';
import { crawl } from '../../src/run.js';
import { ArchiveStore, archiveDirOf } from '../../src/store/archive/archiveStore.js';
import { listProcesses, treeOf } from '../lib/processTree.js';

export interface RenderCase {
    shopUrl: string;
    storageDir: string;
    maxConcurrency: number;
    /** Default: the stage's own, what the machine holds. */
    browserConcurrency?: number;
    renderLearning?: RenderLearningOptions;
}

/** A cheap fetch: shop path, epoch ms at which the request was created and its response ended (null: no response). */
export type CheapFetch = [path: string, startMs: number, doneMs: number | null];
/** A request Chromium sent: its host and path, and epoch ms at which the proxy received it. */
export type BrowserRequest = [host: string, path: string, atMs: number];

export interface RenderResult {
    exitCode: number;
    summary: RunSummary;
    /** Epoch ms just before `crawl()` was called and just after it returned. */
    startedAtMs: number;
    endedAtMs: number;
    /** User + system CPU of this process during `crawl()`. */
    nodeCpuSec: number;
    /** CPU of the children this process reaped during `crawl()` (Chromium's browser processes, once closed). */
    reapedChildrenCpuSec: number;
    /** Whether every Chromium process had exited when `reapedChildrenCpuSec` was read. */
    chromiumExited: boolean;
    cheapFetches: CheapFetch[];
    browserRequests: BrowserRequest[];
    /** Every stored raw page: its path, renderer and when it was handled (epoch ms). */
    rawPages: Array<[path: string, renderer: 'http' | 'browser', atMs: number]>;
}

const renderCase = JSON.parse(process.argv[2] ?? '') as RenderCase;
// The heap setting the CLI runs with (main.ts).
limitHeapGrowth();
const chromiumPath = findChromium();
if (!chromiumPath)
    throw new Error('no Chromium found; the render bench needs one (CHROMIUM_PATH or /usr/bin/chromium)');
const shopHost = new URL(renderCase.shopUrl).host;

const browserRequests: BrowserRequest[] = [];
subscribe('http.server.request.start', (message) => {
    // A proxy request carries the absolute URL (`GET http://host/path HTTP/1.1`).
    const url = new URL((message as { request: IncomingMessage }).request.url ?? '/', 'http://unknown');
    browserRequests.push([url.host, url.pathname, Date.now()]);
});

// dragnet's own fetches go out by its HTTP client, undici, whose requests these channels report (the proxy forwards
// the browser's with node:http, which they do not see).
const cheapFetches: CheapFetch[] = [];
const fetchOf = new WeakMap<object, CheapFetch>();
subscribe('undici:request:create', (message) => {
    const { request } = message as { request: { origin: string; path: string } };
    if (new URL(request.origin).host !== shopHost) return;
    const fetch: CheapFetch = [request.path.split('?')[0]!, Date.now(), null];
    cheapFetches.push(fetch);
    fetchOf.set(request, fetch);
});
subscribe('undici:request:headers', (message) => {
    const fetch = fetchOf.get((message as { request: object }).request);
    if (fetch) fetch[2] = -1;
});
subscribe('undici:request:trailers', (message) => {
    const fetch = fetchOf.get((message as { request: object }).request);
    if (fetch?.[2] === -1) fetch[2] = Date.now();
});

const startChildrenCpu = await reapedChildrenCpuSec();
const startCpu = process.cpuUsage();
const startedAtMs = Date.now();
const { summary, exitCode } = await crawl({
    site: demoShop,
    startUrls: [`${renderCase.shopUrl}/`],
    storageDir: renderCase.storageDir,
    maxConcurrency: renderCase.maxConcurrency,
    browserConcurrency: renderCase.browserConcurrency,
    renderLearning: renderCase.renderLearning,
    progressIntervalSecs: 3600,
    chromiumPath,
    log: createLogger({ level: 'silent', pretty: false }),
});
const endedAtMs = Date.now();
const cpu = process.cpuUsage(startCpu);
const chromiumExited = await chromiumGone(10_000);
const endChildrenCpu = await reapedChildrenCpuSec();

const rawPages: RenderResult['rawPages'] = [];
const raw = await ArchiveStore.open({ archiveDir: archiveDirOf(renderCase.storageDir), site: demoShop.name });
for await (const page of raw.pages())
    rawPages.push([new URL(page.finalUrl).pathname, page.renderer, Date.parse(page.fetchedAt)]);

const result: RenderResult = {
    exitCode,
    summary,
    startedAtMs,
    endedAtMs,
    nodeCpuSec: (cpu.user + cpu.system) / 1e6,
    reapedChildrenCpuSec: endChildrenCpu - startChildrenCpu,
    chromiumExited,
    cheapFetches,
    browserRequests,
    rawPages,
};
process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));

/** CPU seconds of this process's reaped children, from /proc/self/stat (cutime + cstime, in 1/100 s). */
async function reapedChildrenCpuSec(): Promise<number> {
    const stat = await readFile('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
}

/** Waits until no Chromium process is left under this one (the browser pool closes its browsers as it is torn down). */
async function chromiumGone(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
        const tree = treeOf(process.pid, await listProcesses());
        if (!tree.some((p) => p.comm.startsWith('chrom'))) return true;
        if (Date.now() > deadline) return false;
        await sleep(100);
    }
}
