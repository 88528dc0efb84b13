/**
 * Failure as the steady state: the same crawl of a shop where every page answers at the first try,
 * and of one where 5% of product pages fail once — a 503, a reset connection, or no answer until
 * the request timeout — run by dragnet, alternating. The figure is throughput with failures as a
 * share of throughput without: over the steady part of each run (its middle 60% of wall time) and
 * over the whole run, tail of retries included (the run ends only when the last retry is done).
 *
 * Responses take 100 ms and 50 may be in flight, as on a real site: a page that hangs holds its
 * slot for the request timeout (5 s here), a page waiting for its retry holds none.
 */
import { compareCrawlers, summarizeRuns, type RunRecord } from './lib/compare.js';
import { CLEAN_SHOP } from './lib/countingShop.js';
import { crawlers, type Crawler } from './lib/runCrawler.js';
import { ratio } from './lib/stats.js';
import { defineSuite } from './lib/suite.js';

const LATENCY_MS = 100;
const CONCURRENCY = 50;
const REQUEST_TIMEOUT_SECS = 5;
const FAILURE_RATE = 0.05;
const DEFAULT_PRODUCTS = [4_000];
const LARGE_PRODUCTS = [20_000];
const SAMPLE_INTERVAL_MS = 250;

const clean: Crawler = { ...crawlers.dragnet, name: 'no-failures', label: 'dragnet, no failures' };
const failing: Crawler = {
    ...crawlers.dragnet,
    name: 'failures-5pct',
    label: 'dragnet, 5% failing once',
    shopOverrides: { transientFailureRate: FAILURE_RATE, transientFailureKinds: ['503', 'reset', 'hang'] },
};

function timeLimitSec(products: number): number {
    return 60 + Math.ceil(products / 20);
}

const metrics = ({ outcome: { result } }: RunRecord & { outcome: { ok: true } }) => ({
    pagesPerSec: result.pagesPerSec,
    steadyPagesPerSec: result.steadyPagesPerSec,
    durationSec: result.durationSec,
    pages: result.pages,
    items: result.items,
    peakRssMb: result.peakRssMb,
    machineCpuBusy: result.machineCpuBusy,
});
const details = ({ outcome: { result }, othersCpuShare }: RunRecord & { outcome: { ok: true } }) => ({
    finished: result.finished,
    othersCpuShare,
});

export default defineSuite({
    description:
        `${FAILURE_RATE * 100}% of pages failing once (503, reset, hang past ` +
        `a ${REQUEST_TIMEOUT_SECS} s timeout): throughput as a share of the same crawl without failures`,
    runByDefault: false,
    async run(options, report) {
        for (const products of options.products ?? (options.large ? LARGE_PRODUCTS : DEFAULT_PRODUCTS)) {
            const records = await compareCrawlers({
                title: `failures ${products} products`,
                crawlers: [clean, failing],
                runs: options.runs,
                shop: { ...CLEAN_SHOP, pageWeight: options.pageWeight, products, latencyMs: LATENCY_MS },
                crawl: {
                    maxConcurrency: CONCURRENCY,
                    timeLimitSec: timeLimitSec(products),
                    sampleIntervalMs: SAMPLE_INTERVAL_MS,
                    args: ['--request-timeout', String(REQUEST_TIMEOUT_SECS)],
                },
            });
            const results = Object.fromEntries(
                [...records].map(([name, runs]) => [name, summarizeRuns(runs, metrics, details)]),
            );
            const without = results[clean.name]!.median;
            const withFailures = results[failing.name]!.median;
            // Products per second: both runs store every product, and the failing one makes ~5% more requests for them.
            const shares = {
                steady: ratio(withFailures.steadyPagesPerSec, without.steadyPagesPerSec),
                wholeRun: ratio(without.durationSec, withFailures.durationSec),
            };
            report({
                json: {
                    case: `failures-${products}`,
                    products,
                    pageWeight: options.pageWeight,
                    failureRate: FAILURE_RATE,
                    latencyMs: LATENCY_MS,
                    concurrency: CONCURRENCY,
                    requestTimeoutSecs: REQUEST_TIMEOUT_SECS,
                    runs: options.runs,
                    crawlers: results,
                    throughputShare: shares,
                },
                rows: [clean, failing].map((crawler) => {
                    const { median, failedRuns } = results[crawler.name]!;
                    return {
                        products,
                        crawler: crawler.label,
                        'pages/s': median.pagesPerSec,
                        'steady pages/s': median.steadyPagesPerSec,
                        'duration s': median.durationSec,
                        items: median.items,
                        'share (steady)': crawler === failing ? shares.steady : null,
                        'share (whole run)': crawler === failing ? shares.wholeRun : null,
                        failed: failedRuns,
                    };
                }),
            });
        }
    },
});
