import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright';
import { CHROMIUM_ARGS, findChromium } from '../../../src/fetch/browser/chromium.js';
import { MemorySeenSet } from '../../../src/frontier/seenSet.js';
import type { Trip } from '../../../src/vocabulary/report.js';
import { renderReport, runStatus } from '../../../src/monitor/report/report.js';
import type { ReportSummary } from '../../../src/vocabulary/report.js';
import { RunStats } from '../../../src/monitor/stats.js';
import { buildSummary } from '../../../src/monitor/summary.js';
import { Timeline, type TimelinePoint } from '../../../src/monitor/timeline.js';
import { runId, writeReport } from '../../../src/monitor/report/writeReport.js';
import { directProxies } from '../proxyReports.js';

/**
 * A crawl of a shop of 100 listing pages x 20 products, played on a real RunStats one simulated second at a time:
 * category pages lead to products, 10% of products escalate to the browser, transient errors
 * throughout with a burst of blocks in the middle, a few 404s, one product field that fails
 * now and then. Deterministic (seeded), so the screenshot is the same on every run.
 */
function fakeRun(routes = { listing: 'category', detail: 'product' }): {
    summary: ReportSummary;
    timeline: TimelinePoint[];
} {
    const stats = new RunStats();
    let inFlight = 0;
    let concurrency = 4;
    let browserInFlight = 0;
    const timeline = new Timeline(stats, {
        // As wiring/monitors.ts records them: each stage's requests in flight and its autoscaled pool's limit.
        gauges: () => ({
            httpInFlight: inFlight,
            httpConcurrency: concurrency,
            browserInFlight,
            browserConcurrency: 4,
        }),
    });
    let seed = 42;
    const random = () => {
        seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
        return seed / 2 ** 31;
    };
    const seenSet = new MemorySeenSet();

    stats.admitted = 1;
    timeline.sample(at(stats, 0));
    let second = 0;
    let target = 4;
    let listingsQueued = 1;
    while (stats.admitted > stats.finished) {
        second += 1;
        if (second % 5 === 0) target = Math.min(20, target + 2);
        // A stretch where the site blocks and the pool backs off.
        const throttled = second >= 42 && second <= 48;
        concurrency = throttled ? Math.max(2, target - 10) : target;
        const wanted = Math.round(Math.min(36, 4 + second * 1.2) * (0.85 + random() * 0.3) * (throttled ? 0.4 : 1));
        const pages = Math.min(wanted, stats.admitted - stats.finished);
        inFlight = Math.min(concurrency, Math.round(pages * (0.5 + random() * 0.3)) + 1);
        const escalationsBefore = stats.escalations;
        for (let page = 0; page < pages; page += 1) {
            // Each listing page links 20 products and the next listing page, up to 100 listings.
            const listing =
                listingsQueued > 0 && (stats.admitted - stats.finished === listingsQueued || random() < 0.08);
            const label = listing ? routes.listing : routes.detail;
            stats.route(label).pages += 1;
            stats.httpFetched += 1;
            if (listing) {
                listingsQueued -= 1;
                stats.admitted += 20;
                if (stats.route(routes.listing).pages < 100) {
                    stats.admitted += 1;
                    listingsQueued += 1;
                }
                stats.linksSkipped.seen += 14;
                stats.succeeded += 1;
                continue;
            }
            if (random() < 0.04) {
                stats.errorsByClass.transient += 1;
                stats.retries += 1;
                stats.retriedRequests += 1;
            }
            if (throttled && random() < 0.3) {
                stats.errorsByClass.blocked += 1;
                stats.retries += 1;
            }
            if (random() < 0.012) {
                stats.errorsByClass.permanent += 1;
                stats.deadLettered += 1;
                continue;
            }
            if (random() < 0.1) {
                stats.escalations += 1;
                stats.route(label).escalations += 1;
                stats.countFailingFields(label, ['price', 'title']);
                stats.browserRendered += 1;
                stats.route(label).pages += 1;
            }
            if (random() < 0.015) {
                stats.itemsInvalid += 1;
                stats.route(label).itemsInvalid += 1;
                stats.countFailingFields(label, ['availability']);
            } else {
                stats.itemsStored += 1;
                stats.route(label).itemsStored += 1;
            }
            stats.succeeded += 1;
        }
        browserInFlight = Math.min(4, stats.escalations - escalationsBefore);
        if (stats.admitted === stats.finished) inFlight = browserInFlight = 0;
        timeline.sample(at(stats, second));
    }
    void seenSet.add(Array.from({ length: stats.admitted }, (_, index) => `https://shop.test/${index}`));

    const summary = buildSummary(stats, {
        site: 'demo-shop',
        seenSet,
        render: {
            [routes.detail]: {
                mode: 'http-first',
                samples: 50,
                neededBrowserShare: 0.1,
                directToBrowser: 0,
                probes: 0,
                switches: 0,
            },
        },
        drift: [],
        browserAvailable: true,
        storage: {
            dir: './storage',
            dataset: 'demo-shop',
            quarantine: 'demo-shop-quarantine',
            deadLetter: 'demo-shop-dead-letter',
            rawPages: './storage/raw_pages/demo-shop',
        },
        proxies: directProxies(stats.httpFetched),
    });
    return {
        summary: {
            ...summary,
            finishedAt: at(stats, second).toISOString(),
            durationSec: second,
            pagesPerSec: Math.round((stats.finished / second) * 100) / 100,
            deadLetterByReason: {
                'http-404': Math.max(0, stats.deadLettered - 2),
                timeout: Math.min(2, stats.deadLettered),
            },
        },
        timeline: timeline.points,
    };
}

/** The run of fakeRun, with its product route stopped by the drift breaker 50 s in. */
function driftedRun(): ReportSummary {
    const { summary } = fakeRun();
    const trip: Trip = {
        route: 'product',
        pagesJudged: 212,
        invalidShare: 0.64,
        failingFields: { price: 64, title: 61 },
        samples: [
            {
                url: 'http://127.0.0.1:8123/products/blue-lamp-42?ref=<x>',
                rawKey: 'k1',
                issues: ['price: Required', 'title: Required'],
            },
            { url: 'http://127.0.0.1:8123/products/red-chair-7', rawKey: 'k2', issues: ['price: Required'] },
        ],
        at: new Date(Date.parse(summary.startedAt) + 50_000).toISOString(),
    };
    return { ...summary, drift: [trip], exitCode: 3 };
}

function at(stats: RunStats, seconds: number): Date {
    return new Date(stats.startedAt.getTime() + seconds * 1000);
}

const chromiumPath = findChromium();

describe('run report', () => {
    let dir: string;
    before(async () => {
        dir = await mkdtemp(join(tmpdir(), 'dragnet-report-'));
    });
    after(async () => {
        await rm(dir, { recursive: true, force: true });
    });

    it('is one self-contained page: no script, no external resource', () => {
        const { summary, timeline } = fakeRun();
        const html = renderReport(summary, timeline);
        assert.doesNotMatch(html, /<script|<link|<img|<iframe|@import|url\(|https?:\/\//i);
        assert.match(html, /^<!doctype html>/);
    });

    it('says ok, with dead-letters, or failed', () => {
        const { summary } = fakeRun();
        const clean = { ...summary, requests: { ...summary.requests, deadLettered: 0 } };
        assert.equal(runStatus(clean), 'ok');
        assert.equal(runStatus(summary), 'with dead-letters');
        assert.equal(runStatus({ ...summary, exitCode: 1 }), 'failed');
        assert.equal(runStatus({ ...clean, requests: { ...clean.requests, succeeded: 0 } }), 'failed');
        assert.equal(runStatus({ ...summary, stopped: 'SIGTERM', exitCode: 143 }), 'stopped');
    });

    it('puts a route stopped by the drift breaker first, marks the moment on the charts and fails the run', () => {
        const summary = driftedRun();
        const { timeline } = fakeRun();
        assert.equal(runStatus(summary), 'failed');
        assert.equal(
            runStatus({ ...summary, exitCode: undefined }),
            'failed',
            'a trip fails the run even without an exit code',
        );
        const html = renderReport(summary, timeline);
        const alert = html.indexOf('The drift breaker stopped a route');
        assert.ok(alert > 0 && alert < html.indexOf('Over time'), 'the alert comes before the charts');
        assert.match(html, /route “product”<\/b> stopped after 212 pages, at 50s: 64% of the window invalid/);
        assert.match(html, /price \(64\), title \(61\)/);
        assert.match(html, /blue-lamp-42\?ref=&lt;x&gt;/);
        assert.equal(html.match(/class="marker"/g)?.length, 6, 'a marker on each chart over time');
    });

    it("shows a recrawl's changes per route, and none in a first run", () => {
        const { summary, timeline } = fakeRun();
        assert.doesNotMatch(renderReport(summary, timeline), /Changes per route/);
        const recrawl = {
            run: 3,
            items: { new: 4, changed: 12, unchanged: 180, removed: 2 },
            byRoute: { product: { new: 4, changed: 12, unchanged: 180, removed: 2 } },
            unchangedPages: { notModified: 120, identicalPayload: 60 },
        };
        const html = renderReport({ ...summary, recrawl }, timeline);
        assert.match(html, /Changes per route \(run 3 of the series\)/);
        const row = /<th>product<\/th>((?:<td>.*?<\/td>){4})/.exec(html.slice(html.indexOf('Changes per route')))?.[1];
        assert.deepEqual(
            [...(row ?? '').matchAll(/>(\d+)</g)].map((match) => Number(match[1])),
            [4, 12, 180, 2],
        );
        assert.match(html, /120 known pages answered 304 and 60 sent the same bytes again/);
    });

    it('renders a run too short for the charts without failing', () => {
        const { summary } = fakeRun();
        const html = renderReport(summary, []);
        assert.match(html, /fewer than two samples/);
    });

    it('writes storage/reports/<runId>.html', async () => {
        const id = runId('demo-shop', '2026-11-29T23:18:53.412Z');
        assert.equal(id, 'demo-shop-2026-11-29T23-18-53Z');
        const path = await writeReport(join(dir, 'storage'), id, '<!doctype html>');
        assert.equal(path, join(dir, 'storage', 'reports', 'demo-shop-2026-11-29T23-18-53Z.html'));
        assert.equal(await readFile(path, 'utf8'), '<!doctype html>');
        await assert.rejects(writeReport(dir, '../escape', ''), /not usable as a file name/);
        assert.equal(
            runId('demo-shop', '2026-11-29T23:18:53.412Z', 'host.a-1234-9f8e7d6c'),
            'demo-shop-2026-11-29T23-18-53Z-host.a-1234-9f8e7d6c',
            "a fleet's worker: its own file in a storage dir the fleet shares",
        );
    });

    describe('in headless Chromium', { skip: chromiumPath ? false : 'no Chromium found' }, () => {
        let browser: Browser;
        before(async () => {
            browser = await chromium.launch({ executablePath: chromiumPath, args: CHROMIUM_ARGS });
        });
        after(async () => {
            await browser?.close();
        });

        /** Opens a report file and collects console errors and page errors while it loads. */
        async function open(path: string) {
            const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
            const problems: string[] = [];
            page.on('console', (message) => {
                if (message.type() === 'error') problems.push(`console: ${message.text()}`);
            });
            page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
            page.on('request', (request) => {
                if (!request.url().startsWith('file:')) problems.push(`request: ${request.url()}`);
            });
            await page.goto(pathToFileURL(path).href, { waitUntil: 'load' });
            return { page, problems };
        }

        /** The text of `selector` as it is shown: Playwright's innerText, which leaves out what is hidden. */
        function shownText(page: Page, selector: string): Promise<string> {
            // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText(): the text as shown
            return page.innerText(selector);
        }

        it('draws the charts and the headline numbers; saves a screenshot', async () => {
            const { summary, timeline } = fakeRun();
            const path = await writeReport(
                join(dir, 'storage'),
                runId(summary.site, summary.startedAt),
                renderReport(summary, timeline),
            );
            const { page, problems } = await open(path);

            const charts = await page.evaluate(() =>
                [...document.querySelectorAll('svg')].map((svg) => {
                    const drawn = [...svg.querySelectorAll('path.line, rect:not(.hover):not(.track)')].filter(
                        (shape) => {
                            const box = (shape as SVGGraphicsElement).getBBox();
                            return shape.tagName === 'path' ? box.width > 0 : box.width > 0 && box.height > 0;
                        },
                    );
                    const rect = svg.getBoundingClientRect();
                    return {
                        label: svg.getAttribute('aria-label'),
                        drawn: drawn.length,
                        width: rect.width,
                        height: rect.height,
                    };
                }),
            );
            const visible = charts.filter((chart) => chart.drawn > 0 && chart.width > 100 && chart.height > 50);
            assert.ok(visible.length >= 4, `charts drawn: ${JSON.stringify(charts)}`);
            for (const title of [
                'Throughput',
                'Errors by class',
                'Concurrency',
                'Frontier queue',
                'Escalations and dead-letters',
                'Field fill rate per route',
            ]) {
                assert.ok(
                    visible.some((chart) => chart.label === title),
                    `chart "${title}" drawn`,
                );
            }

            const text = await shownText(page, 'body');
            const headline = await shownText(page, 'header');
            assert.match(headline, /demo-shop/);
            assert.match(headline, /with dead-letters/);
            assert.match(headline, new RegExp(`${summary.pagesPerSec} pages/s`));
            for (const value of [
                summary.requests.total,
                summary.items.stored,
                summary.requests.deadLettered,
                summary.browser.rendered,
            ]) {
                assert.ok(text.includes(value.toLocaleString('en-US')), `${value} in the page`);
            }
            assert.match(text, /no proxy tiers used in this run/);
            assert.match(text, /http-404/);

            await mkdir('test-results', { recursive: true });
            await page.screenshot({ path: 'test-results/report.png', fullPage: true });
            assert.deepEqual(problems, []);
            await page.close();
        });

        it('shows a drift trip at the top of the page', async () => {
            const summary = driftedRun();
            const path = await writeReport(dir, 'drift', renderReport(summary, fakeRun().timeline));
            const { page, problems } = await open(path);
            assert.match(await shownText(page, 'header'), /failed/);
            assert.match(await shownText(page, '.alert'), /route “product” stopped after 212 pages/);
            await page.screenshot({ path: 'test-results/report-drift.png', fullPage: false });
            assert.deepEqual(problems, []);
            await page.close();
        });

        it('shows hostile route names as text: no element is created, nothing runs', async () => {
            const hostile = {
                listing: '<img src=x onerror="window.__pwned=1">',
                detail: '<script>window.__pwned=2</script>',
            };
            const { summary, timeline } = fakeRun(hostile);
            summary.site = '<script>window.__pwned=3</script>';
            summary.deadLetterByReason = { '<b onmouseover=alert(1)>x</b>': 1 };
            const path = await writeReport(dir, 'hostile', renderReport(summary, timeline));
            const { page, problems } = await open(path);

            const found = await page.evaluate(() => ({
                scripts: document.querySelectorAll('script').length,
                images: document.querySelectorAll('img').length,
                bolds: document.querySelectorAll('b[onmouseover]').length,
                pwned: (window as Window & { __pwned?: number }).__pwned ?? null,
            }));
            assert.deepEqual(found, { scripts: 0, images: 0, bolds: 0, pwned: null });
            const text = await shownText(page, 'body');
            assert.ok(text.includes(hostile.listing), 'the listing route name is shown as text');
            assert.ok(text.includes(hostile.detail), 'the detail route name is shown as text');
            assert.equal(await page.title(), 'dragnet · <script>window.__pwned=3</script> · with dead-letters');
            assert.deepEqual(problems, []);
            await page.close();
        });
    });
});
