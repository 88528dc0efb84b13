/**
 * The seed's own crawl (issue 53): a category of 20,000 listing pages of 20 products each, 400,000
 * product pages, every response 2.5 s (±10%), 1% of product pages failing once (a 503, a reset
 * connection, or no answer at all), on real-weight pages. Sequentially that is 11.5 days; the
 * question is how far in parallel collapses it, and what it costs. `--scale 0.1` runs a tenth
 * (40,000 products, 2,000 listings).
 *
 * The crawl is given the 20,000 listing URLs up front, as a user who knows the page-number pattern
 * gives them (discovered one `next` hop at a time, 2.5 s a hop would set the floor, not the
 * crawler). dragnet runs with the width it chooses itself (no `--max-concurrency`; `--max-concurrency
 * N` sets a ceiling, for debugging); up to `--scale 0.1` (or with `--baselines`) Scrapy and plain
 * Crawlee then run the same crawl at the width dragnet used (its steady median in flight at the
 * shop): Scrapy's CONCURRENT_REQUESTS and CONCURRENT_REQUESTS_PER_DOMAIN (AutoThrottle off),
 * Crawlee's maxConcurrency. Each keeps its own defaults otherwise, as a user would: a page that hangs
 * holds a slot for Scrapy's DOWNLOAD_TIMEOUT (180 s), Crawlee's navigation timeout (30 s) or
 * dragnet's request timeout, and the tail of the run waits for the last of them.
 *
 * The shop runs in a process of its own (lib/seedRun.ts): its CPU per request and its busiest 5 s
 * (share of one core) say whether it, not the crawler, was the limit. Products lost: the shop's
 * products minus the distinct SKUs in the crawler's stored items (goal 0); duplicates are counted
 * apart. Memory per request in flight: (peak RSS − RSS at start) / most requests in flight.
 * A run cut by its time limit says `finished: false` and has no lost count.
 */
import { cpus } from 'node:os';
import { summarizeRuns, type RunRecord } from './lib/compare.js';
import { CLEAN_SHOP } from './lib/countingShop.js';
import { available, crawlers, type Crawler } from './lib/runCrawler.js';
import { runSeed, type SeedRun } from './lib/seedRun.js';
import { ratio, round, seriesSummary } from './lib/stats.js';
import { defineSuite } from './lib/suite.js';

const FULL_PRODUCTS = 400_000;
const PRODUCTS_PER_PAGE = 20;
/** 400 products a category: 20 listing pages each, 1,000 categories at full scale. */
const PRODUCTS_PER_CATEGORY = 400;
const LATENCY_MS = 2_500;
const LATENCY_JITTER = 0.1;
const FAILURE_RATE = 0.01;
/** The crawler's in-flight and tree samples; the shop samples its own every 250 ms. */
const SAMPLE_INTERVAL_MS = 1_000;
/** Scrapy and plain Crawlee run beside dragnet up to this scale; above it they would take hours. */
const BASELINES_UP_TO_SCALE = 0.1;
/** dragnet's width when it chose none higher (its default ceiling before issue 53): for the time limit only. */
const LOWEST_EXPECTED_WIDTH = 20;
const TIME_LIMIT_WIDTH_CAP = 100;
/**
 * A baseline is cut at this many times dragnet's wall time (at least 10 minutes): cut there, it took
 * more than four times as long whatever it would have needed, which is what the comparison asks,
 * and a slow baseline does not hold the bench for the better part of an hour.
 */
const BASELINE_CUT_RATIO = 5;
/** The in-flight series kept in the result: one value per this many shop samples (250 ms each), 5 s. */
const SERIES_EVERY = 20;

/**
 * A crawler's time limit: twice the time `width` in flight would take, never counting on more than
 * `TIME_LIMIT_WIDTH_CAP` (a crawler that ramps up slowly, as Crawlee's autoscaled pool does, is
 * given the time to), plus 10 minutes (start, hangs, the tail of retries). Generous on purpose:
 * a run cut by it says `finished: false`.
 */
function timeLimitSec(pages: number, width: number): number {
    return 600 + Math.ceil((2 * pages * LATENCY_MS) / 1000 / Math.min(width, TIME_LIMIT_WIDTH_CAP));
}

type SeedRecord = RunRecord & SeedRun;
type Ok = SeedRecord & { outcome: { ok: true } };

const metrics = ({ outcome: { result }, shop, stored, shopInflightSamples }: Ok) => {
    const inflight = seriesSummary(shopInflightSamples);
    return {
        durationSec: result.durationSec,
        pagesPerSec: result.pagesPerSec,
        steadyPagesPerSec: result.steadyPagesPerSec,
        inflightMedian: inflight.steadyMedian,
        inflightMax: inflight.max,
        pages: result.pages,
        cpuMsPerPage: result.pages > 0 ? round((result.cpuSec * 1000) / result.pages, 2) : null,
        peakRssMb: result.peakRssMb,
        startRssMb: result.startRssMb,
        kbPerInflight: inflight.max ? Math.round(((result.peakRssMb - result.startRssMb) * 1024) / inflight.max) : null,
        retried: result.dragnet?.retried ?? null,
        deadLettered: result.dragnet?.deadLettered ?? null,
        items: stored?.items ?? null,
        distinctProducts: stored?.distinct ?? null,
        duplicates: stored ? stored.items - stored.distinct : null,
        lostProducts: stored ? shop.products - stored.distinct : null,
        shopRequests: shop.requests,
        shopCpuMsPerRequest: shop.requests > 0 ? round((shop.cpuSec * 1000) / shop.requests, 3) : null,
        shopPeakCoreShare: shop.peakCoreShare,
        machineCpuBusy: result.machineCpuBusy,
        threadBusy: result.threadBusy,
    };
};
const details = ({ outcome: { result }, othersCpuShare, shopInflightSamples }: Ok) => ({
    finished: result.finished,
    othersCpuShare,
    ...(result.dragnet
        ? { deadLetterByReason: result.dragnet.deadLetterByReason, errorsByClass: result.dragnet.errorsByClass }
        : {}),
    tree: result.tree,
    inflightEvery5s: shopInflightSamples.filter((_, i) => i % SERIES_EVERY === 0),
});

/** A run as the comparison's other suites keep it, with the seed's shop report and stored products. */
function recordOf(run: number, seed: SeedRun): SeedRecord {
    const { outcome, shop } = seed;
    const othersCpuShare = outcome.ok
        ? round(
              Math.max(
                  0,
                  outcome.result.machineCpuBusy -
                      (outcome.result.cpuSec + shop.cpuSec) / (cpus().length * outcome.result.durationSec),
              ),
              3,
          )
        : null;
    return {
        run,
        ...seed,
        shopInflightSamples: shop.inflightSamples,
        shopCpuSec: round(shop.cpuSec, 2),
        othersCpuShare,
    };
}

function describe(name: string, { outcome, shop, stored }: SeedRun): string {
    if (!outcome.ok) return `${name} FAILED (${outcome.error})`;
    const r = outcome.result;
    const inflight = seriesSummary(shop.inflightSamples);
    return (
        `${name}: ${r.pages} pages in ${r.durationSec}s, ${r.pagesPerSec} pages/s, in flight ` +
        `${inflight.steadyMedian} (max ${inflight.max}), ${r.peakRssMb} MB, ` +
        `lost ${stored ? shop.products - stored.distinct : '?'}, ` +
        `shop ${round((shop.cpuSec * 1000) / Math.max(1, shop.requests), 2)} CPU ms/request` +
        `${r.finished ? '' : ' (cut at the time limit)'}`
    );
}

export default defineSuite({
    description:
        `the seed's crawl: 400,000 products on 20,000 listing pages, ${LATENCY_MS} ms responses ` +
        `(±${LATENCY_JITTER * 100}%), ${FAILURE_RATE * 100}% failing once; dragnet at its own width ` +
        `(--scale 0.1: beside Scrapy and plain Crawlee at that width)`,
    runByDefault: false,
    defaultRuns: 1,
    variant: (options) => (options.scale === 1 ? undefined : String(options.scale)),
    async run(options, report) {
        const products = Math.round(FULL_PRODUCTS * options.scale);
        const categories = Math.max(1, Math.round(products / PRODUCTS_PER_CATEGORY));
        const pages = products + Math.ceil(products / PRODUCTS_PER_PAGE);
        const withBaselines = !options.dragnetOnly && (options.scale <= BASELINES_UP_TO_SCALE || options.baselines);
        const baselines = withBaselines ? available<Crawler>([crawlers.scrapy, crawlers.plainCrawlee]) : [];
        const shop = {
            ...CLEAN_SHOP,
            pageWeight: options.pageWeight,
            products,
            categories,
            productsPerPage: PRODUCTS_PER_PAGE,
            latencyMs: LATENCY_MS,
            latencyJitter: LATENCY_JITTER,
            transientFailureRate: FAILURE_RATE,
            transientFailureKinds: ['503', 'reset', 'hang'] as const,
        };
        const records = new Map<string, SeedRecord[]>(
            [crawlers.dragnet, ...baselines].map((crawler) => [crawler.name, []]),
        );
        const widths: number[] = [];
        const progress = (line: string) => process.stderr.write(`bench seed ${products} products: ${line}\n`);
        for (let run = 1; run <= options.runs; run++) {
            const dragnetLimit = timeLimitSec(pages, options.maxConcurrency ?? LOWEST_EXPECTED_WIDTH);
            const dragnet = await runSeed(crawlers.dragnet, shop, {
                ...(options.maxConcurrency === undefined ? {} : { maxConcurrency: options.maxConcurrency }),
                timeLimitSec: dragnetLimit,
                sampleIntervalMs: SAMPLE_INTERVAL_MS,
            });
            records.get(crawlers.dragnet.name)!.push(recordOf(run, dragnet));
            progress(`run ${run}/${options.runs}: ${describe('dragnet', dragnet)}`);
            const width = seriesSummary(dragnet.shop.inflightSamples).steadyMedian;
            if (!dragnet.outcome.ok || width === null || width < 1) continue;
            widths.push(Math.round(width));
            const cutAtSec = Math.max(600, Math.ceil(BASELINE_CUT_RATIO * dragnet.outcome.result.durationSec));
            for (const crawler of baselines) {
                const seed = await runSeed(crawler, shop, {
                    maxConcurrency: Math.round(width),
                    timeLimitSec: Math.min(cutAtSec, timeLimitSec(pages, Math.round(width))),
                    sampleIntervalMs: SAMPLE_INTERVAL_MS,
                });
                records.get(crawler.name)!.push(recordOf(run, seed));
                progress(`run ${run}/${options.runs}: ${describe(crawler.name, seed)}`);
            }
        }
        const results = Object.fromEntries(
            [...records].map(([name, runs]) => [
                name,
                summarizeRuns<keyof ReturnType<typeof metrics>, SeedRecord>(runs, metrics, details),
            ]),
        );
        const dragnetWall = results[crawlers.dragnet.name]!.median.durationSec;
        const ratios = Object.fromEntries(
            baselines.map((crawler) => [
                `dragnet/${crawler.name}`,
                { durationSec: ratio(dragnetWall, results[crawler.name]!.median.durationSec) },
            ]),
        );
        const unfinished = (name: string) =>
            results[name]!.runs.filter((run) => 'finished' in run && run.finished === false).length;
        report({
            json: {
                case: `seed-${products}`,
                scale: options.scale,
                products,
                listingPages: pages - products,
                categories,
                pageWeight: options.pageWeight,
                latencyMs: LATENCY_MS,
                latencyJitter: LATENCY_JITTER,
                failureRate: FAILURE_RATE,
                dragnetMaxConcurrency: options.maxConcurrency ?? null,
                baselineWidths: widths,
                runs: options.runs,
                crawlers: results,
                ratios,
            },
            rows: [crawlers.dragnet, ...baselines].map((crawler) => {
                const { median, failedRuns } = results[crawler.name]!;
                return {
                    products,
                    crawler: crawler.label,
                    width: crawler === crawlers.dragnet ? (options.maxConcurrency ?? 'own') : (widths[0] ?? null),
                    'wall s': median.durationSec,
                    'pages/s': median.pagesPerSec,
                    'in flight (median)': median.inflightMedian,
                    'in flight (max)': median.inflightMax,
                    'CPU ms/page': median.cpuMsPerPage,
                    'peak RSS MB': median.peakRssMb,
                    'KB/in flight': median.kbPerInflight,
                    retried: median.retried,
                    lost: median.lostProducts,
                    'shop CPU ms/req': median.shopCpuMsPerRequest,
                    'shop peak core': median.shopPeakCoreShare,
                    'dragnet/this wall':
                        crawler === crawlers.dragnet ? null : ratios[`dragnet/${crawler.name}`]!.durationSec,
                    unfinished: unfinished(crawler.name),
                    failed: failedRuns,
                };
            }),
        });
    },
});
