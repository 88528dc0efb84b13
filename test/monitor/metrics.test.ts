/**
 * The metrics recorder and its registry, the status server, and a crawl of the fixture shop
 * scraped over HTTP while it runs.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import siteDefinition from '../../routes/demo-shop.js';
import { ConcurrencyController } from '../../src/fetch/pacing/concurrencyController.js';
import type { Load } from '../../src/monitor/live.js';
import { LiveStatus } from '../../src/monitor/live.js';
import { createLogger } from '../../src/monitor/logger.js';
import { Metrics } from '../../src/monitor/metrics.js';
import { RunStats } from '../../src/monitor/stats.js';
import { startStatusServer, type StatusServer } from '../../src/monitor/statusServer.js';
import type { CrawlResult } from '../../src/options/crawlOptions.js';
import { crawl } from '../../src/run.js';
import { startShop, type Shop } from '../../src/demo/shop.js';
import { tieredProxies } from './proxyReports.js';

const load: Load = { http: { inFlight: 7, concurrencyLimit: 12 }, browser: { inFlight: 0, concurrencyLimit: 0 } };

/**
 * The value of one sample line of Prometheus text, e.g.
 * `dragnet_requests_total{stage="http",status="200"}`; 0 when absent.
 */
function valueIn(text: string, series: string): number {
    const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
    return line ? Number(line.slice(series.length + 1)) : 0;
}

describe('Metrics', () => {
    it('counts fetch attempts by stage and status, and times those that got a response', async () => {
        const metrics = new Metrics({ stats: new RunStats(), processMetrics: false });
        const [ok, reset, unseen, notFound] = [{}, {}, {}, {}];
        metrics.fetchStarted(ok);
        metrics.responded(ok, { stage: 'http', status: 200 });
        metrics.fetchStarted(reset);
        metrics.fetchFailed(reset, 'http');
        metrics.fetchStarted(notFound);
        metrics.responded(notFound, { stage: 'browser', status: 404 });
        // Rejected after its response (a 404 is permanent): already counted under its status.
        metrics.fetchFailed(notFound, 'browser');
        // Never started (no navigation): counted, not timed.
        metrics.responded(unseen, { stage: 'http', status: 200 });

        const { body } = await metrics.scrape();
        assert.equal(valueIn(body, 'dragnet_requests_total{stage="http",status="200"}'), 2);
        assert.equal(valueIn(body, 'dragnet_requests_total{stage="http",status="none"}'), 1);
        assert.equal(valueIn(body, 'dragnet_requests_total{stage="browser",status="404"}'), 1);
        assert.equal(valueIn(body, 'dragnet_requests_total{stage="browser",status="none"}'), 0);
        assert.equal(valueIn(body, 'dragnet_fetch_duration_seconds_count{stage="http"}'), 1);
        assert.equal(valueIn(body, 'dragnet_fetch_duration_seconds_count{stage="browser"}'), 1);
        assert.equal(valueIn(body, 'dragnet_fetch_duration_seconds_bucket{le="60",stage="http"}'), 1);
        assert.match(body, /dragnet_fetch_duration_seconds_bucket\{le="0.01",stage="http"\} [01]\n/);
    });

    it("reads the counts RunStats keeps at scrape time, and the stages' load", async () => {
        const stats = new RunStats();
        const metrics = new Metrics({ stats, load: () => load, processMetrics: false });
        const before = await metrics.scrape();
        assert.equal(valueIn(before.body, 'dragnet_urls_admitted_total'), 0);

        stats.admitted = 40;
        stats.succeeded = 20;
        stats.countDeadLetter('permanent', 'http-404');
        stats.countDeadLetter('transient', 'timeout');
        stats.countDeadLetter('permanent', 'http-404');
        stats.retries = 5;
        stats.errorsByClass.transient += 5;
        stats.route('product').itemsStored = 18;
        stats.route('product').itemsInvalid = 2;
        stats.route('product').escalations = 3;
        stats.route('category').itemsStored = 0;
        stats.linksSkipped.seen = 9;

        const { body, contentType } = await metrics.scrape();
        assert.match(contentType, /^text\/plain; version=0\.0\.4/);
        assert.equal(valueIn(body, 'dragnet_urls_admitted_total'), 40);
        assert.equal(valueIn(body, 'dragnet_pages_succeeded_total'), 20);
        assert.equal(valueIn(body, 'dragnet_retries_total'), 5);
        assert.equal(valueIn(body, 'dragnet_errors_total{class="transient"}'), 6);
        assert.equal(valueIn(body, 'dragnet_errors_total{class="permanent"}'), 2);
        assert.equal(valueIn(body, 'dragnet_dead_lettered_total{reason="http-404"}'), 2);
        assert.equal(valueIn(body, 'dragnet_dead_lettered_total{reason="timeout"}'), 1);
        assert.equal(valueIn(body, 'dragnet_items_total{route="product",outcome="valid"}'), 18);
        assert.equal(valueIn(body, 'dragnet_items_total{route="product",outcome="invalid"}'), 2);
        assert.equal(valueIn(body, 'dragnet_escalations_total{route="product"}'), 3);
        assert.equal(valueIn(body, 'dragnet_links_skipped_total{reason="seen"}'), 9);
        // 40 admitted − 23 finished − 7 in flight.
        assert.equal(valueIn(body, 'dragnet_queue_pending'), 10);
        assert.equal(valueIn(body, 'dragnet_in_flight{stage="http"}'), 7);
        assert.equal(valueIn(body, 'dragnet_in_flight{stage="browser"}'), 0);
        assert.equal(valueIn(body, 'dragnet_concurrency_limit{stage="http"}'), 12);
        assert.match(body, /# TYPE dragnet_requests_total counter/);
        assert.match(body, /# TYPE dragnet_fetch_duration_seconds histogram/);
        assert.match(body, /# TYPE dragnet_queue_pending gauge/);
        assert.doesNotMatch(body, /process_cpu/, 'process metrics were turned off');
        assert.doesNotMatch(body, /dragnet_proxy_|dragnet_tier_moves/, 'no proxy series without a source of them');

        // Copied, not added up: a second scrape of unchanged stats says the same.
        assert.equal(valueIn((await metrics.scrape()).body, 'dragnet_dead_lettered_total{reason="http-404"}'), 2);
    });

    it(`reads the proxy routing's report at scrape time: requests by \
tier, exit and outcome, bytes, sessions, moves, waits`, async () => {
        const proxies = tieredProxies();
        const metrics = new Metrics({ stats: new RunStats(), proxies: () => proxies, processMetrics: false });
        let { body } = await metrics.scrape();
        const exit = (tier: string, port: number) => `tier="${tier}",exit="127.0.0.1:${port}"`;
        assert.equal(valueIn(body, `dragnet_proxy_requests_total{${exit('datacenter', 8001)},outcome="ok"}`), 280);
        assert.equal(valueIn(body, `dragnet_proxy_requests_total{${exit('datacenter', 8001)},outcome="blocked"}`), 12);
        assert.equal(valueIn(body, `dragnet_proxy_requests_total{${exit('datacenter', 8001)},outcome="limited"}`), 5);
        assert.equal(
            valueIn(body, `dragnet_proxy_requests_total{${exit('datacenter', 8004)},outcome="exit_fault"}`),
            40,
        );
        assert.equal(valueIn(body, `dragnet_proxy_requests_total{${exit('residential', 8005)},outcome="blocked"}`), 1);
        assert.equal(valueIn(body, `dragnet_proxy_bytes_total{${exit('residential', 8006)}}`), 650_000);
        assert.equal(valueIn(body, `dragnet_exit_breaker_opened_total{${exit('datacenter', 8004)}}`), 4);
        assert.equal(valueIn(body, 'dragnet_sessions_retired_total{reason="blocked"}'), 33);
        assert.equal(valueIn(body, 'dragnet_sessions_retired_total{reason="max-uses"}'), 12);
        assert.equal(valueIn(body, 'dragnet_sessions_retired_total{reason="errors"}'), 2);
        assert.equal(valueIn(body, 'dragnet_tier_moves_total'), 1);
        assert.equal(valueIn(body, 'dragnet_politeness_wait_seconds_total'), 61.5);
        assert.match(body, /# TYPE dragnet_proxy_requests_total counter/);

        proxies.exits[0]!.ok += 20;
        proxies.tierMoves.push({ ...proxies.tierMoves[0]!, section: 'the site' });
        ({ body } = await metrics.scrape());
        assert.equal(valueIn(body, `dragnet_proxy_requests_total{${exit('datacenter', 8001)},outcome="ok"}`), 300);
        assert.equal(valueIn(body, 'dragnet_tier_moves_total'), 2);
    });

    it('keeps anything before an @ out of the exit label', async () => {
        const proxies = tieredProxies();
        proxies.exits[0]!.name = 'scraper:hunter2@127.0.0.1:8001';
        const { body } = await new Metrics({
            stats: new RunStats(),
            proxies: () => proxies,
            processMetrics: false,
        }).scrape();
        assert.ok(!body.includes('hunter2'), 'the password is in /metrics');
        assert.equal(valueIn(body, 'dragnet_proxy_bytes_total{tier="datacenter",exit="127.0.0.1:8001"}'), 3_000_000);
    });

    it('includes the Node process metrics by default, each registry on its own', async () => {
        const first = new Metrics({ stats: new RunStats() });
        const second = new Metrics({ stats: new RunStats() });
        first.responded({}, { stage: 'http', status: 200 });
        const [a, b] = await Promise.all([first.scrape(), second.scrape()]);
        assert.match(a.body, /^process_cpu_user_seconds_total /m);
        assert.match(a.body, /^nodejs_heap_size_used_bytes /m);
        assert.equal(valueIn(a.body, 'dragnet_requests_total{stage="http",status="200"}'), 1);
        assert.equal(valueIn(b.body, 'dragnet_requests_total{stage="http",status="200"}'), 0);
    });

    it("exports the adaptive concurrency controller's limit and decisions per domain", async () => {
        const concurrency = new ConcurrencyController({ maxConcurrency: 20 });
        const requests = Array.from({ length: 4 }, () => ({}));
        for (const request of requests) concurrency.started(request, 'http://a.test/');
        for (const request of requests) concurrency.responded(request, 429);
        const { body } = await new Metrics({ stats: new RunStats(), concurrency, processMetrics: false }).scrape();
        assert.equal(valueIn(body, 'dragnet_domain_concurrency_limit{domain="a.test"}'), 15);
        assert.equal(valueIn(body, 'dragnet_concurrency_changes_total{domain="a.test",direction="down"}'), 1);
        assert.equal(valueIn(body, 'dragnet_concurrency_changes_total{domain="a.test",direction="up"}'), 0);
    });
});

describe('startStatusServer', () => {
    let server: StatusServer;
    const stats = new RunStats();

    before(async () => {
        const metrics = new Metrics({ stats, load: () => load, processMetrics: false });
        const live = new LiveStatus({ stats, load: () => load });
        server = await startStatusServer({ port: 0, metrics, status: () => live.snapshot() });
    });
    after(() => server?.close());

    it('listens on 127.0.0.1 on a free port when given port 0', () => {
        assert.ok(server.port > 0);
        assert.equal(server.url, `http://127.0.0.1:${server.port}`);
    });

    it('serves /metrics in the Prometheus text format', async () => {
        stats.admitted = 3;
        const response = await fetch(`${server.url}/metrics`);
        assert.equal(response.status, 200);
        assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
        assert.equal(valueIn(await response.text(), 'dragnet_urls_admitted_total'), 3);
    });

    it('serves /status as JSON with the live numbers', async () => {
        stats.admitted = 30;
        stats.succeeded = 10;
        stats.retries = 2;
        stats.itemsStored = 9;
        stats.itemsInvalid = 1;
        const response = await fetch(`${server.url}/status?pretty`);
        assert.equal(response.status, 200);
        assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
        const status = (await response.json()) as Record<string, unknown>;
        for (const field of [
            'elapsedSec',
            'pages',
            'pagesPerSec',
            'queued',
            'inFlight',
            'retries',
            'deadLettered',
            'escalations',
            'invalidShare',
            'etaSec',
        ]) {
            assert.ok(field in status, `/status has ${field}`);
        }
        assert.equal(status.pages, 10);
        assert.equal(status.inFlight, 7);
        assert.equal(status.queued, 13);
        assert.equal(status.retries, 2);
        assert.equal(status.invalidShare, 0.1);
    });

    it('answers 404 elsewhere and 405 to anything but GET and HEAD', async () => {
        assert.equal((await fetch(`${server.url}/`)).status, 404);
        assert.equal((await fetch(`${server.url}/metrics/x`)).status, 404);
        assert.equal((await fetch(`${server.url}/metrics`, { method: 'POST' })).status, 405);
        const head = await fetch(`${server.url}/status`, { method: 'HEAD' });
        assert.equal(head.status, 200);
        assert.equal(await head.text(), '');
    });

    it('says which port is taken', async () => {
        const metrics = new Metrics({ stats, processMetrics: false });
        await assert.rejects(
            startStatusServer({ port: server.port, metrics, status: () => ({}) }),
            /cannot serve metrics on 127\.0\.0\.1:\d+: EADDRINUSE/,
        );
    });

    it('stops listening when closed, even with a keep-alive connection open', async () => {
        const metrics = new Metrics({ stats, processMetrics: false });
        const other = await startStatusServer({ port: 0, metrics, status: () => ({}) });
        await fetch(`${other.url}/status`, { keepalive: true });
        await other.close();
        await assert.rejects(fetch(`${other.url}/status`));
    });
});

/** A port nothing listens on just now. */
async function freePort(): Promise<number> {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as { port: number };
    await new Promise((resolve) => probe.close(resolve));
    return port;
}

// The skip goes once crawl() takes `metricsPort` (run.ts wiring).
describe('a crawl with --metrics-port', () => {
    let shop: Shop;
    let storageDir: string;
    let result: CrawlResult;
    const scrapes: Array<{ at: number; text: string }> = [];
    let status: Record<string, unknown> | undefined;
    let port: number;

    before(async () => {
        // 300 products answering after 20 ms: a run of several seconds (Crawlee's
        // pool starts at one request in flight); no page needs a browser.
        shop = await startShop({
            seed: 5,
            products: 300,
            latencyMs: 20,
            scriptOnlyRate: 0,
            transientFailureRate: 0.03,
        });
        storageDir = await mkdtemp(join(tmpdir(), 'dragnet-metrics-'));
        port = await freePort();
        const running = crawl({
            site: siteDefinition,
            startUrls: [`${shop.url}/`],
            storageDir,
            maxConcurrency: 5,
            browserConcurrency: 1,
            retry: { maxAttempts: 4 },
            requestTimeoutSecs: 15,
            progressIntervalSecs: 60,
            chromiumPath: undefined,
            metricsPort: port,
            log: createLogger({ level: 'silent' }),
        });
        let done = false;
        void running.finally(() => {
            done = true;
        });
        // Scrape as Prometheus would, faster: every 250 ms until the run ends.
        while (!done) {
            await sleep(250);
            try {
                const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
                if (!done) scrapes.push({ at: Date.now(), text });
                const json = (await (await fetch(`http://127.0.0.1:${port}/status`)).json()) as Record<string, unknown>;
                if (!done) status = json;
            } catch {
                // Not listening yet, or already closed.
            }
        }
        result = await running;
    });

    after(async () => {
        await shop?.close();
        if (storageDir) await rm(storageDir, { recursive: true, force: true });
    });

    it('finished the crawl', () => {
        assert.equal(result.exitCode, 0);
        assert.ok(result.summary.items.stored >= 300, `stored ${result.summary.items.stored}`);
    });

    it('served /metrics during the run, with the request counters moving between scrapes', () => {
        assert.ok(scrapes.length >= 2, `scraped ${scrapes.length} times during the run`);
        const ok = scrapes.map(({ text }) => valueIn(text, 'dragnet_requests_total{stage="http",status="200"}'));
        const pages = scrapes.map(({ text }) => valueIn(text, 'dragnet_pages_succeeded_total'));
        assert.ok(
            ok.some((count, index) => index > 0 && count > ok[index - 1]!),
            `200s per scrape: ${ok.join(', ')}`,
        );
        assert.ok(pages.at(-1)! > pages[0]!, `pages per scrape: ${pages.join(', ')}`);
        const last = scrapes.at(-1)!.text;
        assert.ok(valueIn(last, 'dragnet_fetch_duration_seconds_count{stage="http"}') > 0);
        // The shop answers after 20 ms, so no fetch is in the first bucket.
        assert.equal(valueIn(last, 'dragnet_fetch_duration_seconds_bucket{le="0.01",stage="http"}'), 0);
        assert.ok(valueIn(last, 'dragnet_items_total{route="product",outcome="valid"}') > 0);
        assert.match(last, /^dragnet_in_flight\{stage="http"\} \d+$/m);
        assert.match(last, /^process_resident_memory_bytes /m);
    });

    it('served /status during the run', () => {
        assert.ok(status, 'no /status answer during the run');
        assert.equal(status.site, 'demo-shop');
        assert.ok((status.pages as number) > 0);
        assert.equal(typeof status.inFlight, 'number');
        assert.ok(status.etaSec === null || typeof status.etaSec === 'number');
        assert.ok('http' in (status.stages as object));
    });

    it('closed the server at the end of the run', async () => {
        await assert.rejects(fetch(`http://127.0.0.1:${port}/status`));
    });
});
