/**
 * dragnet's public API, imported as `'dragnet'`: the route API a site module is written against
 * (`defineSite`, its helpers and types), `loadSite()`, and `crawl()`, one run of a site through the
 * whole pipeline.
 *
 * @packageDocumentation
 */
import type { CrawlOptions, CrawlResult } from './options/crawlOptions.js';

export { findChromium } from './fetch/browser/chromium.js';
export type {
    CrawlOptions,
    CrawlResult,
    DistributedOptions,
    ProgressView,
    ProxyOptions,
} from './options/crawlOptions.js';
export type {
    CheckedRoute,
    Draft,
    EnqueueRule,
    Extracted,
    PageContext,
    ProxyTierDefinition,
    Renderer,
    RenderPolicy,
    Route,
    RouteDefinition,
    Site,
    SiteDefinition,
    UrlMatcher,
    WireChoice,
    WireProfile,
    WithoutStrayKeys,
} from './site/site.js';
export { collapsedText, defineSite, elementsOf, firstNumber, numberOf, textOf } from './site/site.js';
export { loadSite } from './site/sites.js';
export type { RenderLearningOptions } from './fetch/browser/renderLearning.js';
export type { LookupFunction } from './fetch/egress/egress.js';
export type { TierControllerOptions, TierCounts, TierTally } from './fetch/egress/tierController.js';
export type { RetryPolicyOptions } from './fetch/failures/retryPolicy.js';
export type { AdaptiveTimeoutOptions } from './fetch/pacing/adaptiveTimeout.js';
export type { ConcurrencyControllerOptions } from './fetch/pacing/concurrencyController.js';
export type { MachineShortage } from './fetch/pacing/machineRoom.js';
export type { DriftBreakerOptions } from './quality/driftBreaker.js';
export type { RevisitBounds } from './frontier/revisitPolicy.js';
export type {
    ChangeCounts,
    ConcurrencyDecision,
    ConcurrencyReason,
    DomainConcurrency,
    ErrorsByClass,
    ExitCounters,
    LinksSkipped,
    RecrawlReport,
    PolitenessReport,
    ProxyReport,
    RenderDecision,
    RenderMode,
    RouteStats,
    RunSummary,
    SeenSetReport,
    SitemapReport,
    TierMove,
    Trip,
} from './vocabulary/report.js';
export { FAILURE_CLASSES, type FailureClass } from './vocabulary/failure.js';

/**
 * Crawls `options.site` through the whole pipeline, as `npm start` does: the start URLs through the
 * frontier, the HTTP stage and, for the pages whose required fields are missing, the browser stage;
 * items, quarantine, dead-letter and raw pages into `options.storageDir`. Resolves when both queues
 * are drained, the request budget is spent or a signal stopped the run, with the run's summary and
 * its exit code.
 *
 * Route files load this module in every parse worker and in `export` and `reparse`, so the
 * pipeline (Crawlee, Playwright, the queues and stores) is loaded here, on the first call, not
 * when `'dragnet'` is imported.
 *
 * @example
 * ```ts
 * import { crawl, loadSite } from 'dragnet';
 *
 * const { summary, exitCode } = await crawl({ site: await loadSite('books-toscrape'), maxRequests: 100 });
 * console.log(`${summary.items.stored} items`);
 * ```
 */
export async function crawl(options: CrawlOptions): Promise<CrawlResult> {
    const run = await import('./run.js');
    return run.crawl(options);
}
