/**
 * Recrawl against the first crawl, in the same run: a shop of 10,000 products with HTTP validators
 * (an ETag on a third of its pages, a Last-Modified on a third, neither on the rest) is crawled into a
 * fresh storage dir; then 5% of its products change price, none is added, removed or moved
 * (`Shop.advance`), and the next run into the same dir recrawls it. The recrawl asks every known page
 * conditionally: a 304, or a 200 with the payload it had, is carried without a parse.
 *
 * Each phase is dragnet's `crawl()` in a child process of its own (lib/runCrawler.ts), as two
 * `npm start`s one after the other; the shop runs in this process, so its CPU is not the crawler's.
 * Per phase: wall time, pages/s, the bytes the shop sent (status lines, headers and bodies, counted at
 * its sockets: lib/wireBytes.ts) and CPU ms per page of the crawler's process tree. `recrawl/first`
 * is the ratio of the two phases' medians. Latency 0 and concurrency 50, as the cpu suite: pages/s is
 * what the crawler's own work allows. Each run has a fresh shop (same seed) and a fresh storage dir.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PageWeight } from '../src/demo/dressing.js';
import { type ShopChanges, type ShopStats, startShop } from '../src/demo/shop.js';
import type { CrawlerResult } from './crawlers/protocol.js';
import { CONCURRENCY, timeLimitSec } from './cpu.js';
import { CLEAN_SHOP } from './lib/countingShop.js';
import { crawlers, runCrawler } from './lib/runCrawler.js';
import { median, ratio, round } from './lib/stats.js';
import { defineSuite } from './lib/suite.js';
import { countWireBytes, type WireBytes } from './lib/wireBytes.js';

const DEFAULT_PRODUCTS = [10_000];
const LARGE_PRODUCTS = [100_000];
const SAMPLE_INTERVAL_MS = 250;
/** The shop's change between the two crawls: prices only, so every page but the changed ones is as before. */
const CHANGES: ShopChanges = { priceChangeRate: 0.05, newRate: 0, removedRate: 0, movedRate: 0 };

const PHASES = ['first', 'recrawl'] as const;
type Phase = (typeof PHASES)[number];

/** One phase of one run, as measured. */
interface PhaseFigures {
    durationSec: number;
    pages: number;
    pagesPerSec: number;
    bytesReceived: number;
    bytesPerPage: number;
    cpuSec: number;
    cpuMsPerPage: number;
    peakRssMb: number;
    items: number;
    shopCpuSec: number;
    othersCpuShare: number;
}

/** What the recrawl's run summary says it found (`recrawl`). */
interface RecrawlFound {
    items: { new: number; changed: number; unchanged: number; removed: number };
    unchangedPages: { notModified: number; identicalPayload: number };
}

type RecrawlRun =
    | {
          run: number;
          first: PhaseFigures;
          recrawl: PhaseFigures;
          found: RecrawlFound;
          /** The shop's account: products whose price changed, and pages whose bytes changed (listings included). */
          shopChanged: { products: number; pages: number };
          /** The shop's answers in each phase, by status. */
          answers: Record<Phase, Record<string, number>>;
      }
    | { run: number; error: string };

/** One crawl into `storageDir`, measured: the crawler's figures, and the bytes and CPU the shop spent on it. */
async function crawlPhase(
    shopUrl: string,
    storageDir: string,
    products: number,
    wire: WireBytes,
): Promise<{ figures: PhaseFigures; result: CrawlerResult }> {
    const bytesBefore = wire.sent();
    const shopCpuBefore = process.cpuUsage();
    const outcome = await runCrawler(crawlers.dragnet, {
        shopUrl,
        storageDir,
        maxConcurrency: CONCURRENCY,
        timeLimitSec: timeLimitSec(products),
        sampleIntervalMs: SAMPLE_INTERVAL_MS,
    });
    if (!outcome.ok) throw new Error(outcome.error);
    const { result } = outcome;
    if (!result.finished) throw new Error(`cut at the time limit (${timeLimitSec(products)} s)`);
    const shopCpu = process.cpuUsage(shopCpuBefore);
    const shopCpuSec = (shopCpu.user + shopCpu.system) / 1e6;
    const bytesReceived = wire.sent() - bytesBefore;
    // The shop is idle outside the crawl, so all of its CPU time falls in the crawl's window.
    const ours = (result.cpuSec + shopCpuSec) / (cpus().length * result.durationSec);
    const figures: PhaseFigures = {
        durationSec: result.durationSec,
        pages: result.pages,
        pagesPerSec: result.pagesPerSec,
        bytesReceived,
        bytesPerPage: Math.round(bytesReceived / result.pages),
        cpuSec: result.cpuSec,
        cpuMsPerPage: round((result.cpuSec * 1000) / result.pages, 2),
        peakRssMb: result.peakRssMb,
        items: result.items,
        shopCpuSec: round(shopCpuSec, 2),
        othersCpuShare: round(Math.max(0, result.machineCpuBusy - ours), 3),
    };
    return { figures, result };
}

/** The shop's answers by status, over every path. */
function byStatus(stats: ShopStats): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const statuses of Object.values(stats.byPath))
        for (const [status, count] of Object.entries(statuses)) counts[status] = (counts[status] ?? 0) + count;
    return counts;
}

/** A first crawl and its recrawl, each on a fresh shop and storage dir. */
async function runOnce(run: number, products: number, pageWeight: PageWeight, wire: WireBytes): Promise<RecrawlRun> {
    const storageDir = await mkdtemp(join(tmpdir(), 'dragnet-bench-recrawl-'));
    const shop = await startShop({
        ...CLEAN_SHOP,
        pageWeight,
        products,
        latencyMs: 0,
        validators: true,
    });
    try {
        const first = (await crawlPhase(shop.url, storageDir, products, wire)).figures;
        const firstAnswers = byStatus(shop.stats());
        const changes = shop.advance(CHANGES);
        shop.resetStats();
        const { figures: recrawl, result } = await crawlPhase(shop.url, storageDir, products, wire);
        const found = result.dragnet?.recrawl;
        if (!found) throw new Error('the second run was not a recrawl (no `recrawl` in its summary)');
        return {
            run,
            first,
            recrawl,
            found: { items: found.items, unchangedPages: found.unchangedPages },
            shopChanged: { products: changes.changed.length, pages: changes.pages.length },
            answers: { first: firstAnswers, recrawl: byStatus(shop.stats()) },
        };
    } catch (error) {
        return { run, error: error instanceof Error ? error.message : String(error) };
    } finally {
        await shop.close();
        await rm(storageDir, { recursive: true, force: true });
    }
}

/** The median of each figure over the runs that completed. */
function medians<T extends object>(list: readonly T[]): { [K in keyof T]: number | null } {
    const keys = Object.keys(list[0] ?? {}) as Array<keyof T>;
    return Object.fromEntries(keys.map((key) => [key, median(list.map((item) => item[key] as number))])) as {
        [K in keyof T]: number | null;
    };
}

/** The ratio figures of a recrawl over its first crawl. */
const RATIO_FIGURES = ['durationSec', 'pagesPerSec', 'bytesReceived', 'bytesPerPage', 'cpuMsPerPage', 'peakRssMb'];

function ratios(
    recrawl: Record<string, number | null>,
    first: Record<string, number | null>,
): Record<string, number | null> {
    return Object.fromEntries(RATIO_FIGURES.map((figure) => [figure, ratio(recrawl[figure], first[figure])]));
}

function describe(outcome: RecrawlRun): string {
    if ('error' in outcome) return `FAILED (${outcome.error})`;
    const phase = (figures: PhaseFigures) =>
        `${figures.pages} pages in ${figures.durationSec}s, ${figures.pagesPerSec} pages/s, ` +
        `${round(figures.bytesReceived / 2 ** 20)} MB, ${figures.cpuMsPerPage} CPU ms/page`;
    const { items, unchangedPages } = outcome.found;
    return (
        `first ${phase(outcome.first)}; recrawl ${phase(outcome.recrawl)}; ` +
        `items ${items.changed} changed, ${items.unchanged} unchanged, ${items.new} new, ${items.removed} removed; ` +
        `${unchangedPages.notModified} pages 304, ${unchangedPages.identicalPayload} same payload`
    );
}

const mb = (bytes: number | null) => (bytes === null ? null : round(bytes / 2 ** 20));
const kb = (bytes: number | null) => (bytes === null ? null : round(bytes / 1024, 2));

export default defineSuite({
    description:
        `recrawl of a shop with validators where 5% of products changed, against its first crawl ` +
        `(latency 0, concurrency ${CONCURRENCY}): pages/s, bytes received, CPU ms per page`,
    runByDefault: false,
    async run(options, report) {
        const wire = countWireBytes();
        try {
            for (const products of options.products ?? (options.large ? LARGE_PRODUCTS : DEFAULT_PRODUCTS)) {
                const outcomes: RecrawlRun[] = [];
                for (let run = 1; run <= options.runs; run++) {
                    const outcome = await runOnce(run, products, options.pageWeight, wire);
                    outcomes.push(outcome);
                    process.stderr.write(
                        `bench recrawl ${products} products: run ${run}/${options.runs}: ${describe(outcome)}\n`,
                    );
                }
                const done = outcomes.filter(
                    (outcome): outcome is Exclude<RecrawlRun, { error: string }> => !('error' in outcome),
                );
                const first = medians(done.map((outcome) => outcome.first));
                const recrawl = medians(done.map((outcome) => outcome.recrawl));
                const found = {
                    items: medians(done.map((outcome) => outcome.found.items)),
                    unchangedPages: medians(done.map((outcome) => outcome.found.unchangedPages)),
                };
                const recrawlOverFirst = ratios(recrawl, first);
                const failed = outcomes.length - done.length;
                const row = (crawl: string, figures: Record<string, number | null>) => ({
                    products,
                    crawl,
                    pages: figures.pages ?? null,
                    'wall s': figures.durationSec ?? null,
                    'pages/s': figures.pagesPerSec ?? null,
                    'MB received': mb(figures.bytesReceived ?? null),
                    'KB/page': kb(figures.bytesPerPage ?? null),
                    'CPU ms/page': figures.cpuMsPerPage ?? null,
                    'peak RSS MB': figures.peakRssMb ?? null,
                    "others' CPU": figures.othersCpuShare ?? null,
                    'pages 304': null as number | null,
                    'pages same payload': null as number | null,
                    'items changed': null as number | null,
                    'items unchanged': null as number | null,
                    failed: null as number | null,
                });
                report({
                    json: {
                        case: `recrawl-${products}`,
                        products,
                        pageWeight: options.pageWeight,
                        concurrency: CONCURRENCY,
                        latencyMs: 0,
                        validators: true,
                        changes: CHANGES,
                        runs: options.runs,
                        failedRuns: failed,
                        median: { first, recrawl, found },
                        ratios: { 'recrawl/first': recrawlOverFirst },
                        runsDetail: outcomes.map((outcome) =>
                            'error' in outcome
                                ? outcome
                                : { ...outcome, 'recrawl/first': ratios({ ...outcome.recrawl }, { ...outcome.first }) },
                        ),
                    },
                    rows: [
                        { ...row('first', first), failed },
                        {
                            ...row(`recrawl, ${CHANGES.priceChangeRate! * 100}% changed`, recrawl),
                            'pages 304': found.unchangedPages.notModified,
                            'pages same payload': found.unchangedPages.identicalPayload,
                            'items changed': found.items.changed,
                            'items unchanged': found.items.unchanged,
                            failed,
                        },
                        // The closing row: each figure of the recrawl over the first crawl's.
                        {
                            ...row('recrawl/first', {}),
                            'wall s': recrawlOverFirst.durationSec ?? null,
                            'pages/s': recrawlOverFirst.pagesPerSec ?? null,
                            'MB received': recrawlOverFirst.bytesReceived ?? null,
                            'KB/page': recrawlOverFirst.bytesPerPage ?? null,
                            'CPU ms/page': recrawlOverFirst.cpuMsPerPage ?? null,
                            'peak RSS MB': recrawlOverFirst.peakRssMb ?? null,
                        },
                    ],
                });
            }
        } finally {
            wire.stop();
        }
    },
});
