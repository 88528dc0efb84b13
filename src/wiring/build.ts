/**
 * Wiring, step 2 of 4 (open → build → run → finish; see run.ts): the pipeline's parts for one run,
 * built over the stores that step 1 opened, and each observer subscribed to the run's events.
 */
import type { HttpCrawler, HttpCrawlingContext } from '@crawlee/http';
import { CRAWL_DEFAULTS, type RunOptions } from '../options/crawlOptions.js';
import { AdaptiveTimeout } from '../fetch/pacing/adaptiveTimeout.js';
import { browserPages } from '../fetch/browser/browserConcurrency.js';
import { BrowserStageRunner } from '../fetch/browser/browserStageRunner.js';
import { ConcurrencyController } from '../fetch/pacing/concurrencyController.js';
import { createHttpStage } from '../fetch/http/httpStage.js';
import type { StageOptions } from '../fetch/stageOptions.js';
import { RenderLearner } from '../fetch/browser/renderLearning.js';
import { RetryPolicy } from '../fetch/failures/retryPolicy.js';
import { Egress } from '../fetch/egress/egress.js';
import { HttpClient } from '../fetch/http/httpClient.js';
import { ChromeWire } from '../fetch/wire/chromeWire.js';
import { createRobotsFetch } from '../fetch/http/robotsFetch.js';
import { Frontier } from '../frontier/frontier.js';
import { RedisRequestBudget } from '../frontier/redis/redisRequestBudget.js';
import { RedisFleetLimits } from '../fetch/pacing/redisFleetLimits.js';
import { LocalRequestBudget, type RequestBudget } from '../frontier/requestBudget.js';
import { RobotsPolicy } from '../frontier/robots.js';
import { SiteScope } from '../frontier/scope.js';
import { RunningStages } from '../monitor/live.js';
import type { Metrics } from '../monitor/metrics.js';
import { PageHandler } from '../parse/pageHandler.js';
import { createPageParser, defaultParseWorkers, type PageParser } from '../parse/pageParser.js';
import { DriftBreaker } from '../quality/driftBreaker.js';
import { RunEvents } from '../vocabulary/events.js';
import { observeRun } from './observers.js';
import type { ProxyRouting } from '../fetch/egress/proxyRouting.js';
import { buildRouting } from './proxies.js';
import { followPoolLimit, httpWidth } from './httpWidth.js';
import type { RunStores } from './stores.js';

export interface Pipeline {
    options: RunOptions;
    stores: RunStores;
    frontier: Frontier;
    parser: PageParser;
    /** The stages' crawlers, so their load can be read whenever it is asked for. */
    stages: RunningStages;
    renderLearner: RenderLearner;
    driftBreaker: DriftBreaker;
    /** Adaptive concurrency; undefined when it is off. */
    concurrency?: ConcurrencyController;
    /** The fleet's concurrency limits, read from Redis each second; undefined unless adaptive in a fleet. */
    fleetLimits?: RedisFleetLimits;
    /** Prometheus metrics; undefined when no metrics port is served. */
    metrics?: Metrics;
    /** Renders escalated pages beside the HTTP stage. */
    browserStage: BrowserStageRunner;
    /** Which tier, exit and session each request takes, and the site's politeness. */
    routing: ProxyRouting;
    /** Where requests may connect (the sitemaps' too, sitemapSeeding.ts). */
    egress: Egress;
    /** What the pages, robots.txt and sitemaps are fetched with: one client, its connections kept across rounds. */
    httpClient: HttpClient;
    /** A new HTTP stage: one per round (see rounds.ts). */
    httpStage(): HttpCrawler<HttpCrawlingContext>;
}

export async function buildPipeline(stores: RunStores, options: RunOptions): Promise<Pipeline> {
    const { site, log } = options;
    const { requestTimeoutSecs = CRAWL_DEFAULTS.requestTimeoutSecs, browserWaitSecs = CRAWL_DEFAULTS.browserWaitSecs } =
        options;
    const { config, httpQueue, browserQueue, raw, stats, seenSet, outcomes } = stores;
    // The parts that check their options come first: one that throws does so before a parse worker starts.
    const retryPolicy = new RetryPolicy(options.retry);
    const renderLearner = new RenderLearner(options.renderLearning);
    const driftBreaker = new DriftBreaker(options.driftBreaker);
    const timeouts = options.adaptiveTimeout ?? CRAWL_DEFAULTS.adaptiveTimeout;
    const adaptiveTimeout = timeouts
        ? new AdaptiveTimeout(requestTimeoutSecs * 1000, timeouts === true ? {} : timeouts)
        : undefined;
    const adaptive = options.adaptiveConcurrency ?? CRAWL_DEFAULTS.adaptiveConcurrency;
    const width = httpWidth(options, site.maxConcurrency, adaptive !== false);
    const fleetLimits =
        adaptive && stores.shared
            ? await RedisFleetLimits.open({
                  redis: stores.shared.redis,
                  key: `${stores.shared.keyPrefix}:concurrency`,
              })
            : undefined;
    const concurrency = adaptive
        ? new ConcurrencyController({ ...(adaptive === true ? {} : adaptive), ...width }, fleetLimits)
        : undefined;
    if (concurrency) followPoolLimit(httpQueue, concurrency);
    const events = new RunEvents();
    const startUrls = options.startUrls.length > 0 ? options.startUrls : site.startUrls;
    const allowedDomains = [...(site.allowedDomains ?? []), ...(options.allowDomains ?? [])];
    const egress = new Egress({
        startUrls,
        allowPrivateNetwork: options.allowPrivateNetwork,
        lookup: options.dnsLookup,
    });
    // robots.txt goes out by the cheapest tier, as the site's pages do; the politeness reads its Crawl-delay.
    let robots: RobotsPolicy | undefined;
    const routing = await buildRouting(
        site,
        options.proxies ?? {},
        stores,
        () => robots,
        log,
        options.chromiumPath,
        options.retry?.maxRetryAfterSecs,
    );
    const { chromiumPath } = options;
    const httpClient = new HttpClient({
        lookup: egress.lookup,
        chrome:
            chromiumPath !== undefined && routing.tiers.some((tier) => tier.wire === 'chrome')
                ? new ChromeWire({ executablePath: chromiumPath, egress })
                : undefined,
    });
    if (options.respectRobotsTxt !== false) {
        const session = () => routing.cheapestSession();
        robots = new RobotsPolicy({ fetch: createRobotsFetch({ egress, client: httpClient, session }), log });
    }
    const frontier = new Frontier({
        site,
        seenSet,
        httpQueue,
        browserQueue,
        robots,
        scope: new SiteScope({
            startUrls,
            allowedDomains,
        }),
        stats,
        log,
        budget: requestBudget(options.maxRequests, stores),
    });
    const parser = createPageParser(site, options.parseWorkers ?? defaultParseWorkers(), {
        extractTimeoutSecs: options.extractTimeoutSecs,
    });
    const pageHandler = new PageHandler({
        frontier,
        parser,
        raw,
        events,
        log,
        history: stores.history,
        recrawl: stores.series.mode === 'recrawl',
        revisit: options.revisit ?? {},
    });
    const stages = new RunningStages();
    // prom-client is loaded only for a run that serves metrics (it and OpenTelemetry's API are ~10 MB).
    const metrics =
        options.metricsPort === undefined
            ? undefined
            : new (await import('../monitor/metrics.js')).Metrics({
                  stats,
                  load: stages.load,
                  concurrency,
                  proxies: () => routing.report(),
              });
    observeRun(events, { stats, metrics, concurrency, adaptiveTimeout, renderLearner, driftBreaker, log });

    const stageOptions: Omit<StageOptions, 'queue' | 'maxConcurrency'> = {
        site,
        config,
        frontier,
        pageHandler,
        outcomes,
        events,
        log,
        retryPolicy,
        requestTimeoutSecs,
        driftBreaker,
        egress,
        routing,
        httpClient,
        maxResponseBytes: (options.maxResponseMb ?? CRAWL_DEFAULTS.maxResponseMb) * 1024 * 1024,
    };
    const browserStage = new BrowserStageRunner({
        queue: browserQueue,
        createStage: async (executablePath) => {
            // Loaded here, when a page first needs the browser: a crawl that renders nothing never
            // loads Playwright (~90 MB of memory; see browserStage.ts).
            const { createBrowserStage } = await import('../fetch/browser/browserStage.js');
            return stages.watch(
                'browser',
                await createBrowserStage({
                    ...stageOptions,
                    queue: browserQueue,
                    pages: browserPages({ limit: options.browserConcurrency, memoryMb: options.memoryMb }),
                    siteHosts: [...new Set(startUrls.map((url) => new URL(url).hostname)), ...allowedDomains],
                    executablePath,
                    waitForTimeoutMillis: browserWaitSecs * 1000,
                }),
            );
        },
        chromiumPath: options.chromiumPath,
        outcomes,
        log,
    });
    return {
        options,
        stores,
        frontier,
        parser,
        stages,
        renderLearner,
        driftBreaker,
        concurrency,
        fleetLimits,
        metrics,
        browserStage,
        routing,
        egress,
        httpClient,
        httpStage: () =>
            stages.watch(
                'http',
                createHttpStage({
                    ...stageOptions,
                    queue: httpQueue,
                    maxConcurrency: width.maxConcurrency,
                    renderLearner,
                    concurrency,
                    adaptiveTimeout,
                }),
            ),
    };
}

/** The run's request budget: the fleet's in Redis when it has one, else this process's (a resumed run's admissions spent). */
function requestBudget(maxRequests: number | undefined, stores: RunStores): RequestBudget | undefined {
    if (maxRequests === undefined) return undefined;
    if (stores.shared)
        return new RedisRequestBudget(stores.shared.redis, `${stores.shared.keyPrefix}:budget`, maxRequests);
    return new LocalRequestBudget(maxRequests, stores.stats.admitted);
}
