/**
 * What watches a run while it goes: the progress line, the timeline the run report draws, the
 * metrics and `/status` server when a metrics port is asked for, and in the distributed mode the
 * exchange of fleet-wide policy. Part of step 3 (rounds.ts).
 */
import { CRAWL_DEFAULTS } from '../crawlOptions.js';
import { LiveStatus } from '../monitor/live.js';
import { startProgress } from '../monitor/progress.js';
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
    const { options, stores: { stats }, stages, metrics } = pipeline;
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
    const stopSharing = shareFleetPolicy(pipeline);
    return {
        timeline,
        stop: async () => {
            stopProgress();
            await stopSharing();
            timeline.stop();
            await statusServer?.close();
        },
    };
}
