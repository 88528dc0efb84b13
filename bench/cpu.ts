/**
 * CPU-bound crawl: the shop answers at once (latency 0), so pages/s is what the crawler's own
 * work allows — fetching, parsing, enqueueing, storing — and peak RSS is what that costs.
 * dragnet against plain Crawlee with its default persisted storage and with
 * `persistStorage: false`; ratios are dragnet's median over each baseline's median.
 */
import { compareCrawlers, summarizeRuns, type RunRecord } from './lib/compare.js';
import { CLEAN_SHOP } from './lib/countingShop.js';
import { crawlers } from './lib/runCrawler.js';
import { ratio, round } from './lib/stats.js';
import { defineSuite } from './lib/suite.js';

const CONCURRENCY = 50;
const DEFAULT_PRODUCTS = [2_000];
const LARGE_PRODUCTS = [10_000, 100_000];
const allBaselines = [crawlers.plainCrawlee, crawlers.plainCrawleeMemory];
/**
 * Plain Crawlee runs up to this size only: with its default storage it keeps ~300 KB per request in
 * memory (1.8 GB at 10,000 products), so 100,000 would take tens of GB. Larger sizes run dragnet
 * alone, compared with its own figure at the smallest size of the same invocation.
 */
const BASELINE_MAX_PRODUCTS = 10_000;

/** Generous: a crawler slower than 20 pages/s is cut off and reported as unfinished. */
function timeLimitSec(products: number): number {
    return 60 + Math.ceil(products / 20);
}

const metrics = ({ outcome: { result }, shopCpuSec, othersCpuShare }: RunRecord & { outcome: { ok: true } }) => ({
    pagesPerSec: result.pagesPerSec,
    peakRssMb: result.peakRssMb,
    startRssMb: result.startRssMb,
    durationSec: result.durationSec,
    pages: result.pages,
    items: result.items,
    cpuSec: result.cpuSec,
    // Less sensitive than pages/s to other people's load on a shared machine (but blind to time spent waiting on disk).
    pagesPerCpuSec: round(result.pages / result.cpuSec),
    shopCpuSec,
    othersCpuShare,
});
const details = ({ outcome: { result } }: RunRecord & { outcome: { ok: true } }) => ({
    crawlerPages: result.crawlerPages,
    finished: result.finished,
});

export default defineSuite({
    description: `CPU-bound (latency 0, concurrency ${CONCURRENCY}): pages/s and peak RSS, dragnet vs plain Crawlee`,
    runByDefault: true,
    async run(options, report) {
        let smallest: { products: number; pagesPerSec: number | null } | undefined;
        for (const products of [...(options.products ?? (options.large ? LARGE_PRODUCTS : DEFAULT_PRODUCTS))].sort((a, b) => a - b)) {
            const baselines = [...(options.against ? [options.against] : []), ...(products <= BASELINE_MAX_PRODUCTS ? allBaselines : [])];
            const records = await compareCrawlers({
                title: `cpu ${products} products`,
                crawlers: [crawlers.dragnet, ...baselines],
                runs: options.runs,
                shop: { ...CLEAN_SHOP, products, latencyMs: 0 },
                crawl: { maxConcurrency: CONCURRENCY, timeLimitSec: timeLimitSec(products), sampleIntervalMs: 250 },
            });
            const results = Object.fromEntries([...records].map(([name, runs]) => [name, summarizeRuns(runs, metrics, details)]));
            const dragnet = results[crawlers.dragnet.name]!.median;
            const first = (smallest ??= { products, pagesPerSec: dragnet.pagesPerSec });
            const ratios: Record<string, Record<string, number | null>> = Object.fromEntries(
                baselines.map((baseline) => {
                    const plain = results[baseline.name]!.median;
                    return [
                        `dragnet/${baseline.name}`,
                        {
                            pagesPerSec: ratio(dragnet.pagesPerSec, plain.pagesPerSec),
                            pagesPerCpuSec: ratio(dragnet.pagesPerCpuSec, plain.pagesPerCpuSec),
                            peakRssMb: ratio(dragnet.peakRssMb, plain.peakRssMb),
                        },
                    ];
                }),
            );
            if (products !== first.products) ratios[`dragnet/dragnet-${first.products}`] = { pagesPerSec: ratio(dragnet.pagesPerSec, first.pagesPerSec) };
            report({
                json: { case: `cpu-${products}`, products, concurrency: CONCURRENCY, latencyMs: 0, runs: options.runs, crawlers: results, ratios },
                rows: [crawlers.dragnet, ...baselines].map((crawler) => {
                    const { median, failedRuns } = results[crawler.name]!;
                    const versus = crawler === crawlers.dragnet ? undefined : ratios[`dragnet/${crawler.name}`];
                    return {
                        products,
                        crawler: crawler.label,
                        'pages/s': median.pagesPerSec,
                        'pages/CPU-s': median.pagesPerCpuSec,
                        'peak RSS MB': median.peakRssMb,
                        'at start MB': median.startRssMb,
                        items: median.items,
                        'dragnet/this pages/s': versus?.pagesPerSec ?? null,
                        'dragnet/this RSS': versus?.peakRssMb ?? null,
                        "others' CPU": median.othersCpuShare,
                        failed: failedRuns,
                    };
                }),
            });
        }
    },
});

