/**
 * The README's headline figures (src/authoring/benchmarkHeadline.ts), taken from result files shaped as the cpu,
 * latency and render suites write them: the case where the baselines ran, dragnet's ratios to them,
 * and null for a suite not measured yet.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { headlineFigures, renderHeadlineTable } from '../../src/authoring/benchmarkHeadline.js';
import type { ResultCase, SuiteResult } from '../../src/authoring/benchmarkResults.js';

function result(suite: string, command: string, cases: Array<ResultCase['json']>): SuiteResult {
    return {
        suite,
        command,
        options: { runs: 3, products: null, large: false, pageWeight: 'real' },
        startedAt: '2030-01-02T03:04:05.678Z',
        finishedAt: '2030-01-02T03:09:00.000Z',
        machine: {
            cores: 2,
            cpuModel: 'x',
            totalMemoryMb: 1024,
            loadAverageAtStart: [1, 1, 1],
            loadAverageAtEnd: [1, 1, 1],
        },
        node: 'v20.20.2',
        commit: { hash: null, dirty: false },
        leftOut: [],
        cases: cases.map((json) => ({ json, rows: [] })),
    };
}

const crawl = (pagesPerSec: number, cpuMsPerPage: number, peakRssMb: number) => ({
    median: { pagesPerSec, cpuMsPerPage, peakRssMb, steadyPagesPerSec: pagesPerSec },
    runs: [],
});

const results = {
    cpu: result('cpu', 'npm run -s bench -- cpu --large --runs 3', [
        {
            case: 'cpu-10000',
            products: 10000,
            crawlers: {
                dragnet: crawl(550, 2.2, 245),
                'plain-crawlee': crawl(70, 17.5, 3566),
                scrapy: crawl(156, 5.5, 113),
                'bare-loop': crawl(900, 1.2, 200),
            },
            ratios: {
                'dragnet/plain-crawlee': { pagesPerSec: 7.857 },
                'dragnet/scrapy': { pagesPerSec: 3.526 },
                'dragnet/bare-loop': { pagesPerSec: 0.611 },
            },
        },
        // Larger than the case with baselines, but dragnet alone: not the headline.
        {
            case: 'cpu-100000',
            products: 100000,
            crawlers: { dragnet: crawl(560, 2.0, 374) },
            ratios: { 'dragnet/dragnet-10000': { pagesPerSec: 1.018 } },
        },
    ]),
    latency: result('latency', 'npm run -s bench -- latency --runs 3', [
        {
            case: 'latency-8000',
            products: 8000,
            crawlers: { dragnet: crawl(418, 0, 0), scrapy: crawl(121, 0, 0), 'plain-crawlee': crawl(36.2, 0, 0) },
            ratios: {
                'dragnet/scrapy': { steadyPagesPerSec: 3.455 },
                'dragnet/plain-crawlee': { steadyPagesPerSec: 11.547 },
            },
        },
    ]),
    render: result('render', 'npm run -s bench -- render --runs 3', [
        { case: 'mixed-1000', products: 1000 },
        {
            case: 'versus-plain-playwright-200',
            products: 200,
            dragnet: { productsPerSec: 10.68, cpuSecPerProduct: 0.153, peakPssMb: 662 },
            plainPlaywright: { productsPerSec: 4.34, cpuSecPerProduct: 0.319, peakPssMb: 760 },
            ratios: { productsPerSec: 2.461, cpuSecPerProduct: 0.48, peakPssMb: 0.871 },
        },
    ]),
};

describe('headlineFigures', () => {
    it("takes the cpu suite's largest case that ran the baselines, with dragnet's ratios to them", () => {
        const { cpu } = headlineFigures(results);
        assert.deepEqual(cpu, {
            command: 'npm run -s bench -- cpu --large --runs 3',
            products: 10000,
            crawlers: {
                dragnet: { pagesPerSec: 550, cpuMsPerPage: 2.2, peakRssMb: 245 },
                scrapy: { pagesPerSec: 156, cpuMsPerPage: 5.5, peakRssMb: 113 },
                'plain-crawlee': { pagesPerSec: 70, cpuMsPerPage: 17.5, peakRssMb: 3566 },
            },
            pagesPerSecRatio: { scrapy: 3.526, 'plain-crawlee': 7.857 },
        });
    });

    it('takes the latency and render figures', () => {
        const { latency, render } = headlineFigures(results);
        assert.deepEqual(latency?.steadyPagesPerSec, { dragnet: 418, scrapy: 121, 'plain-crawlee': 36.2 });
        assert.deepEqual(latency?.steadyPagesPerSecRatio, { scrapy: 3.455, 'plain-crawlee': 11.547 });
        assert.equal(render?.products, 200);
        assert.deepEqual(render?.ratios, { productsPerSec: 2.461, cpuSecPerProduct: 0.48, peakPssMb: 0.871 });
    });

    it('gives null for a suite without a result', () => {
        assert.deepEqual(headlineFigures({}), { cpu: null, latency: null, render: null });
    });
});

describe('renderHeadlineTable', () => {
    it("shows each figure with dragnet's ratio to each baseline", () => {
        const table = renderHeadlineTable(headlineFigures(results));
        assert.match(table, /^\| \| dragnet \| Scrapy \| plain Crawlee \|\n/);
        assert.match(
            table,
            new RegExp(
                String.raw`\| CPU-bound crawl, 10000 products: pages\/s \| 550 ` +
                    String.raw`\| 156 \(dragnet x3\.526\) \| 70 \(dragnet x7\.857\) \|`,
            ),
        );
        assert.match(table, /\| peak RSS \| 245 MB \| 113 MB \| 3566 MB \|/);
        assert.match(
            table,
            new RegExp(
                String.raw`\| every page needs Chromium \(plain Crawlee's PlaywrightCrawler\), 200 products: ` +
                    String.raw`products\/s \| 10\.68 \| - \| 4\.34 \(dragnet x2\.461\) \|`,
            ),
        );
    });

    it('says there are no results when there are none', () => {
        assert.match(renderHeadlineTable(headlineFigures({})), /^No benchmark results yet/);
    });
});
