/**
 * The width found, not configured: with no `maxConcurrency`, the concurrency controller starts at
 * 20 and raises the width while the site answers cleanly at flat response times. Against a shop
 * that serves any number at once with 1 s a page, the width must rise past 200 within the run;
 * against one that answers 429 above 30 requests in flight, it must settle at 30 or under, with
 * few of its requests refused. Both store every product.
 */
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { mkdtemp, rm } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import siteDefinition from '../../routes/demo-shop.js';
import { startShop, type ShopOptions } from '../../src/demo/shop.js';
import { createLogger } from '../../src/monitor/logger.js';
import type { CrawlResult } from '../../src/options/crawlOptions.js';
import { crawl } from '../../src/run.js';
import type { ConcurrencyDecision } from '../../src/vocabulary/report.js';

const SHOP_LIMIT = 30;

interface FoundRun {
    result: CrawlResult;
    startedAt: number;
    finishedAt: number;
    /** Most requests the shop held open at once. */
    peakInFlight: number;
    requests: number;
    refused: number;
}

const storageDirs: string[] = [];

/** Crawls a fresh shop with no `maxConcurrency`, counting what the shop holds open at once. */
async function crawlWithoutWidth(shopOptions: ShopOptions): Promise<FoundRun> {
    const shop = await startShop({
        seed: 31,
        categories: 30,
        productsPerPage: 50,
        scriptOnlyRate: 0,
        transientFailureRate: 0,
        notFoundLinks: 0,
        ...shopOptions,
    });
    let inFlight = 0;
    let peakInFlight = 0;
    const onRequest = (message: unknown) => {
        peakInFlight = Math.max(peakInFlight, ++inFlight);
        (message as { response: ServerResponse }).response.once('close', () => (inFlight -= 1));
    };
    subscribe('http.server.request.start', onRequest);
    const storageDir = await mkdtemp(join(tmpdir(), 'dragnet-found-width-'));
    storageDirs.push(storageDir);
    const startedAt = Date.now();
    try {
        const result = await crawl({
            site: siteDefinition,
            startUrls: [`${shop.url}/`],
            storageDir,
            // Refused requests are retried until they get through: every product must be stored.
            retry: { maxAttempts: 101, maxDelaySecs: 0.5 },
            progressIntervalSecs: 60,
            chromiumPath: undefined,
            log: createLogger({ level: 'silent' }),
        });
        const stats = shop.stats();
        const refused = Object.values(stats.byPath).reduce((sum, byStatus) => sum + (byStatus['429'] ?? 0), 0);
        return { result, startedAt, finishedAt: Date.now(), peakInFlight, requests: stats.total, refused };
    } finally {
        unsubscribe('http.server.request.start', onRequest);
        await shop.close();
    }
}

function describeDecisions(decisions: ConcurrencyDecision[], startedAt: number): string[] {
    return decisions.map(
        (d) =>
            `${((d.at - startedAt) / 1000).toFixed(1)} s: ${d.from} → ${d.to} ${d.reason} ` +
            `(errors ${d.errorRate}, ${d.samples} samples, ${d.latencyMs} ms)`,
    );
}

after(async () => {
    for (const dir of storageDirs) await rm(dir, { recursive: true, force: true });
});

describe('the width found, at a site that serves any number at once, 1 s a page', () => {
    const PRODUCTS = 3_000;
    let run: FoundRun;

    it('stores every product', async () => {
        run = await crawlWithoutWidth({ products: PRODUCTS, latencyMs: 1_000 });
        assert.equal(run.result.exitCode, 0);
        assert.equal(run.result.summary.items.stored, PRODUCTS);
        assert.equal(run.result.summary.requests.deadLettered, 0);
    });

    it('rises from 20 past 200 within the run, on clean windows', (t) => {
        const { summary, concurrencyDecisions: decisions } = run.result;
        for (const line of describeDecisions(decisions, run.startedAt)) t.diagnostic(line);
        t.diagnostic(`the shop held at most ${run.peakInFlight} requests at once`);
        const [domain] = Object.values(summary.concurrency ?? {});
        assert.ok(domain, 'the summary has the domain');
        assert.equal(decisions[0]?.from, 20, 'starts at 20');
        assert.ok(domain.highest > 200, `highest limit ${domain.highest}`);
        assert.ok(run.peakInFlight > 200, `the shop held at most ${run.peakInFlight} at once`);
        assert.ok(
            decisions.every((d) => d.reason === 'clean' && d.to > d.from),
            'every change was a raise after a clean window',
        );
    });
});

describe(`the width found, at a site that answers 429 above ${SHOP_LIMIT} in flight`, () => {
    const PRODUCTS = 2_000;
    /** 30 at once at 300 ms is 100 requests/s, well within what one crawler process does: the shop's limit binds. */
    const LATENCY_MS = 300;
    let run: FoundRun;

    it('stores every product', async () => {
        run = await crawlWithoutWidth({
            products: PRODUCTS,
            latencyMs: LATENCY_MS,
            rateLimit: { maxConcurrent: SHOP_LIMIT },
        });
        assert.equal(run.result.exitCode, 0);
        assert.equal(run.result.summary.items.stored, PRODUCTS);
        assert.equal(run.result.summary.requests.deadLettered, 0);
    });

    it(`settles at ${SHOP_LIMIT} or under, with few requests refused`, (t) => {
        const { summary, concurrencyDecisions: decisions } = run.result;
        for (const line of describeDecisions(decisions, run.startedAt)) t.diagnostic(line);
        const refusedShare = run.refused / run.requests;
        t.diagnostic(`refused ${run.refused} of ${run.requests} requests (${(refusedShare * 100).toFixed(2)}%)`);
        const warmUpEnd = run.startedAt + (run.finishedAt - run.startedAt) * 0.25;
        const mean = meanLimitAfter(decisions, warmUpEnd, run.finishedAt);
        t.diagnostic(`limit after warm-up: time-weighted mean ${mean.toFixed(1)}`);
        assert.ok(mean <= SHOP_LIMIT && mean > SHOP_LIMIT / 2, `settled limit ${mean.toFixed(1)}`);
        const [domain] = Object.values(summary.concurrency ?? {});
        // The run may end on a probe: one step above the ceiling is how the limit finds it.
        assert.ok(domain && domain.limit <= SHOP_LIMIT + 1, `final limit ${domain?.limit}`);
        assert.ok(refusedShare < 0.05, `refused ${run.refused} of ${run.requests}`);
        assert.ok(
            decisions.some((d) => d.reason === 'errors' && d.to < d.from),
            'the limit was cut for the refusals',
        );
    });
});

/** The limit over [from, to], weighted by how long it was held; it starts at the first decision's `from`. */
function meanLimitAfter(decisions: ConcurrencyDecision[], from: number, to: number): number {
    let limit = decisions[0]?.from ?? 0;
    let at = from;
    let weighted = 0;
    for (const decision of decisions) {
        if (decision.at > at && decision.at <= to) {
            weighted += limit * (decision.at - at);
            at = decision.at;
        }
        limit = decision.to;
    }
    weighted += limit * (to - at);
    return weighted / (to - from);
}
