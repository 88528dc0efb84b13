/**
 * What a proxy costs: the cpu suite's crawl (latency 0, concurrency 50) run by dragnet direct, through
 * one local proxy, and through two tiers of them (a datacenter tier of 2 proxies, a residential tier
 * of 1), alternating run by run. The proxies are proxy-chain servers asking for credentials, in a
 * process of their own started fresh for each run (lib/proxyProcess.ts), so their CPU is reported
 * apart from dragnet's. Nothing blocks, so every request should stay on the first tier: `two-tiers`
 * shows what the tier controller and a second exit cost on top of the proxy itself.
 *
 * The tiers reach `crawl()` as `--proxy-tier` flags read by the CLI's own options table, so as
 * `proxies: { tiers: [{ name: 'proxy', proxyUrls: ['http://user:pass@127.0.0.1:PORT'] }] }`.
 */
import { compareCrawlers, summarizeRuns, type RunRecord } from './lib/compare.js';
import { CLEAN_SHOP } from './lib/countingShop.js';
import { startProxyProcess } from './lib/proxyProcess.js';
import { crawlers, type Crawler, type Sidecar } from './lib/runCrawler.js';
import { ratio, round } from './lib/stats.js';
import { defineSuite } from './lib/suite.js';

const CONCURRENCY = 50;
const DEFAULT_PRODUCTS = [2_000];
const LARGE_PRODUCTS = [10_000];
const SAMPLE_INTERVAL_MS = 250;

/** `count` fresh proxies for one run, given to dragnet as the tiers `tiersOf` makes of their URLs. */
function proxiesFor(count: number, tiersOf: (urls: string[]) => string[]): () => Promise<Sidecar> {
    return async () => {
        const proxy = await startProxyProcess(count);
        return {
            args: tiersOf(proxy.urls).flatMap((tier) => ['--proxy-tier', tier]),
            report: () => proxy.report(),
            close: () => proxy.close(),
        };
    };
}

const direct: Crawler = { ...crawlers.dragnet, name: 'direct', label: 'dragnet, direct' };
const oneProxy: Crawler = {
    ...crawlers.dragnet,
    name: 'one-proxy',
    label: 'dragnet, 1 proxy',
    sidecar: proxiesFor(1, ([url]) => [`proxy=${url}`]),
};
const twoTiers: Crawler = {
    ...crawlers.dragnet,
    name: 'two-tiers',
    label: 'dragnet, 2+1 proxies in 2 tiers',
    sidecar: proxiesFor(3, ([a, b, c]) => [`datacenter=${a},${b}`, `residential=${c}`]),
};
const cases = [direct, oneProxy, twoTiers];

/** Generous, as in the cpu suite: a crawl slower than 20 pages/s is cut off and reported as unfinished. */
function timeLimitSec(products: number): number {
    return 60 + Math.ceil(products / 20);
}

const perPageMs = (cpuSec: number, pages: number) => (pages > 0 ? round((cpuSec * 1000) / pages, 3) : null);

const metrics = ({ outcome: { result }, sidecar, othersCpuShare }: RunRecord & { outcome: { ok: true } }) => ({
    pagesPerSec: result.pagesPerSec,
    steadyPagesPerSec: result.steadyPagesPerSec,
    durationSec: result.durationSec,
    pages: result.pages,
    items: result.items,
    peakRssMb: result.peakRssMb,
    cpuSec: result.cpuSec,
    cpuMsPerPage: perPageMs(result.cpuSec, result.pages),
    proxyCpuSec: sidecar ? round(sidecar.cpuSec, 2) : null,
    proxyCpuMsPerPage: sidecar ? perPageMs(sidecar.cpuSec, result.pages) : null,
    proxyPeakRssMb: sidecar?.peakRssMb ?? null,
    retried: result.dragnet?.retried ?? null,
    deadLettered: result.dragnet?.deadLettered ?? null,
    othersCpuShare,
});
const details = ({ outcome: { result }, sidecar }: RunRecord & { outcome: { ok: true } }) => ({
    finished: result.finished,
    crawlerPages: result.crawlerPages,
    // What the proxies saw (forwarded, tunnels, refusedAuth, failed)
    // and what dragnet's summary says of its tiers and failures.
    proxy: sidecar ?? null,
    // Responses that did not come through the proxies (robots.txt is fetched directly, tiers or not).
    notThroughProxy: sidecar ? result.pages - sidecar.forwarded! - sidecar.tunnels! : null,
    summary: result.dragnet ?? null,
});

export default defineSuite({
    description:
        `pages/s and CPU per page through local proxies (1 proxy; 2 ` +
        `tiers) against direct, latency 0, concurrency ${CONCURRENCY}`,
    runByDefault: false,
    async run(options, report) {
        for (const products of options.products ?? (options.large ? LARGE_PRODUCTS : DEFAULT_PRODUCTS)) {
            const records = await compareCrawlers({
                title: `proxies ${products} products`,
                crawlers: cases,
                runs: options.runs,
                shop: { ...CLEAN_SHOP, pageWeight: options.pageWeight, products, latencyMs: 0 },
                crawl: {
                    maxConcurrency: CONCURRENCY,
                    timeLimitSec: timeLimitSec(products),
                    sampleIntervalMs: SAMPLE_INTERVAL_MS,
                },
            });
            const results = Object.fromEntries(
                [...records].map(([name, runs]) => [name, summarizeRuns(runs, metrics, details)]),
            );
            const base = results[direct.name]!.median;
            const versusDirect = (name: string) => {
                const median = results[name]!.median;
                return {
                    pagesPerSec: ratio(median.pagesPerSec, base.pagesPerSec),
                    cpuMsPerPage: ratio(median.cpuMsPerPage, base.cpuMsPerPage),
                    peakRssMb: ratio(median.peakRssMb, base.peakRssMb),
                    // dragnet's CPU per page over direct's (difference of medians):
                    // what its proxy layer adds, the proxy's own CPU not included.
                    addedCpuMsPerPage:
                        median.cpuMsPerPage === null || base.cpuMsPerPage === null
                            ? null
                            : round(median.cpuMsPerPage - base.cpuMsPerPage, 3),
                };
            };
            const ratios = Object.fromEntries(
                [oneProxy, twoTiers].map(({ name }) => [`${name}/direct`, versusDirect(name)]),
            );
            report({
                json: {
                    case: `proxies-${products}`,
                    products,
                    pageWeight: options.pageWeight,
                    concurrency: CONCURRENCY,
                    latencyMs: 0,
                    runs: options.runs,
                    crawlers: results,
                    ratios,
                },
                rows: cases.map((crawler) => {
                    const { median, failedRuns } = results[crawler.name]!;
                    const versus = crawler === direct ? undefined : ratios[`${crawler.name}/direct`];
                    return {
                        products,
                        crawler: crawler.label,
                        'pages/s': median.pagesPerSec,
                        'CPU ms/page': median.cpuMsPerPage,
                        'peak RSS MB': median.peakRssMb,
                        'proxy CPU ms/page': median.proxyCpuMsPerPage,
                        'x direct pages/s': versus?.pagesPerSec ?? null,
                        'x direct CPU/page': versus?.cpuMsPerPage ?? null,
                        '+CPU ms/page': versus?.addedCpuMsPerPage ?? null,
                        items: median.items,
                        'dead-lettered': median.deadLettered,
                        "others' CPU": median.othersCpuShare,
                        failed: failedRuns,
                    };
                }),
            });
        }
    },
});
