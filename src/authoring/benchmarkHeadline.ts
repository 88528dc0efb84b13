/**
 * The few figures the README's comparison shows, taken from the same result files as
 * docs/benchmarks.md (benchmarkResults.ts): dragnet against Scrapy and plain Crawlee on the CPU-bound crawl
 * (pages/s, CPU per page, peak RSS) and the latency-bound one (steady pages/s), and against plain
 * Crawlee's PlaywrightCrawler when every page needs Chromium. A suite without a result gives null.
 */
import type { SuiteResult } from './benchmarkResults.js';

type Figure = number | null;

export interface CrawlFigures {
    pagesPerSec: Figure;
    cpuMsPerPage: Figure;
    peakRssMb: Figure;
}

export interface HeadlineFigures {
    cpu: {
        command: string;
        products: number;
        /**
         * By the suite's crawler names: `dragnet`, `scrapy`, `plain-crawlee`, `plain-crawlee-memory`; a
         * crawler that did not run is missing.
         */
        crawlers: Record<string, CrawlFigures>;
        /** dragnet's median pages/s over each baseline's, by the baseline's name. */
        pagesPerSecRatio: Record<string, Figure>;
    } | null;
    latency: {
        command: string;
        products: number;
        steadyPagesPerSec: Record<string, Figure>;
        steadyPagesPerSecRatio: Record<string, Figure>;
    } | null;
    render: {
        command: string;
        products: number;
        dragnet: { productsPerSec: Figure; cpuSecPerProduct: Figure; peakPssMb: Figure };
        plainPlaywright: { productsPerSec: Figure; cpuSecPerProduct: Figure; peakPssMb: Figure };
        /** dragnet's medians over plain PlaywrightCrawler's. */
        ratios: { productsPerSec: Figure; cpuSecPerProduct: Figure; peakPssMb: Figure };
    } | null;
}

/** A case's JSON as its suite wrote it; read through `at` and `figure`, which give null for what is not there. */
type Json = Record<string, unknown>;

function at(json: unknown, ...path: string[]): Json | undefined {
    let value = json;
    for (const key of path) value = value !== null && typeof value === 'object' ? (value as Json)[key] : undefined;
    return value !== null && typeof value === 'object' ? (value as Json) : undefined;
}

function figure(json: unknown, ...path: string[]): Figure {
    const key = path.at(-1);
    const value = key === undefined ? json : at(json, ...path.slice(0, -1))?.[key];
    return typeof value === 'number' ? value : null;
}

const BASELINES = ['scrapy', 'plain-crawlee', 'plain-crawlee-memory'];

export function headlineFigures(results: Readonly<Record<string, SuiteResult>>): HeadlineFigures {
    return {
        cpu: cpuFigures(results.cpu),
        latency: latencyFigures(results.latency),
        render: renderSuiteFigures(results.render),
    };
}

/** Of the cases of a crawl suite, the largest whose baselines ran (the larger sizes run dragnet alone). */
function compared(
    result: SuiteResult | undefined,
    prefix: string,
): { json: Json; products: number; names: string[] } | undefined {
    const cases = (result?.cases ?? [])
        .map(({ json }) => ({
            json,
            products: figure(json, 'products') ?? 0,
            names: Object.keys(at(json, 'crawlers') ?? {}),
        }))
        .filter(({ json }) => String(json.case).startsWith(prefix));
    const withBaselines = cases.filter(({ names }) => names.some((name) => BASELINES.includes(name)));
    const chosen = (withBaselines.length > 0 ? withBaselines : cases).sort((a, b) => b.products - a.products)[0];
    return chosen && { ...chosen, names: ['dragnet', ...BASELINES].filter((name) => chosen.names.includes(name)) };
}

function cpuFigures(result: SuiteResult | undefined): HeadlineFigures['cpu'] {
    const chosen = compared(result, 'cpu-');
    if (!result || !chosen) return null;
    const { json, products, names } = chosen;
    const median = (name: string, key: string) => figure(json, 'crawlers', name, 'median', key);
    return {
        command: result.command,
        products,
        crawlers: Object.fromEntries(
            names.map((name) => [
                name,
                {
                    pagesPerSec: median(name, 'pagesPerSec'),
                    cpuMsPerPage: median(name, 'cpuMsPerPage'),
                    peakRssMb: median(name, 'peakRssMb'),
                },
            ]),
        ),
        pagesPerSecRatio: Object.fromEntries(
            names.slice(1).map((name) => [name, figure(json, 'ratios', `dragnet/${name}`, 'pagesPerSec')]),
        ),
    };
}

function latencyFigures(result: SuiteResult | undefined): HeadlineFigures['latency'] {
    const chosen = compared(result, 'latency-');
    if (!result || !chosen) return null;
    const { json, products, names } = chosen;
    return {
        command: result.command,
        products,
        steadyPagesPerSec: Object.fromEntries(
            names.map((name) => [name, figure(json, 'crawlers', name, 'median', 'steadyPagesPerSec')]),
        ),
        steadyPagesPerSecRatio: Object.fromEntries(
            names.slice(1).map((name) => [name, figure(json, 'ratios', `dragnet/${name}`, 'steadyPagesPerSec')]),
        ),
    };
}

function renderSuiteFigures(result: SuiteResult | undefined): HeadlineFigures['render'] {
    const json = result?.cases.map((c) => c.json).find((j) => String(j.case).startsWith('versus-plain-playwright-'));
    if (!result || !json) return null;
    const pick = (key: string) => ({
        productsPerSec: figure(json, key, 'productsPerSec'),
        cpuSecPerProduct: figure(json, key, 'cpuSecPerProduct'),
        peakPssMb: figure(json, key, 'peakPssMb'),
    });
    return {
        command: result.command,
        products: figure(json, 'products') ?? 0,
        dragnet: pick('dragnet'),
        plainPlaywright: pick('plainPlaywright'),
        ratios: pick('ratios'),
    };
}

/**
 * The README's short comparison as Markdown: one row per figure, dragnet's value, then each
 * baseline's with dragnet's ratio to it (`x3.5`: dragnet ran 3.5 times its pages/s).
 */
export function renderHeadlineTable(figures: HeadlineFigures): string {
    const show = (value: Figure, unit = '') => (value === null ? '-' : `${Number(value.toPrecision(10))}${unit}`);
    const versus = (value: Figure, times: Figure) =>
        value === null ? '-' : `${show(value)}${times === null ? '' : ` (dragnet x${show(times)})`}`;
    const rows: string[][] = [];
    const { cpu, latency, render } = figures;
    if (cpu) {
        const of = (name: string, key: keyof CrawlFigures) => cpu.crawlers[name]?.[key] ?? null;
        rows.push([
            `CPU-bound crawl, ${cpu.products} products: pages/s`,
            show(of('dragnet', 'pagesPerSec')),
            versus(of('scrapy', 'pagesPerSec'), cpu.pagesPerSecRatio.scrapy ?? null),
            versus(of('plain-crawlee', 'pagesPerSec'), cpu.pagesPerSecRatio['plain-crawlee'] ?? null),
        ]);
        rows.push([
            'CPU ms per page',
            ...['dragnet', 'scrapy', 'plain-crawlee'].map((name) => show(of(name, 'cpuMsPerPage'))),
        ]);
        rows.push([
            'peak RSS',
            ...['dragnet', 'scrapy', 'plain-crawlee'].map((name) => show(of(name, 'peakRssMb'), ' MB')),
        ]);
    }
    if (latency) {
        const steady = latency.steadyPagesPerSec;
        const times = latency.steadyPagesPerSecRatio;
        rows.push([
            `latency-bound crawl (200 ms responses): steady pages/s`,
            show(steady.dragnet ?? null),
            versus(steady.scrapy ?? null, times.scrapy ?? null),
            versus(steady['plain-crawlee'] ?? null, times['plain-crawlee'] ?? null),
        ]);
    }
    if (render) {
        rows.push([
            `every page needs Chromium (plain Crawlee's PlaywrightCrawler), ${render.products} products: products/s`,
            show(render.dragnet.productsPerSec),
            '-',
            versus(render.plainPlaywright.productsPerSec, render.ratios.productsPerSec),
        ]);
        rows.push([
            'CPU-s per product (Node + Chromium)',
            show(render.dragnet.cpuSecPerProduct),
            '-',
            show(render.plainPlaywright.cpuSecPerProduct),
        ]);
    }
    if (rows.length === 0) return 'No benchmark results yet: `npm run -s bench` writes them.\n';
    const lines = [
        '| | dragnet | Scrapy | plain Crawlee |',
        '|---|---:|---:|---:|',
        ...rows.map((cells) => `| ${cells.join(' | ')} |`),
    ];
    return `${lines.join('\n')}\n`;
}

const HEADLINE_BEGIN = '<!-- bench: headline (generated by npm run docs from bench/results/) -->';
const HEADLINE_END = '<!-- bench: end -->';

/** `markdown` (the README) with its headline block remade from `results`; throws when it has none. */
export function withHeadline(markdown: string, results: Readonly<Record<string, SuiteResult>>): string {
    const begin = markdown.indexOf(HEADLINE_BEGIN);
    const end = markdown.indexOf(HEADLINE_END, begin);
    if (begin < 0 || end < 0)
        throw new Error(`README.md has no headline block between "${HEADLINE_BEGIN}" and "${HEADLINE_END}"`);
    const table = renderHeadlineTable(headlineFigures(results));
    return `${markdown.slice(0, begin)}${HEADLINE_BEGIN}\n${table}${markdown.slice(end)}`;
}
