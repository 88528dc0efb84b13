/**
 * CPU-bound crawl: the shop answers at once (latency 0), so pages/s is what the crawler's own
 * work allows — fetching, parsing, enqueueing, storing — and peak RSS is what that costs.
 * dragnet against plain Crawlee with its default persisted storage and with
 * `persistStorage: false`, Scrapy, and a bare loop that only fetches, parses and follows
 * (crawlers/bareLoop.ts: the floor); ratios are dragnet's median over each baseline's median.
 * dragnet runs on both wire profiles, `fast` (`dragnet`) and, when the machine has a Chromium,
 * `chrome` (`dragnet-chrome`); `ratios["dragnet-chrome/dragnet"]` is what the browser's handshake
 * costs. dragnet's CPU and peak RSS are its process tree's, the Chromium it sends with included
 * (lib/runCrawler.ts, `measuredAsTree`).
 * Each case also measures the parse-only cost of the same pages (lib/parseOnly.ts) after each round of
 * runs, so dragnet's CPU per page can be read as a multiple of the least any scraper must spend on a page.
 * With several sizes (`--large`: 10,000 and 100,000 products), each round runs every size, so the
 * machine's drift over the invocation hits the sizes alike, as it does the crawlers.
 */
import { compareCrawlers, summarizeRuns, type RunRecord } from './lib/compare.js';
import { CLEAN_SHOP } from './lib/countingShop.js';
import { measureParseOnly, medianCost, type ParseOnlyCost } from './lib/parseOnly.js';
import { available, type Crawler, crawlers } from './lib/runCrawler.js';
import { ratio, round } from './lib/stats.js';
import { defineSuite } from './lib/suite.js';

export const CONCURRENCY = 50;
const DEFAULT_PRODUCTS = [2_000];
const LARGE_PRODUCTS = [10_000, 100_000];
const allBaselines = [crawlers.plainCrawlee, crawlers.plainCrawleeMemory, crawlers.scrapy, crawlers.bareLoop];
/**
 * The baselines run up to this size only. Plain Crawlee with its default storage keeps ~300 KB per
 * request in memory (1.8 GB at 10,000 products), so 100,000 would take tens of GB. Scrapy's memory
 * hardly grows (peak RSS 91 MB at 2,000 products, 115 MB at 100,000) but its time does: 100,000
 * took it 19 minutes a run. Larger sizes run dragnet alone, compared with its own figure at the
 * smallest size of the same invocation.
 */
const BASELINE_MAX_PRODUCTS = 10_000;

/** Generous: a crawler slower than 20 pages/s is cut off and reported as unfinished. */
export function timeLimitSec(products: number): number {
    return 60 + Math.ceil(products / 20);
}

const metrics = ({
    outcome: { result },
    shopCpuSec,
    othersCpuShare,
    archiveBytes,
}: RunRecord & { outcome: { ok: true } }) => ({
    pagesPerSec: result.pagesPerSec,
    peakRssMb: result.peakRssMb,
    startRssMb: result.startRssMb,
    durationSec: result.durationSec,
    pages: result.pages,
    items: result.items,
    cpuSec: result.cpuSec,
    // Less sensitive than pages/s to other people's load on a shared machine (but blind to time spent waiting on disk).
    pagesPerCpuSec: round(result.pages / result.cpuSec),
    cpuMsPerPage: round((result.cpuSec * 1000) / result.pages, 2),
    shopCpuSec,
    othersCpuShare,
    // The raw pages dragnet archived (WARC and CDXJ), per page fetched.
    archiveBytesPerPage: archiveBytes ? Math.round(archiveBytes / result.pages) : null,
    // Measured as a process tree (dragnet; null for the others): what the processes it started (its
    // Chromium) took of `cpuSec`, and the tree's peak with shared pages counted once.
    spawnedCpuSec: result.tree?.spawnedCpuSec ?? null,
    peakPssMb: result.tree?.peakPssMb ?? null,
});
const details = ({ outcome: { result } }: RunRecord & { outcome: { ok: true } }) => ({
    crawlerPages: result.crawlerPages,
    finished: result.finished,
    ...(result.pagesCountedBy ? { pagesCountedBy: result.pagesCountedBy } : {}),
    ...(result.tree ? { tree: result.tree } : {}),
});

/** The figures that are a crawler's process tree's when it is measured as one (`measuredAsTree`). */
const TREE_WIDE = ['cpuSec', 'pagesPerCpuSec', 'cpuMsPerPage', 'peakRssMb', 'peakPssMb', 'spawnedCpuSec'];

/** One crawler at one shop size: the suite runs every size in each round, so the machine's drift hits them alike. */
function atSize(crawler: Crawler, products: number): Crawler {
    return {
        ...crawler,
        name: `${crawler.name}-at-${products}`,
        shopOverrides: { ...crawler.shopOverrides, products },
    };
}

export default defineSuite({
    description:
        `CPU-bound (latency 0, concurrency ${CONCURRENCY}): pages/s, ` +
        `CPU per page and peak RSS, dragnet (fast and chrome wire) vs plain Crawlee and Scrapy`,
    runByDefault: true,
    async run(options, report) {
        const sizes = [...(options.products ?? (options.large ? LARGE_PRODUCTS : DEFAULT_PRODUCTS))].sort(
            (a, b) => a - b,
        );
        // dragnet on each wire profile: the same crawl, its requests sent by undici or by Chromium.
        const dragnetProfiles = [crawlers.dragnet, ...available([crawlers.dragnetChrome])];
        const baselinesAt = (products: number) => [
            ...(options.against ? [options.against] : []),
            ...(products <= BASELINE_MAX_PRODUCTS && !options.dragnetOnly ? available(allBaselines) : []),
        ];
        const crawlersAt = (products: number) => [...dragnetProfiles, ...baselinesAt(products)];
        const shopAt = (products: number) => ({
            ...CLEAN_SHOP,
            pageWeight: options.pageWeight,
            products,
            latencyMs: 0,
        });
        const parseOnlyRounds = new Map<number, ParseOnlyCost[]>(sizes.map((products) => [products, []]));
        // Round by round, every size: dragnet at 10,000, the baselines, dragnet at 100,000; then again.
        const records = await compareCrawlers({
            title: `cpu ${sizes.join(' and ')} products`,
            crawlers: sizes.flatMap((products) => crawlersAt(products).map((crawler) => atSize(crawler, products))),
            runs: options.runs,
            shop: shopAt(sizes[0]!),
            crawl: { maxConcurrency: CONCURRENCY, timeLimitSec: timeLimitSec(sizes.at(-1)!), sampleIntervalMs: 250 },
            afterRound: async () => {
                for (const products of sizes)
                    parseOnlyRounds.get(products)!.push(await measureParseOnly(shopAt(products)));
            },
        });
        let smallest: { products: number; pagesPerSec: number | null } | undefined;
        for (const products of sizes) {
            const baselines = baselinesAt(products);
            const results = Object.fromEntries(
                [...dragnetProfiles, ...baselines].map((crawler) => [
                    crawler.name,
                    summarizeRuns(records.get(atSize(crawler, products).name)!, metrics, details),
                ]),
            );
            const rounds = parseOnlyRounds.get(products)!;
            const parseOnly = {
                ...medianCost(rounds),
                measurements: rounds.map((cost) => cost.msPerPage),
                domKeptMeasurements: rounds.map((cost) => cost.domKeptMsPerPage),
            };
            const dragnet = results[crawlers.dragnet.name]!.median;
            smallest ??= { products, pagesPerSec: dragnet.pagesPerSec };
            const first = smallest;
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
            for (const profile of dragnetProfiles.slice(1)) {
                const other = results[profile.name]!.median;
                ratios[`${profile.name}/dragnet`] = {
                    pagesPerSec: ratio(other.pagesPerSec, dragnet.pagesPerSec),
                    cpuMsPerPage: ratio(other.cpuMsPerPage, dragnet.cpuMsPerPage),
                    peakRssMb: ratio(other.peakRssMb, dragnet.peakRssMb),
                    peakPssMb: ratio(other.peakPssMb, dragnet.peakPssMb),
                };
            }
            if (products !== first.products)
                ratios[`dragnet/dragnet-${first.products}`] = {
                    pagesPerSec: ratio(dragnet.pagesPerSec, first.pagesPerSec),
                };
            ratios['dragnet/parse-only'] = {
                cpuMsPerPage: ratio(dragnet.cpuMsPerPage, parseOnly.msPerPage),
                cpuMsPerPageToMedianRound: ratio(dragnet.cpuMsPerPage, parseOnly.medianRoundMsPerPage),
                cpuMsPerPageToDomKept: ratio(dragnet.cpuMsPerPage, parseOnly.domKeptMsPerPage),
            };
            report({
                json: {
                    case: `cpu-${products}`,
                    products,
                    pageWeight: options.pageWeight,
                    concurrency: CONCURRENCY,
                    latencyMs: 0,
                    runs: options.runs,
                    // Whose figures are whose: these crawlers' are their process trees', the others' their own process's.
                    treeWide: {
                        crawlers: ([...dragnetProfiles, ...baselines] as Crawler[])
                            .filter((crawler) => crawler.measuredAsTree)
                            .map((crawler) => crawler.name),
                        figures: TREE_WIDE,
                    },
                    crawlers: results,
                    parseOnly,
                    ratios,
                },
                rows: [...dragnetProfiles, ...baselines].map((crawler) => {
                    const { median, failedRuns } = results[crawler.name]!;
                    // Another wire profile is read against dragnet's fast one, as a baseline is.
                    const versus =
                        crawler === crawlers.dragnet
                            ? undefined
                            : (ratios[`dragnet/${crawler.name}`] ?? {
                                  pagesPerSec: ratio(dragnet.pagesPerSec, median.pagesPerSec),
                                  peakRssMb: ratio(dragnet.peakRssMb, median.peakRssMb),
                              });
                    return {
                        products,
                        crawler: crawler.label,
                        'pages/s': median.pagesPerSec,
                        'CPU ms/page': median.cpuMsPerPage,
                        'x parse-only': ratio(median.cpuMsPerPage, parseOnly.msPerPage),
                        'x DOM-kept parse': ratio(median.cpuMsPerPage, parseOnly.domKeptMsPerPage),
                        'peak RSS MB': median.peakRssMb,
                        // dragnet's trees only: Chromium's processes share most of their pages, which the RSS sum counts in each.
                        'peak PSS MB': median.peakPssMb,
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
