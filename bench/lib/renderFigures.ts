/**
 * The render suite's figures for one run, from three witnesses that do not depend on each other:
 * the shop (its ground truth and its request counts), the crawler child (cheap fetches and
 * browser requests as its own process saw them, its stored raw pages, its summary, its CPU),
 * and the bench parent's /proc samples of the child's process tree. How each figure is taken
 * is in docs/benchmarks.md ("render").
 */
import type { ProductTruth, ShopStats } from '../../src/demo/shop.js';
import type { RenderResult } from '../crawlers/dragnetRender.js';
import type { TreeSample } from './processTree.js';
import { round } from './stats.js';

export interface RenderFigures {
    // What needed the browser and what got it.
    products: number;
    needRender: number;
    /** summary.browser.rendered */
    rendered: number;
    /** Product paths the shop answered exactly twice (a cheap fetch and a render, when nothing failed). */
    productPathsRequestedTwice: number;
    /** Distinct product paths Chromium requested (seen at the crawler's in-process proxy). */
    renderedProductPaths: number;
    precision: number | null;
    recall: number | null;
    /** For every product: the shop's count equals the crawler's cheap fetches plus Chromium's requests. */
    countsAgree: boolean;
    itemsStored: number;
    itemsInvalid: number;
    exitCode: number;

    // Learning: cheap fetches of product pages, and those after the route went browser-direct.
    cheapProductFetches: number;
    directRenders: number;
    /** Seconds into the run at which the `minSamples`-th cheap product fetch came back: the learner could decide. */
    learnedAtSec: number | null;
    /** Cheap product fetches begun before that moment: the learning window and the fetches already in flight. */
    cheapProductFetchesBeforeLearning: number;
    /** Cheap product fetches begun after it (probes, and any waste); null when no page went to the browser directly. */
    cheapProductFetchesAfterLearning: number | null;
    /** …over the product pages not yet begun at that moment. */
    cheapShareAfterLearning: number | null;
    learning: unknown;

    // Time.
    durationSec: number;
    cheapPages: number;
    cheapPagesPerSec: number | null;
    renderedPagesPerSec: number | null;
    /** From the last cheap page to the last render: only the browser stage is working. */
    browserOnlySec: number;
    browserOnlyRenders: number;

    // CPU, and the cost of a page by stage.
    nodeCpuSec: number;
    browserCpuSec: number;
    reapedChildrenCpuSec: number;
    nodeCpuPerRender: number | null;
    cpuSecPerCheapPage: number | null;
    cpuSecPerRenderedPage: number | null;
    costRatio: number | null;

    // Memory of the crawler's process tree.
    peakRssMb: number;
    peakNodeRssMb: number;
    peakBrowserRssMb: number;
    peakPssMb: number | null;
    peakProcesses: number;

    /** Requests Chromium sent to hosts other than the shop (they go through the proxy like the rest). */
    browserRequestsElsewhere: Record<string, number>;
}

/** A run this short in its browser-only phase gives no usable Node-CPU-per-render figure. */
const MIN_BROWSER_ONLY_RENDERS = 10;

export function renderFigures(input: {
    result: RenderResult;
    truth: ProductTruth[];
    shopStats: ShopStats;
    shopHost: string;
    samples: TreeSample[];
    /** The run's render-learning `minSamples`. */
    learningMinSamples: number;
}): RenderFigures {
    const { result, truth, shopStats, samples } = input;
    const { summary, startedAtMs } = result;
    const seconds = (ms: number) => round((ms - startedAtMs) / 1000, 2);

    const productPaths = new Set(truth.map((p) => p.path));
    const needed = new Set(truth.filter((p) => p.scriptOnly).map((p) => p.path));
    const shopCount = (path: string) => Object.values(shopStats.byPath[path] ?? {}).reduce((sum, n) => sum + n, 0);

    const browserByPath = countBy(
        result.browserRequests.filter(([host]) => host === input.shopHost).map(([, path]) => path),
    );
    const cheap = result.cheapFetches.filter(([path]) => productPaths.has(path));
    const cheapByPath = countBy(result.cheapFetches.map(([path]) => path));
    const renderedPaths = [...browserByPath.keys()].filter((path) => productPaths.has(path));
    const hits = renderedPaths.filter((path) => needed.has(path)).length;
    const elsewhere = result.browserRequests.filter(([host]) => host !== input.shopHost).map(([host]) => host);

    // Learning: once `minSamples` cheap fetches of the route have come back, a route whose every page
    // needs the browser goes browser-direct; cheap fetches begun after that are probes or waste.
    const cheapDone = cheap.flatMap(([, , doneMs]) => (doneMs === null ? [] : [doneMs])).sort((a, b) => a - b);
    const learnedMs = cheapDone[input.learningMinSamples - 1];
    const cheapStarted = new Set(cheap.map(([path]) => path));
    const directPaths = new Set(
        result.browserRequests
            .filter(([host, path]) => host === input.shopHost && productPaths.has(path) && !cheapStarted.has(path))
            .map(([, path]) => path),
    );
    const beganBefore =
        learnedMs === undefined
            ? 0
            : new Set(cheap.filter(([, startMs]) => startMs <= learnedMs).map(([path]) => path)).size;
    const afterLearning =
        learnedMs === undefined || directPaths.size === 0
            ? undefined
            : cheap.filter(([, startMs]) => startMs > learnedMs).length;

    // Time: the stages' windows from the run's own raw pages (each stamped when it was handled).
    const httpTimes = result.rawPages.filter(([, renderer]) => renderer === 'http').map(([, , atMs]) => atMs);
    const renderTimes = result.rawPages
        .filter(([, renderer]) => renderer === 'browser')
        .map(([, , atMs]) => atMs)
        .sort((a, b) => a - b);
    const lastCheapMs = httpTimes.length > 0 ? Math.max(...httpTimes) : startedAtMs;
    // The browser has work from the first escalation (a cheap fetch
    // of a page it then rendered ends) or the first direct page.
    const firstNeedMs = Math.min(
        ...cheap
            .filter(([path, , doneMs]) => doneMs !== null && browserByPath.has(path))
            .map(([, , doneMs]) => doneMs!),
        ...result.browserRequests
            .filter(([host, path]) => host === input.shopHost && directPaths.has(path))
            .map(([, , atMs]) => atMs),
    );
    const lastRenderMs = renderTimes.at(-1);

    // CPU by stage: Node's CPU per render is read where only the browser stage works (after the last cheap page).
    const nodeCpuAt = cpuReader(samples, 'node');
    const browserCpuSec = samples.at(-1)?.cpuSecByGroup.browser ?? 0;
    const browserOnly = renderTimes.filter((atMs) => atMs > lastCheapMs);
    const browserOnlyFromMs = lastCheapMs;
    let nodeCpuPerRender: number | null = null;
    if (browserOnly.length >= MIN_BROWSER_ONLY_RENDERS && lastRenderMs !== undefined) {
        nodeCpuPerRender = (nodeCpuAt(lastRenderMs) - nodeCpuAt(browserOnlyFromMs)) / browserOnly.length;
    }
    const rendered = summary.browser.rendered;
    const cheapPages = summary.http.fetched;
    const cpuSecPerCheapPage =
        nodeCpuPerRender === null || cheapPages === 0
            ? null
            : (result.nodeCpuSec - nodeCpuPerRender * rendered) / cheapPages;
    const cpuSecPerRenderedPage =
        nodeCpuPerRender === null || rendered === 0 ? null : nodeCpuPerRender + browserCpuSec / rendered;

    const treeRss = samples.map((s) => (s.rssMbByGroup.node ?? 0) + (s.rssMbByGroup.browser ?? 0));
    const pss = samples.map((s) => s.pssMb).filter((mb): mb is number => mb !== undefined);

    return {
        products: truth.length,
        needRender: needed.size,
        rendered,
        productPathsRequestedTwice: truth.filter((p) => shopCount(p.path) === 2).length,
        renderedProductPaths: renderedPaths.length,
        precision: renderedPaths.length === 0 ? null : round(hits / renderedPaths.length, 4),
        recall: needed.size === 0 ? null : round(hits / needed.size, 4),
        countsAgree: truth.every(
            (p) => shopCount(p.path) === (cheapByPath.get(p.path) ?? 0) + (browserByPath.get(p.path) ?? 0),
        ),
        itemsStored: summary.items.stored,
        itemsInvalid: summary.items.invalid,
        exitCode: result.exitCode,

        cheapProductFetches: cheap.length,
        directRenders: summary.browser.direct,
        learnedAtSec: learnedMs === undefined ? null : seconds(learnedMs),
        cheapProductFetchesBeforeLearning: beganBefore,
        cheapProductFetchesAfterLearning: afterLearning ?? null,
        cheapShareAfterLearning:
            afterLearning === undefined || truth.length === beganBefore
                ? null
                : round(afterLearning / (truth.length - beganBefore), 4),
        learning: summary.render.product,

        durationSec: seconds(result.endedAtMs),
        cheapPages,
        cheapPagesPerSec: httpTimes.length === 0 ? null : round(cheapPages / ((lastCheapMs - startedAtMs) / 1000), 1),
        renderedPagesPerSec:
            lastRenderMs === undefined || !Number.isFinite(firstNeedMs)
                ? null
                : round(rendered / ((lastRenderMs - firstNeedMs) / 1000), 2),
        browserOnlySec: lastRenderMs === undefined ? 0 : round(Math.max(0, lastRenderMs - lastCheapMs) / 1000, 2),
        browserOnlyRenders: browserOnly.length,

        nodeCpuSec: round(result.nodeCpuSec, 2),
        browserCpuSec: round(browserCpuSec, 2),
        reapedChildrenCpuSec: round(result.reapedChildrenCpuSec, 2),
        nodeCpuPerRender: nodeCpuPerRender === null ? null : round(nodeCpuPerRender, 4),
        cpuSecPerCheapPage: cpuSecPerCheapPage === null ? null : round(cpuSecPerCheapPage, 4),
        cpuSecPerRenderedPage: cpuSecPerRenderedPage === null ? null : round(cpuSecPerRenderedPage, 4),
        costRatio:
            cpuSecPerCheapPage && cpuSecPerRenderedPage ? round(cpuSecPerRenderedPage / cpuSecPerCheapPage, 1) : null,

        peakRssMb: Math.round(Math.max(0, ...treeRss)),
        peakNodeRssMb: Math.round(Math.max(0, ...samples.map((s) => s.rssMbByGroup.node ?? 0))),
        peakBrowserRssMb: Math.round(Math.max(0, ...samples.map((s) => s.rssMbByGroup.browser ?? 0))),
        peakPssMb: pss.length === 0 ? null : Math.round(Math.max(...pss)),
        peakProcesses: Math.max(0, ...samples.map((s) => s.processes)),

        browserRequestsElsewhere: Object.fromEntries(countBy(elsewhere)),
    };
}

function countBy(keys: string[]): Map<string, number> {
    const counts = new Map<string, number>();
    for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
    return counts;
}

/** A group's cumulative CPU at any moment, linearly between the samples around it. */
function cpuReader(samples: TreeSample[], group: string): (atMs: number) => number {
    return (atMs) => {
        const after = samples.findIndex((s) => s.atMs >= atMs);
        if (after === -1) return samples.at(-1)?.cpuSecByGroup[group] ?? 0;
        if (after === 0) return samples[0]!.cpuSecByGroup[group] ?? 0;
        const a = samples[after - 1]!;
        const b = samples[after]!;
        const share = (atMs - a.atMs) / (b.atMs - a.atMs || 1);
        const va = a.cpuSecByGroup[group] ?? 0;
        return va + share * ((b.cpuSecByGroup[group] ?? 0) - va);
    };
}
