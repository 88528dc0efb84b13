/**
 * Wiring: opens the site's stores (resuming an unfinished run), builds the frontier and the two
 * stages, and runs them in rounds until both queues are drained — the browser stage can discover
 * links for the HTTP stage and the HTTP stage escalates pages to the browser — or until SIGINT or
 * SIGTERM stops the run gracefully.
 */
import { constants } from 'node:os';
import type { Logger } from 'pino';
import { AdaptiveTimeout, type AdaptiveTimeoutOptions } from './fetch/adaptiveTimeout.js';
import { BrowserStageRunner } from './fetch/browserStageRunner.js';
import { ConcurrencyController, type ConcurrencyControllerOptions, type ConcurrencyDecision } from './fetch/concurrencyController.js';
import { runAtControlledConcurrency } from './fetch/controlledPool.js';
import { createHttpStage, type StageOptions } from './fetch/httpStage.js';
import { PageHandler } from './fetch/pageHandler.js';
import { createPageParser, defaultParseWorkers } from './fetch/pageParser.js';
import { RenderLearner, type RenderLearningOptions } from './fetch/renderLearning.js';
import { RetryPolicy, type RetryPolicyOptions } from './fetch/retryPolicy.js';
import { DriftBreaker, type DriftBreakerOptions } from './quality/driftBreaker.js';
import { Frontier } from './frontier/frontier.js';
import { RobotsPolicy } from './frontier/robots.js';
import { LiveStatus, RunningStages } from './monitor/live.js';
import { Metrics } from './monitor/metrics.js';
import { startProgress } from './monitor/progress.js';
import { renderReport } from './monitor/report.js';
import { Timeline } from './monitor/timeline.js';
import { runId, writeReport } from './monitor/writeReport.js';
import { startStatusServer } from './monitor/statusServer.js';
import { buildSummary, type RunSummary } from './monitor/summary.js';
import type { Site } from './site.js';
import { Outcomes } from './store/outcomes.js';
import { openSiteStores } from './store/siteStores.js';
import { onStopSignal } from './stopSignal.js';

/** Defaults of the crawl options; the command line shows and uses the same. */
export const CRAWL_DEFAULTS = {
    maxConcurrency: 20,
    browserConcurrency: 4,
    requestTimeoutSecs: 30,
    browserWaitSecs: 10,
    progressIntervalSecs: 5,
};

export interface CrawlOptions {
    site: Site;
    /** Normalized start URLs; the site's own when empty. */
    startUrls: string[];
    /** Root of all storage. An unfinished run of the site found there is resumed; else the site's stores are emptied first. */
    storageDir: string;
    /** Start over even when an unfinished run of the site is in the storage dir. Default: false. */
    fresh?: boolean;
    /** Take queued requests in random order, so failures spread over the run instead of clustering. Default: false. */
    randomOrder?: boolean;
    /** Most HTTP requests in flight. Default: 20. */
    maxConcurrency?: number;
    /** Most browser pages open at once. Default: 4. */
    browserConcurrency?: number;
    /**
     * Worker threads that parse pages and run their extractors, when the site was loaded from a
     * module (`loadSite`); 0 parses in the crawling thread. Default: one per core beyond two, at
     * most 4 (see pageParser.ts).
     */
    parseWorkers?: number;
    /** Most URLs admitted to the frontier. Default: no limit. */
    maxRequests?: number;
    /** Attempts, backoff and Retry-After limits of failed requests. Defaults: see RetryPolicyOptions. */
    retry?: RetryPolicyOptions;
    /** Time for one fetch or browser navigation. Default: 30 s. */
    requestTimeoutSecs?: number;
    /**
     * Give an HTTP fetch's first attempt a timeout learned from the site's response times (see
     * AdaptiveTimeout), so a hung request does not hold its slot for the whole `requestTimeoutSecs`;
     * `true` with the defaults, or options. Default: true.
     */
    adaptiveTimeout?: boolean | AdaptiveTimeoutOptions;
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
    /**
     * 0 when every page could be handled as the site asks; 1 when pages needed a browser that was
     * missing; 3 when the drift breaker stopped a route; 130 (SIGINT) or 143 (SIGTERM) when a signal
     * stopped the run before it was done — run it again to resume.
     */
    exitCode: number;
    /** The concurrency controller's recent decisions, oldest first; empty when adaptive concurrency is off. */
    concurrencyDecisions: ConcurrencyDecision[];
}

export async function crawl(options: CrawlOptions): Promise<CrawlResult> {
    const { site, log } = options;
    const {
        maxConcurrency = CRAWL_DEFAULTS.maxConcurrency,
        browserConcurrency = CRAWL_DEFAULTS.browserConcurrency,
        requestTimeoutSecs = CRAWL_DEFAULTS.requestTimeoutSecs,
        browserWaitSecs = CRAWL_DEFAULTS.browserWaitSecs,
        progressIntervalSecs = CRAWL_DEFAULTS.progressIntervalSecs,
    } = options;
    const stores = await openSiteStores({ ...options, site: site.name });
    const { names, config, storage, httpQueue, browserQueue, raw, runState, stats, seenSet } = stores;
    const takenOver = stores.lock.takenOverFrom;
    if (takenOver) {
        log.warn(
            { holder: takenOver },
            `took over the lock of ${site.name} from process ${takenOver.pid} on host ${takenOver.host}: it cannot be checked from here ` +
                'whether that run still goes on; a storage dir is not meant to be shared between machines',
        );
    }
    if (stores.resumed) {
        const { pending, handled, locksReleased } = stores.resumed;
        log.info(
            { ...stores.resumed, session: stats.sessions + 1 },
            `resuming the unfinished run of ${site.name}: ${pending} requests pending, ${handled} done` +
                `${locksReleased ? `, ${locksReleased} taken back from the stopped process` : ''} (--fresh starts over)`,
        );
    }
    const outcomes = new Outcomes({ storage, names, stats, runState });
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
    const parser = createPageParser(site, options.parseWorkers ?? defaultParseWorkers());
    const pageHandler = new PageHandler({ frontier, parser, raw, stats, renderLearner, driftBreaker, log });
    const stages = new RunningStages();
    const timeouts = options.adaptiveTimeout ?? true;
    const adaptiveTimeout = timeouts ? new AdaptiveTimeout(requestTimeoutSecs * 1000, timeouts === true ? {} : timeouts) : undefined;
    const adaptive = options.adaptiveConcurrency ?? true;
    const concurrency = adaptive ? new ConcurrencyController({ ...(adaptive === true ? {} : adaptive), maxConcurrency }) : undefined;
    const metrics = options.metricsPort === undefined ? undefined : new Metrics({ stats, load: stages.load, concurrency });
    const stageOptions: Omit<StageOptions, 'queue' | 'maxConcurrency'> = {
        site,
        config,
        frontier,
        pageHandler,
        outcomes,
        stats,
        log,
        retryPolicy: new RetryPolicy(options.retry),
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
        createStage: async (executablePath) => {
            // Loaded here, when a page first needs the browser: a crawl that renders nothing never
            // loads Playwright (~90 MB of memory; see browserStage.ts).
            const { createBrowserStage } = await import('./fetch/browserStage.js');
            return stages.watch(
                'browser',
                createBrowserStage({
                    ...stageOptions,
                    queue: browserQueue,
                    maxConcurrency: browserConcurrency,
                    executablePath,
                    waitForTimeoutMillis: browserWaitSecs * 1000,
                }),
            );
        },
        chromiumPath: options.chromiumPath,
        outcomes,
        log,
    });
    // Both crawlers share one event manager that neither owns, so one finishing does not stop the other's.
    const events = config.getEventManager();
    await events.init();
    let httpStage: ReturnType<typeof createHttpStage> | undefined;
    let stopped: NodeJS.Signals | undefined;
    const removeStopHandler = onStopSignal((signal) => {
        stopped = signal;
        log.warn(`${signal}: stopping; pages in flight finish, the rest stays queued for the next run (again to quit at once)`);
        httpStage?.stop(`${signal}: no new requests`);
        browserStage.stop();
    });
    try {
        while (!stopped && !((await httpQueue.isFinished()) && (await browserQueue.isFinished()))) {
            browserStage.start();
            httpStage = stages.watch('http', createHttpStage({ ...stageOptions, queue: httpQueue, maxConcurrency, renderLearner, concurrency, adaptiveTimeout }));
            await runAtControlledConcurrency(httpStage, concurrency);
            await browserStage.finish();
        }
    } finally {
        removeStopHandler();
        stopProgress();
        timeline.stop();
        await statusServer?.close();
        await events.close();
        await parser.close();
        await raw.flush();
        stores.lock.release();
        await storage.close();
    }

    const summary = buildSummary(stats, {
        site: site.name,
        seenSet,
        render: renderLearner.decisions(),
        drift: driftBreaker.tripped,
        concurrency: concurrency?.byDomain(),
        browserAvailable: (await browserStage.available()) ?? options.chromiumPath !== undefined,
        stopped,
        storage: {
            dir: options.storageDir,
            dataset: names.items,
            quarantine: names.quarantine,
            deadLetter: names.deadLetter,
            rawPages: raw.dir,
        },
    });
    const exitCode = stopped ? 128 + constants.signals[stopped] : driftBreaker.tripped.length > 0 ? 3 : browserStage.unrendered > 0 ? 1 : 0;
    const report = await writeReport(options.storageDir, runId(site.name, stats.startedAt), renderReport({ ...summary, exitCode }, timeline.points));
    log.info({ report }, `run report: ${report}`);
    return { summary: { ...summary, report }, exitCode, concurrencyDecisions: concurrency?.decisions() ?? [] };
}
