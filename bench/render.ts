/**
 * Rendering only when needed (issue 5): dragnet crawls the fixture shop with Chromium, and the
 * figures say whether the browser got exactly the pages that needed it, what the cheap path and
 * the browser each cost, and what a route whose every page needs the browser still wastes on
 * cheap fetches once it has learned. Two cases:
 *
 * - `mixed`: 20% of product pages fill in title and price by script (1,000 products by default);
 * - `always`: every product page does (a fifth as many products, so as many renders).
 *
 * Each run is a fresh shop (same seed) in this process and a fresh crawler child
 * (crawlers/dragnetRender.ts) whose process tree — Node and every Chromium process under it —
 * is sampled from /proc every 250 ms. Figures per run and medians over runs; how each is taken
 * is in docs/benchmarks.md ("render").
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CRAWL_DEFAULTS } from '../src/options/crawlOptions.js';
import { browserPages } from '../src/fetch/browser/browserConcurrency.js';
import { startShop, type ShopOptions } from '../src/demo/shop.js';
import type { RenderCase, RenderResult } from './crawlers/dragnetRender.js';
import { machineTicks } from './crawlers/measure.js';
import { runPlainRender, type VersusFigures, versusFigures } from './lib/plainRender.js';
import { runRenderChild } from './lib/renderChild.js';
import { renderFigures, type RenderFigures } from './lib/renderFigures.js';
import { median, ratio, round } from './lib/stats.js';
import { defineSuite } from './lib/suite.js';

const DEFAULT_PRODUCTS = [1_000];
const LARGE_PRODUCTS = [5_000];
const SAMPLE_INTERVAL_MS = 250;
/**
 * RenderLearner's default `minSamples` (src/fetch/browser/renderLearning.ts), given to the crawl
 * explicitly so that "cheap fetches after learning" is counted from the moment the crawl could
 * decide, even if the default changes.
 */
const LEARNING_MIN_SAMPLES = 20;
const childScript = fileURLToPath(new URL('./crawlers/dragnetRender.ts', import.meta.url));

interface RenderBenchCase {
    name: 'mixed' | 'always';
    shop: ShopOptions & { products: number; scriptOnlyRate: number };
}

function casesFor(products: number): RenderBenchCase[] {
    // Nothing fails and there are no dead links: every second request of a product path is the browser's.
    const clean = { seed: 1, transientFailureRate: 0, notFoundLinks: 0 };
    return [
        { name: 'mixed', shop: { ...clean, products, scriptOnlyRate: 0.2 } },
        { name: 'always', shop: { ...clean, products: Math.max(100, Math.round(products / 5)), scriptOnlyRate: 1 } },
    ];
}

type RunOutcome =
    | { run: number; figures: RenderFigures; versus: VersusFigures; othersCpuShare: number }
    | { run: number; error: string };

async function runOnce(benchCase: RenderBenchCase, run: number): Promise<RunOutcome> {
    const shop = await startShop(benchCase.shop);
    const storageDir = await mkdtemp(join(tmpdir(), 'dragnet-bench-render-'));
    const renderCase: RenderCase = {
        shopUrl: shop.url,
        storageDir,
        maxConcurrency: CRAWL_DEFAULTS.foundConcurrency.start,
        renderLearning: { minSamples: LEARNING_MIN_SAMPLES },
    };
    try {
        const machineBefore = machineTicks();
        const ownBefore = process.cpuUsage();
        const outcome = await runRenderChild<RenderResult>({
            script: childScript,
            renderCase,
            storageDir,
            // Generous: ~1 render/s would be far below what this machine does.
            limitSec: 120 + benchCase.shop.products * benchCase.shop.scriptOnlyRate * 1.5,
            sampleIntervalMs: SAMPLE_INTERVAL_MS,
        });
        if ('error' in outcome) return { run, error: outcome.error };
        const { result, samples } = outcome;
        const figures = renderFigures({
            result,
            truth: shop.products,
            shopStats: shop.stats(),
            shopHost: new URL(shop.url).host,
            samples,
            learningMinSamples: LEARNING_MIN_SAMPLES,
        });

        // Others' share of the machine during the crawl: everything busy that was
        // neither the crawler's tree nor this process (the shop, the sampler).
        const machine = machineTicks();
        const own = process.cpuUsage(ownBefore);
        const tree = Object.values(samples.at(-1)?.cpuSecByGroup ?? {}).reduce((sum, sec) => sum + sec, 0);
        const wallSec = (samples.at(-1)!.atMs - samples[0]!.atMs) / 1000;
        const busy = 1 - (machine.idle - machineBefore.idle) / (machine.total - machineBefore.total || 1);
        const ours = (tree + (own.user + own.system) / 1e6) / (cpus().length * wallSec);
        const versus = versusFigures({ items: figures.itemsStored, durationSec: figures.durationSec, samples });
        return { run, figures, versus, othersCpuShare: round(Math.max(0, busy - ours), 3) };
    } finally {
        await shop.close();
        await rm(storageDir, { recursive: true, force: true });
    }
}

/** Median of every numeric figure over the runs that finished. */
function medians<T extends object>(runs: T[]): Record<string, number | null> {
    const names = Object.keys(runs[0] ?? {}).filter((name) => runs.some((r) => typeof r[name as keyof T] === 'number'));
    return Object.fromEntries(
        names.map((name) => [
            name,
            median(runs.map((r) => r[name as keyof T]).filter((v): v is number & T[keyof T] => typeof v === 'number')),
        ]),
    );
}

export default defineSuite({
    description:
        'Chromium on the fixture shop, 20% and 100% script-only product pages: render precision/recall, ' +
        'cost per page, peak RSS; the 100% case against plain Crawlee PlaywrightCrawler',
    runByDefault: false,
    async run(options, report) {
        for (const products of options.products ?? (options.large ? LARGE_PRODUCTS : DEFAULT_PRODUCTS)) {
            for (const benchCase of casesFor(products)) {
                const outcomes: RunOutcome[] = [];
                const plainRuns: VersusFigures[] = [];
                for (let run = 1; run <= options.runs; run++) {
                    const outcome = await runOnce(benchCase, run);
                    outcomes.push(outcome);
                    process.stderr.write(
                        `bench render ${benchCase.name} ${benchCase.shop.products}: ` +
                            `run ${run}/${options.runs}: ${describe(outcome)}\n`,
                    );
                    if (benchCase.name !== 'always') continue;
                    // The baseline alternates with dragnet, run for run, on a fresh shop of the same seed.
                    const plain = await runPlainRender(benchCase.shop, SAMPLE_INTERVAL_MS);
                    const plainOutcome = 'error' in plain ? `FAILED (${plain.error})` : describeVersus(plain);
                    process.stderr.write(
                        `bench render ${benchCase.name} ${benchCase.shop.products}: plain PlaywrightCrawler ` +
                            `run ${run}/${options.runs}: ${plainOutcome}\n`,
                    );
                    if (!('error' in plain)) plainRuns.push(plain);
                }
                if (benchCase.name === 'always') report(versusReport(benchCase, outcomes, plainRuns, options.runs));
                const finished = outcomes.flatMap((o) =>
                    'figures' in o ? [{ ...o.figures, othersCpuShare: o.othersCpuShare }] : [],
                );
                const median = medians(finished);
                report({
                    json: {
                        case: `${benchCase.name}-${benchCase.shop.products}`,
                        products: benchCase.shop.products,
                        scriptOnlyRate: benchCase.shop.scriptOnlyRate,
                        maxConcurrency: CRAWL_DEFAULTS.foundConcurrency.start,
                        // The stage's own default: what this machine holds (fetch/browser/browserConcurrency.ts).
                        browserPages: browserPages(),
                        learningMinSamples: LEARNING_MIN_SAMPLES,
                        runs: options.runs,
                        failedRuns: outcomes.length - finished.length,
                        median,
                        perRun: outcomes.map((o) =>
                            'figures' in o ? { run: o.run, ...o.figures, othersCpuShare: o.othersCpuShare } : o,
                        ),
                    },
                    rows: [
                        {
                            case: benchCase.name,
                            products: benchCase.shop.products,
                            'need render': median.needRender ?? null,
                            rendered: median.rendered ?? null,
                            precision: median.precision ?? null,
                            recall: median.recall ?? null,
                            'cheap after learning': median.cheapProductFetchesAfterLearning ?? null,
                            'cheap pages/s': median.cheapPagesPerSec ?? null,
                            'rendered pages/s': median.renderedPagesPerSec ?? null,
                            'CPU-s/cheap': median.cpuSecPerCheapPage ?? null,
                            'CPU-s/rendered': median.cpuSecPerRenderedPage ?? null,
                            'cost x': median.costRatio ?? null,
                            'peak RSS MB': median.peakRssMb ?? null,
                            'peak PSS MB': median.peakPssMb ?? null,
                            "others' CPU": median.othersCpuShare ?? null,
                            failed: outcomes.length - finished.length,
                        },
                    ],
                });
            }
        }
    },
});

/**
 * The all-script shop against plain Crawlee's PlaywrightCrawler on the same Chromium: products
 * stored per second, CPU (Node and Chromium) per product, and peak memory of the tree. Ratios are
 * of medians, dragnet's over the baseline's.
 */
function versusReport(benchCase: RenderBenchCase, outcomes: RunOutcome[], plainRuns: VersusFigures[], runs: number) {
    const dragnetRuns = outcomes.flatMap((outcome) => ('versus' in outcome ? [outcome.versus] : []));
    const dragnet = medians(dragnetRuns) as Record<keyof VersusFigures, number | null>;
    const plain = medians(plainRuns) as Record<keyof VersusFigures, number | null>;
    const ratios = {
        productsPerSec: ratio(dragnet.productsPerSec, plain.productsPerSec),
        cpuSecPerProduct: ratio(dragnet.cpuSecPerProduct, plain.cpuSecPerProduct),
        peakPssMb: ratio(dragnet.peakPssMb, plain.peakPssMb),
        peakRssMb: ratio(dragnet.peakRssMb, plain.peakRssMb),
    };
    const row = (crawler: string, figures: Record<keyof VersusFigures, number | null>, failed: number) => ({
        case: `${benchCase.name} vs Crawlee`,
        crawler,
        products: benchCase.shop.products,
        'products/s': figures.productsPerSec,
        'CPU-s/product': figures.cpuSecPerProduct,
        'peak PSS MB': figures.peakPssMb,
        'peak RSS MB': figures.peakRssMb,
        failed,
    });
    return {
        json: {
            case: `versus-plain-playwright-${benchCase.shop.products}`,
            products: benchCase.shop.products,
            runs,
            dragnet,
            plainPlaywright: plain,
            ratios,
            perRun: { dragnet: dragnetRuns, plainPlaywright: plainRuns },
        },
        rows: [
            row('dragnet', dragnet, runs - dragnetRuns.length),
            row('plain PlaywrightCrawler', plain, runs - plainRuns.length),
            {
                case: 'dragnet / plain',
                'products/s': ratios.productsPerSec,
                'CPU-s/product': ratios.cpuSecPerProduct,
                'peak PSS MB': ratios.peakPssMb,
                'peak RSS MB': ratios.peakRssMb,
            },
        ],
    };
}

function describeVersus(figures: VersusFigures): string {
    return (
        `${figures.items} products ` +
        `in ${figures.durationSec}s, ${figures.productsPerSec}/s, ${figures.cpuSecPerProduct} ` +
        `CPU-s/product, peak PSS ${figures.peakPssMb} MB, RSS ${figures.peakRssMb} MB`
    );
}

function describe(outcome: RunOutcome): string {
    if (!('figures' in outcome)) return `FAILED (${outcome.error})`;
    const f = outcome.figures;
    return (
        `${f.rendered} rendered of ${f.needRender} needed (precision ${f.precision}, recall ${f.recall}), ` +
        `${f.cheapProductFetches} cheap product fetches (${f.cheapProductFetchesAfterLearning ?? '-'} after ` +
        `learning), ${f.durationSec}s, cheap ${f.cheapPagesPerSec}/s, rendered ${f.renderedPagesPerSec}/s, ` +
        `cost x${f.costRatio}, peak RSS ${f.peakRssMb} MB (PSS ${f.peakPssMb} ` +
        `MB), others ${Math.round(outcome.othersCpuShare * 100)}%`
    );
}
