/**
 * Who listens to what the stages say (vocabulary/events.ts), in one place: the run's counters,
 * the metrics, the concurrency controller and the adaptive timeout (both learn from the HTTP
 * stage only), the render learner and the drift breaker. A new observer is one more function
 * here, not an edit to a stage.
 */
import type { Logger } from 'pino';
import type { AdaptiveTimeout } from '../fetch/pacing/adaptiveTimeout.js';
import type { ConcurrencyController } from '../fetch/pacing/concurrencyController.js';
import type { RenderLearner } from '../fetch/browser/renderLearning.js';
import type { Metrics } from '../monitor/metrics.js';
import type { RunStats } from '../monitor/stats.js';
import type { DriftBreaker } from '../quality/driftBreaker.js';
import type { RunEvents } from '../vocabulary/events.js';

export interface Observers {
    stats: RunStats;
    metrics?: Metrics;
    concurrency?: ConcurrencyController;
    adaptiveTimeout?: AdaptiveTimeout;
    renderLearner: RenderLearner;
    driftBreaker: DriftBreaker;
    log: Logger;
}

export function observeRun(
    events: RunEvents,
    { stats, metrics, concurrency, adaptiveTimeout, renderLearner, driftBreaker, log }: Observers,
): void {
    count(events, stats);
    if (metrics) measure(events, metrics);
    if (concurrency) controlConcurrency(events, concurrency, log);
    if (adaptiveTimeout) {
        events.on('responded', ({ stage, url, responseMs, wire }) => {
            if (stage === 'http' && responseMs !== undefined) adaptiveTimeout.responded(url, responseMs, wire);
        });
    }
    events.on('cheapFetchJudged', ({ route, neededBrowser }) => renderLearner.record(route, neededBrowser));
    watchDrift(events, driftBreaker, log);
}

/** The counters that are not counted with a commit (those are, in store/outcomes.ts). */
function count(events: RunEvents, stats: RunStats): void {
    events.on('pageFetched', ({ renderer, route }) => {
        if (renderer === 'http') stats.httpFetched += 1;
        else stats.browserRendered += 1;
        stats.route(route).pages += 1;
    });
    events.on('escalated', ({ route, failingFields }) => {
        stats.escalations += 1;
        stats.route(route).escalations += 1;
        stats.countFailingFields(route, failingFields);
    });
    events.on('sentToBrowser', () => {
        stats.directToBrowser += 1;
    });
    events.on('retryScheduled', ({ failure, attempt }) => {
        stats.errorsByClass[failure.failureClass] += 1;
        stats.retries += 1;
        stats.retryReasons[failure.reason] = (stats.retryReasons[failure.reason] ?? 0) + 1;
        if (attempt === 1) stats.retriedRequests += 1;
    });
}

/** Each attempt's status and latency, by stage. */
function measure(events: RunEvents, metrics: Metrics): void {
    events.on('attemptStarted', ({ request }) => metrics.fetchStarted(request));
    events.on('responded', ({ request, stage, status }) => metrics.responded(request, { stage, status }));
    events.on('attemptFailed', ({ request, stage }) => metrics.fetchFailed(request, stage));
}

/**
 * The HTTP stage's attempts and their outcomes: the evidence of the site's load. A cut is said at
 * info, as the site pushing back is worth seeing; a raise, which a found width makes every window, at debug.
 */
function controlConcurrency(events: RunEvents, concurrency: ConcurrencyController, log: Logger): void {
    concurrency.onDecision((decision) => {
        const { domain, from, to, reason, errorRate, blockRate } = decision;
        const why =
            reason === 'errors'
                ? `${Math.round(errorRate * 100)}% of its requests failed`
                : reason === 'blocks'
                  ? `${Math.round(blockRate * 100)}% of its requests were blocked`
                  : reason === 'ambient'
                    ? 'its errors did not fall with the last cut: they are its ambient rate'
                    : 'a clean window at flat response times';
        const level = to < from ? 'info' : 'debug';
        log[level]({ concurrency: decision }, `HTTP concurrency for ${domain}: ${from} → ${to} (${why})`);
    });
    events.on('attemptStarted', ({ stage, request, url }) => {
        if (stage === 'http') concurrency.started(request, url);
    });
    events.on('responded', ({ stage, request, status }) => {
        if (stage === 'http') concurrency.responded(request, status);
    });
    events.on('attemptFailed', ({ stage, request, failure }) => {
        if (stage === 'http') concurrency.failed(request, failure.failureClass);
    });
}

/** Every page's final verdict goes to the drift breaker, which says so loudly when it trips. */
function watchDrift(events: RunEvents, driftBreaker: DriftBreaker, log: Logger): void {
    events.on('recordsStored', ({ route, url, rawKey, quarantined, failingFields, issues }) => {
        const trip = driftBreaker.judge(route, {
            invalid: quarantined > 0,
            fields: failingFields,
            url,
            rawKey,
            issues,
        });
        if (!trip) return;
        const fields = Object.entries(trip.failingFields)
            .map(([field, count]) => `${field} ×${count}`)
            .join(', ');
        log.error(
            { drift: trip },
            `drift breaker tripped on route "${trip.route}" after ${trip.pagesJudged} pages: ` +
                `${Math.round(trip.invalidShare * 100)}% of recent pages invalid (${fields}); ` +
                `e.g. ${trip.samples[0]?.url}. ` +
                `Stopping the ${driftBreaker.scope === 'run' ? 'run' : 'route'}; raw pages of the samples are kept ` +
                `for reparse.`,
        );
    });
}
