/**
 * What each of dragnet's stand-ins in vendor/ still saves, under this Node and under Node's current
 * LTS (package.json `config.ltsNode`, run with better-sqlite3 built for it: test/lts/ltsNode.ts).
 * The crawl is the cpu suite's, dragnet's alone: the real-weight shop at latency 0, concurrency 50,
 * 2,000 products by default (`--products N`, one size; `--large`: 10,000). Under each Node, dragnet
 * with every stand-in runs against dragnet with one stand-in put back to the package it stands in
 * for (crawlers/asPublished.cjs with `AS_PUBLISHED=<its folder>`), one variant per folder of
 * vendor/. The variants of both Nodes alternate run by run, each round starting one variant further
 * on: a variant that always ran first measured a few percent cheaper. A stand-in's saving is the
 * ratio of medians, every stand-in over that one published: below 1, CPU ms/page or peak RSS is what
 * the stand-in still saves. Each round's own ratio is kept too, its two runs a minute apart at most:
 * their median and range read a saving against the machine's drift and spread.
 */
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { provisionLtsNode } from '../test/lts/ltsNode.js';
import { CONCURRENCY, timeLimitSec } from './cpu.js';
import { asPublishedOnly } from './lib/asPublished.js';
import { compareCrawlers, type RunRecord, type RunsSummary, summarizeRuns } from './lib/compare.js';
import { CLEAN_SHOP } from './lib/countingShop.js';
import { type Crawler, crawlers } from './lib/runCrawler.js';
import { median, ratio, round } from './lib/stats.js';
import { defineSuite } from './lib/suite.js';

const DEFAULT_PRODUCTS = 2_000;
const LARGE_PRODUCTS = 10_000;

/** The stand-ins: the folders of vendor/ (crawlers/asPublished.cjs knows the package each stands in for). */
function standIns(): string[] {
    const vendor = fileURLToPath(new URL('../vendor/', import.meta.url));
    return readdirSync(vendor, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name)
        .sort();
}

interface NodeUnderTest {
    /** As `process.version` gives it: `v20.20.2`. */
    version: string;
    /** The `node` binary. */
    node: string;
    /** Variables its children need. */
    env: NodeJS.ProcessEnv;
}

/** This process's Node and the LTS; the LTS alone when this is it. */
async function nodesUnderTest(): Promise<NodeUnderTest[]> {
    const lts = await provisionLtsNode();
    const ltsNode = { version: `v${lts.version}`, node: lts.node, env: lts.env };
    if (ltsNode.version === process.version) return [ltsNode];
    return [{ version: process.version, node: process.execPath, env: {} }, ltsNode];
}

/** dragnet under a Node with every stand-in, or with `standIn` put back to its published package. */
function variant(under: NodeUnderTest, standIn?: string): Crawler {
    const all = { ...crawlers.dragnet, name: `dragnet-${under.version}`, label: 'every stand-in', node: under.node };
    if (standIn === undefined) return { ...all, env: under.env };
    const { nodeFlags, env } = asPublishedOnly(standIn);
    return {
        ...all,
        name: `${all.name}-published-${standIn}`,
        label: `${standIn} published`,
        nodeFlags,
        env: { ...under.env, ...env },
    };
}

type Metric = 'cpuMsPerPage' | 'peakRssMb' | 'pagesPerSec' | 'pages' | 'items' | 'cpuSec' | 'othersCpuShare';

const metrics = ({ outcome: { result }, othersCpuShare }: RunRecord & { outcome: { ok: true } }) => ({
    cpuMsPerPage: round((result.cpuSec * 1000) / result.pages, 2),
    peakRssMb: result.peakRssMb,
    pagesPerSec: result.pagesPerSec,
    pages: result.pages,
    items: result.items,
    cpuSec: result.cpuSec,
    othersCpuShare,
});
const details = ({ outcome: { result } }: RunRecord & { outcome: { ok: true } }) => ({ finished: result.finished });

/** The values of `metric` over the runs that finished, in run order. */
function values(summary: RunsSummary<Metric>, metric: Metric): number[] {
    return summary.runs.flatMap((run) => ('error' in run || run[metric] === null ? [] : [run[metric]]));
}

/** Each round's ratio of `metric`, every stand-in over one published, where both of the round's runs finished. */
function roundRatios(all: RunsSummary<Metric>, published: RunsSummary<Metric>, metric: Metric): number[] {
    return all.runs.flatMap((run) => {
        const other = published.runs.find((candidate) => candidate.run === run.run);
        if ('error' in run || other === undefined || 'error' in other) return [];
        const value = ratio(run[metric], other[metric]);
        return value === null ? [] : [value];
    });
}

/** `min–max`, or null when there is nothing. */
function range(list: readonly number[]): string | null {
    return list.length === 0 ? null : `${Math.min(...list)}–${Math.max(...list)}`;
}

/** `median (min–max)`, or null when there is nothing. */
function spread(list: readonly number[]): string | null {
    return list.length === 0 ? null : `${round(median(list)!, 3)} (${range(list)})`;
}

export default defineSuite({
    description: `what each stand-in in vendor/ still saves (CPU per page, peak RSS), under this Node and the LTS`,
    runByDefault: false,
    async run(options, report) {
        const sizes = options.products ?? [options.large ? LARGE_PRODUCTS : DEFAULT_PRODUCTS];
        if (sizes.length !== 1) throw new Error('the vendor suite runs one size: give --products N');
        const products = sizes[0]!;
        const nodes = await nodesUnderTest();
        const names = standIns();
        const variantsOf = (under: NodeUnderTest) => [
            variant(under),
            ...names.map((standIn) => variant(under, standIn)),
        ];
        const records = await compareCrawlers({
            title: `vendor ${products} products`,
            crawlers: nodes.flatMap(variantsOf),
            runs: options.runs,
            shop: { ...CLEAN_SHOP, pageWeight: options.pageWeight, products, latencyMs: 0 },
            crawl: { maxConcurrency: CONCURRENCY, timeLimitSec: timeLimitSec(products), sampleIntervalMs: 250 },
            rotate: true,
        });
        for (const under of nodes) {
            const summaryOf = (crawler: Crawler) => summarizeRuns(records.get(crawler.name)!, metrics, details);
            const all = summaryOf(variant(under));
            const published = Object.fromEntries(names.map((standIn) => [standIn, summaryOf(variant(under, standIn))]));
            const savings = Object.fromEntries(
                names.map((standIn) => {
                    const other = published[standIn]!;
                    return [
                        standIn,
                        {
                            cpuMsPerPage: ratio(all.median.cpuMsPerPage, other.median.cpuMsPerPage),
                            peakRssMb: ratio(all.median.peakRssMb, other.median.peakRssMb),
                            pagesPerSec: ratio(all.median.pagesPerSec, other.median.pagesPerSec),
                            cpuMsPerPageByRound: roundRatios(all, other, 'cpuMsPerPage'),
                            peakRssMbByRound: roundRatios(all, other, 'peakRssMb'),
                        },
                    ];
                }),
            );
            const row = (label: string, summary: RunsSummary<Metric>, standIn?: string) => {
                const saving = standIn === undefined ? undefined : savings[standIn]!;
                return {
                    node: under.version,
                    dragnet: label,
                    'pages/s': summary.median.pagesPerSec,
                    'CPU ms/page': summary.median.cpuMsPerPage,
                    'CPU runs': range(values(summary, 'cpuMsPerPage')),
                    'peak RSS MB': summary.median.peakRssMb,
                    'RSS runs': range(values(summary, 'peakRssMb')),
                    'stand-in/published CPU': saving?.cpuMsPerPage ?? null,
                    'CPU per round': spread(saving?.cpuMsPerPageByRound ?? []),
                    'stand-in/published RSS': saving?.peakRssMb ?? null,
                    'RSS per round': spread(saving?.peakRssMbByRound ?? []),
                    "others' CPU": summary.median.othersCpuShare,
                    failed: summary.failedRuns,
                };
            };
            report({
                json: {
                    case: `vendor-${under.version}`,
                    node: under.version,
                    products,
                    pageWeight: options.pageWeight,
                    concurrency: CONCURRENCY,
                    latencyMs: 0,
                    runs: options.runs,
                    crawlers: {
                        [variant(under).name]: all,
                        ...Object.fromEntries(
                            names.map((standIn) => [variant(under, standIn).name, published[standIn]]),
                        ),
                    },
                    savings,
                },
                rows: [
                    row('every stand-in', all),
                    ...names.map((standIn) => row(`${standIn} published`, published[standIn]!, standIn)),
                ],
            });
        }
    },
});
