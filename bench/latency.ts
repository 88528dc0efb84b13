/**
 * Latency-bound crawl: every response takes 200 ms and the crawlers may keep 200 requests in
 * flight, so the ideal is 200 / 0.2 s = 1,000 pages/s and the question is how close each gets —
 * whether it really keeps ~200 requests open, and then whether its CPU keeps up with the answers
 * (on real-weight pages no crawler here reaches the ideal on 2 cores). Measured over the steady part of each
 * run (its middle 60% of wall time) as a share of the ideal, with the in-flight count sampled
 * every 250 ms at the shop (see lib/countingShop.ts) and, as a cross-check, at each crawler's
 * HTTP client; for plain Crawlee also its autoscaled pool's current and desired concurrency.
 */
import { compareCrawlers, summarizeRuns, type RunRecord } from './lib/compare.js';
import { CLEAN_SHOP } from './lib/countingShop.js';
import { available, crawlers } from './lib/runCrawler.js';
import { ratio, seriesSummary } from './lib/stats.js';
import { defineSuite } from './lib/suite.js';

const LATENCY_MS = 200;
const CONCURRENCY = 200;
const IDEAL_PAGES_PER_SEC = CONCURRENCY / (LATENCY_MS / 1000);
/** 8,000 products are ~8,400 pages: 8.4 s at the ideal rate, ~25 s at dragnet's on real-weight pages. */
const DEFAULT_PRODUCTS = [8_000];
const LARGE_PRODUCTS = [40_000];
/**
 * Categories are chains of listing pages joined by `next` links, one hop per 200 ms; with 200
 * products a category, a chain is 10 pages (2 s), so discovery never holds a crawler back.
 */
const PRODUCTS_PER_CATEGORY = 200;
const SAMPLE_INTERVAL_MS = 250;

/**
 * A crawler far below the ideal would take many minutes to finish; its steady rate shows after
 * a few seconds, so each run stops at 1.5x the ideal duration (at least 20 s) and is measured
 * over the middle 60% of the time it ran.
 */
function timeLimitSec(products: number): number {
    return Math.max(20, Math.ceil((1.5 * products) / IDEAL_PAGES_PER_SEC));
}

const metrics = ({
    outcome: { result },
    shopInflightSamples,
    othersCpuShare,
}: RunRecord & { outcome: { ok: true } }) => {
    const shop = seriesSummary(shopInflightSamples);
    const client = seriesSummary(result.inflightSamples ?? []);
    const pool = result.poolConcurrencySamples ? seriesSummary(result.poolConcurrencySamples) : undefined;
    return {
        steadyPagesPerSec: result.steadyPagesPerSec,
        shareOfIdeal: ratio(result.steadyPagesPerSec, IDEAL_PAGES_PER_SEC),
        inflightMedian: shop.steadyMedian,
        inflightMax: shop.max,
        clientInflightMedian: client.steadyMedian,
        clientInflightMax: client.max,
        poolConcurrencyMedian: pool?.steadyMedian ?? null,
        poolConcurrencyMax: pool?.max ?? null,
        pagesPerSec: result.pagesPerSec,
        durationSec: result.durationSec,
        pages: result.pages,
        peakRssMb: result.peakRssMb,
        machineCpuBusy: result.machineCpuBusy,
        threadBusy: result.threadBusy,
        othersCpuShare,
    };
};
const details = ({ outcome: { result }, shopInflightSamples }: RunRecord & { outcome: { ok: true } }) => ({
    finished: result.finished,
    items: result.items,
    inflightSamples: shopInflightSamples,
    clientInflightSamples: result.inflightSamples,
    ...(result.poolConcurrencySamples ? { poolConcurrencySamples: result.poolConcurrencySamples } : {}),
    ...(result.poolDesiredSamples ? { poolDesiredSamples: result.poolDesiredSamples } : {}),
});

export default defineSuite({
    description:
        `latency-bound (${LATENCY_MS} ms responses, concurrency ${CONCURRENCY}): ` +
        `steady pages/s as a share of ${IDEAL_PAGES_PER_SEC}/s, in-flight count`,
    runByDefault: true,
    async run(options, report) {
        const compared = available([
            crawlers.dragnet,
            ...(options.against ? [options.against] : []),
            ...(options.dragnetOnly ? [] : [crawlers.plainCrawlee, crawlers.scrapy]),
        ]);
        for (const products of options.products ?? (options.large ? LARGE_PRODUCTS : DEFAULT_PRODUCTS)) {
            const categories = Math.max(1, Math.round(products / PRODUCTS_PER_CATEGORY));
            const limit = timeLimitSec(products);
            const records = await compareCrawlers({
                title: `latency ${products} products`,
                crawlers: compared,
                runs: options.runs,
                shop: { ...CLEAN_SHOP, pageWeight: options.pageWeight, products, categories, latencyMs: LATENCY_MS },
                crawl: { maxConcurrency: CONCURRENCY, timeLimitSec: limit, sampleIntervalMs: SAMPLE_INTERVAL_MS },
            });
            const results = Object.fromEntries(
                [...records].map(([name, runs]) => [name, summarizeRuns(runs, metrics, details)]),
            );
            const dragnet = results[crawlers.dragnet.name]!.median;
            const ratios = Object.fromEntries(
                compared
                    .filter((crawler) => crawler !== crawlers.dragnet)
                    .map((crawler) => [
                        `dragnet/${crawler.name}`,
                        {
                            steadyPagesPerSec: ratio(
                                dragnet.steadyPagesPerSec,
                                results[crawler.name]!.median.steadyPagesPerSec,
                            ),
                        },
                    ]),
            );
            report({
                json: {
                    case: `latency-${products}`,
                    products,
                    pageWeight: options.pageWeight,
                    categories,
                    latencyMs: LATENCY_MS,
                    concurrency: CONCURRENCY,
                    idealPagesPerSec: IDEAL_PAGES_PER_SEC,
                    timeLimitSec: limit,
                    sampleIntervalMs: SAMPLE_INTERVAL_MS,
                    runs: options.runs,
                    crawlers: results,
                    ratios,
                },
                rows: compared.map((crawler) => {
                    const { median, failedRuns } = results[crawler.name]!;
                    return {
                        products,
                        crawler: crawler.label,
                        'steady pages/s': median.steadyPagesPerSec,
                        'of ideal': median.shareOfIdeal,
                        'dragnet/this':
                            crawler === crawlers.dragnet ? null : ratios[`dragnet/${crawler.name}`]!.steadyPagesPerSec,
                        'in flight (median)': median.inflightMedian,
                        'in flight (max)': median.inflightMax,
                        'pool (median)': median.poolConcurrencyMedian,
                        'peak RSS MB': median.peakRssMb,
                        'machine busy': median.machineCpuBusy,
                        'thread busy': median.threadBusy,
                        "others' CPU": median.othersCpuShare,
                        failed: failedRuns,
                    };
                }),
            });
        }
    },
});
