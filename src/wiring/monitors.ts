/**
 * What watches a run while it goes: the progress line (live on a terminal), the timeline the run
 * report draws, the metrics and `/status` server when a metrics port is asked for, and in the
 * distributed mode the exchange of fleet-wide policy. Part of step 3 (rounds.ts).
 */
import { CRAWL_DEFAULTS } from '../options/crawlOptions.js';
import { LiveStatus } from '../monitor/live.js';
import { startLiveProgress } from '../monitor/liveProgress.js';
import { stderrLine } from '../monitor/pinnedLine.js';
import { startProgress } from '../monitor/progress.js';
import { startRetrySummary } from '../monitor/retrySummary.js';
import { startStatusServer } from '../monitor/statusServer.js';
import { Timeline } from '../monitor/timeline.js';
import type { Pipeline } from './build.js';
import { shareFleetPolicy } from './fleetPolicy.js';

export interface Monitors {
    timeline: Timeline;
    /** Stops them all; the timeline takes a last sample. */
    stop(): Promise<void>;
}

export async function startMonitors(pipeline: Pipeline): Promise<Monitors> {
    const {
        options,
        stores: { stats },
        stages,
        metrics,
    } = pipeline;
    const { site, log, progressIntervalSecs = CRAWL_DEFAULTS.progressIntervalSecs } = options;
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
    const stopProgress = showProgress(pipeline, progressIntervalSecs * 1000);
    const stopRetrySummary = startRetrySummary({ stats, log, intervalMs: progressIntervalSecs * 1000 });
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
    const stopSharing = shareFleetPolicy(pipeline);
    return {
        timeline,
        stop: async () => {
            stopProgress();
            stopRetrySummary();
            await stopSharing();
            timeline.stop();
            await statusServer?.close();
        },
    };
}

/** The progress line as `options.progress` asks; returns the function that stops it. */
function showProgress({ options, stores: { stats }, stages }: Pipeline, intervalMs: number): () => void {
    const { log, progress = CRAWL_DEFAULTS.progress } = options;
    if (progress === 'off') return () => {};
    // A log quieter than info shows no progress lines, and so no live line either.
    if (progress === 'auto' && stderrLine && log.isLevelEnabled('info')) {
        return startLiveProgress({
            stats,
            line: stderrLine,
            rateWindowMs: intervalMs,
            load: stages.load,
            // A worker's own admissions are only its part of the fleet's: no total to draw against.
            maxRequests: options.distributed ? undefined : options.maxRequests,
        });
    }
    return startProgress({ stats, log, intervalMs, load: stages.load });
}
