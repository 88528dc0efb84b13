/**
 * Wiring: opens the site's stores, builds the frontier and the two stages, and runs them in
 * rounds until both queues are drained — the browser stage can discover links for the HTTP
 * stage and the HTTP stage escalates pages to the browser.
 */
import { type Configuration, Dataset } from '@crawlee/core';
import type { Logger } from 'pino';
import { createBrowserStage } from './fetch/browserStage.js';
import { BrowserStageRunner } from './fetch/browserStageRunner.js';
import { ConcurrencyController, type ConcurrencyControllerOptions, type ConcurrencyDecision } from './fetch/concurrencyController.js';
import { runAtControlledConcurrency } from './fetch/controlledPool.js';
import { createHttpStage, type StageOptions } from './fetch/httpStage.js';
import { PageHandler } from './fetch/pageHandler.js';
import { RenderLearner, type RenderLearningOptions } from './fetch/renderLearning.js';
import { DriftBreaker, type DriftBreakerOptions } from './quality/driftBreaker.js';
import { DeadLetter, type DeadLetterEntry } from './frontier/deadLetter.js';
import { BloomSeenSet } from './frontier/bloomSeenSet.js';
import { Frontier } from './frontier/frontier.js';
import { RobotsPolicy } from './frontier/robots.js';
import { MemorySeenSet } from './frontier/seenSet.js';
import { LiveStatus, RunningStages } from './monitor/live.js';
import { Metrics } from './monitor/metrics.js';
import { startProgress } from './monitor/progress.js';
import { renderReport } from './monitor/report.js';
import { Timeline } from './monitor/timeline.js';
import { runId, writeReport } from './monitor/writeReport.js';
import { startStatusServer } from './monitor/statusServer.js';
import { RunStats } from './monitor/stats.js';
import { buildSummary, type RunSummary } from './monitor/summary.js';
import type { Site } from './site.js';
import { DatasetSink, openStorage, storeNames } from './store/datasets.js';
import { RawStore } from './store/rawStore.js';
import { BoundedRequestQueue } from './store/sqlite/boundedRequestQueue.js';
import type { QuarantineEntry, StoredItem } from './store/records.js';

/** Defaults of the crawl options; the command line shows and uses the same. */
export const CRAWL_DEFAULTS = {
    maxConcurrency: 20,
    browserConcurrency: 4,
    maxRetries: 3,
    requestTimeoutSecs: 30,
    browserWaitSecs: 10,
    progressIntervalSecs: 5,
};

export interface CrawlOptions {
    site: Site;
    /** Normalized start URLs; the site's own when empty. */
    startUrls: string[];
    /** Root of all storage; the site's stores in it are emptied when the run starts. */
    storageDir: string;
    /** Most HTTP requests in flight. Default: 20. */
    maxConcurrency?: number;
    /** Most browser pages open at once. Default: 4. */
    browserConcurrency?: number;
    /** Most URLs admitted to the frontier. Default: no limit. */
    maxRequests?: number;
    /** Retries of a transient failure before dead-letter. Default: 3. */
    maxRetries?: number;
    /** Time for one fetch or browser navigation. Default: 30 s. */
    requestTimeoutSecs?: number;
    /** Browser stage: the longest wait for a route's `waitFor`/`waitUntil` before the page is read as it is. Default: 10 s. */
    browserWaitSecs?: number;
    /** Time between progress lines. Default: 5 s. */
    progressIntervalSecs?: number;
    /** The Chromium to render with; undefined when none was found, so escalated pages are dead-lettered. */
    chromiumPath: string | undefined;
    /** `exact` (default) or `bloom`: a fixed-memory filter sized by `expectedUrls` and `bloomErrorRate`. */
    seenSet?: 'exact' | 'bloom';
    expectedUrls?: number;
    bloomErrorRate?: number;
    /** When an `auto` route learns to skip the cheap fetch. Defaults: see RenderLearningOptions. */
    renderLearning?: RenderLearningOptions;
    /** When a route's invalid share stops it (or the run). Defaults: see DriftBreakerOptions. */
    driftBreaker?: DriftBreakerOptions;
    /** Serve Prometheus `/metrics` and JSON `/status` on this port of 127.0.0.1 while the run lasts (0: any free port). Default: no server. */
    metricsPort?: number;
    /** Where the metrics server listens. Default: 127.0.0.1. */
    metricsHost?: string;
    /**
     * Lower and raise the HTTP stage's concurrency per domain by the site's error rate (AIMD,
     * within 1..maxConcurrency, starting at maxConcurrency); `true` with the defaults, or options.
     * Default: true — at a healthy site it stays at maxConcurrency, so it costs nothing there.
     */
    adaptiveConcurrency?: boolean | Omit<ConcurrencyControllerOptions, 'maxConcurrency' | 'now'>;
    /** Obey robots.txt. Default: true. */
    respectRobotsTxt?: boolean;
    log: Logger;
}

export interface CrawlResult {
    summary: RunSummary;
    /** 0 when every page could be handled as the site asks; 1 when pages needed a browser that was missing; 3 when the drift breaker stopped a route. */
    exitCode: number;
    /** The concurrency controller's recent decisions, oldest first; empty when adaptive concurrency is off. */
    concurrencyDecisions: ConcurrencyDecision[];
}

export async function crawl(options: CrawlOptions): Promise<CrawlResult> {
    const { site, log } = options;
    const {
        maxConcurrency = CRAWL_DEFAULTS.maxConcurrency,
        browserConcurrency = CRAWL_DEFAULTS.browserConcurrency,
        maxRetries = CRAWL_DEFAULTS.maxRetries,
        requestTimeoutSecs = CRAWL_DEFAULTS.requestTimeoutSecs,
        browserWaitSecs = CRAWL_DEFAULTS.browserWaitSecs,
        progressIntervalSecs = CRAWL_DEFAULTS.progressIntervalSecs,
    } = options;
    const names = storeNames(site.name);
    const { config, storage } = openStorage(options.storageDir);
    await purgeSiteStores(site.name, options.storageDir, config);

    const stats = new RunStats();
    const httpQueue = await BoundedRequestQueue.open(names.httpQueue, { config });
    const browserQueue = await BoundedRequestQueue.open(names.browserQueue, { config });
    const items = await DatasetSink.open<StoredItem>(names.items, config);
    const quarantine = await DatasetSink.open<QuarantineEntry>(names.quarantine, config);
    const deadLetter = new DeadLetter(await DatasetSink.open<DeadLetterEntry>(names.deadLetter, config));
    const raw = await RawStore.open({ storageDir: options.storageDir, site: site.name });

    const seenSet =
        options.seenSet === 'bloom'
            ? new BloomSeenSet({ expectedItems: options.expectedUrls, falsePositiveRate: options.bloomErrorRate })
            : new MemorySeenSet();
    const frontier = new Frontier({
        site,
        seenSet,
        httpQueue,
        browserQueue,
        robots: options.respectRobotsTxt === false ? undefined : new RobotsPolicy(),
        stats,
        log,
        maxRequests: options.maxRequests,
    });
    const renderLearner = new RenderLearner(options.renderLearning);
    const driftBreaker = new DriftBreaker(options.driftBreaker);
    const pageHandler = new PageHandler({ frontier, items, quarantine, raw, stats, renderLearner, driftBreaker, log });
    const stages = new RunningStages();
    const adaptive = options.adaptiveConcurrency ?? true;
    const concurrency = adaptive ? new ConcurrencyController({ ...(adaptive === true ? {} : adaptive), maxConcurrency }) : undefined;
    const metrics = options.metricsPort === undefined ? undefined : new Metrics({ stats, load: stages.load, concurrency });
    const stageOptions: Omit<StageOptions, 'queue' | 'maxConcurrency'> = {
        site,
        config,
        frontier,
        pageHandler,
        deadLetter,
        stats,
        log,
        maxRetries,
        requestTimeoutSecs,
        driftBreaker,
        metrics,
    };

    const startUrls = options.startUrls.length > 0 ? options.startUrls : site.startUrls;
    await frontier.enqueue(startUrls.map((url) => ({ url })));
    log.info({ site: site.name, startUrls, storageDir: options.storageDir }, `crawling ${site.name}`);

    const live = new LiveStatus({ stats, load: stages.load });
    const statusServer =
        metrics && options.metricsPort !== undefined
            ? await startStatusServer({
                  port: options.metricsPort,
                  host: options.metricsHost,
                  metrics,
                  status: () => ({ site: site.name, ...live.snapshot(), stages: stages.load() }),
              })
            : undefined;
    if (statusServer) log.info(`metrics at ${statusServer.url}/metrics, status at ${statusServer.url}/status`);
    const stopProgress = startProgress({ stats, log, intervalMs: progressIntervalSecs * 1000, load: stages.load });
    const timeline = new Timeline(stats, {
        gauges: () => {
            const { http, browser } = stages.load();
            return {
                httpInFlight: http.inFlight,
                httpConcurrency: http.concurrencyLimit,
                browserInFlight: browser.inFlight,
                browserConcurrency: browser.concurrencyLimit,
            };
        },
    });
    timeline.start();
    const browserStage = new BrowserStageRunner({
        queue: browserQueue,
        createStage: (executablePath) =>
            stages.watch(
                'browser',
                createBrowserStage({
                    ...stageOptions,
                    queue: browserQueue,
                    maxConcurrency: browserConcurrency,
                    executablePath,
                    waitForTimeoutMillis: browserWaitSecs * 1000,
                }),
            ),
        chromiumPath: options.chromiumPath,
        deadLetter,
        stats,
        log,
    });
    // Both crawlers share one event manager that neither owns, so one finishing does not stop the other's.
    const events = config.getEventManager();
    await events.init();
    try {
        while (!((await httpQueue.isFinished()) && (await browserQueue.isFinished()))) {
            browserStage.start();
            const httpStage = stages.watch('http', createHttpStage({ ...stageOptions, queue: httpQueue, maxConcurrency, renderLearner, concurrency }));
            await runAtControlledConcurrency(httpStage, concurrency);
            await browserStage.finish();
        }
    } finally {
        stopProgress();
        timeline.stop();
        await statusServer?.close();
        await events.close();
        await Promise.all([items.flush(), quarantine.flush(), deadLetter.flush(), raw.flush()]);
        await storage.close();
    }

    const summary = buildSummary(stats, {
        site: site.name,
        seenSet,
        render: renderLearner.decisions(),
        drift: driftBreaker.tripped,
        concurrency: concurrency?.byDomain(),
        browserAvailable: (await browserStage.available()) ?? options.chromiumPath !== undefined,
        storage: {
            dir: options.storageDir,
            dataset: names.items,
            quarantine: names.quarantine,
            deadLetter: names.deadLetter,
            rawPages: raw.dir,
        },
    });
    const exitCode = driftBreaker.tripped.length > 0 ? 3 : browserStage.unrendered > 0 ? 1 : 0;
    const report = await writeReport(options.storageDir, runId(site.name, stats.startedAt), renderReport({ ...summary, exitCode }, timeline.points));
    log.info({ report }, `run report: ${report}`);
    return { summary: { ...summary, report }, exitCode, concurrencyDecisions: concurrency?.decisions() ?? [] };
}

/** A run starts clean: the site's queues, datasets and raw pages from an earlier run are removed. */
async function purgeSiteStores(site: string, storageDir: string, config: Configuration): Promise<void> {
    const names = storeNames(site);
    for (const name of [names.httpQueue, names.browserQueue]) {
        await (await BoundedRequestQueue.open(name, { config })).drop();
    }
    for (const name of [names.items, names.quarantine, names.deadLetter]) {
        await (await Dataset.open(name, { config })).drop();
    }
    await RawStore.purge({ storageDir, site });
}
