/**
 * Wiring, step 4 of 4 (open → build → run → finish; see run.ts): the stores let go, whatever
 * happened after they were opened; then, for a run that got to its end or to a graceful stop, the
 * summary, the exit code and the run report.
 */
import { constants } from 'node:os';
import { renderReport } from '../monitor/report/report.js';
import { buildSummary } from '../monitor/summary.js';
import { runId, writeReport } from '../monitor/report/writeReport.js';
import type { RunSummary } from '../vocabulary/report.js';
import type { Pipeline } from './build.js';
import type { RunStores } from './stores.js';
import type { Ran } from './rounds.js';

/**
 * Stops the parse workers, the proxy routing, the fleet's limits and the HTTP client's connections (when
 * the pipeline got as far as starting them), writes what is buffered and lets go of the stores and the
 * site's lock.
 */
export async function closeRun(stores: RunStores, pipeline: Pipeline | undefined): Promise<void> {
    await pipeline?.parser.close();
    pipeline?.fleetLimits?.close();
    await pipeline?.routing.close();
    await pipeline?.httpClient.close();
    await stores.close();
}

/**
 * The run's exit code (docs/failures-and-resume.md, "Exit codes"): 128 + the signal that stopped it; 3 when the drift
 * breaker stopped a route; 1 when the dead-letter holds pages that needed a browser and got none
 * (none was there, `renderer-unavailable`, or none started for them, `browser-launch-failed`);
 * else 0. Counted over the whole run, as its summary is: a resumed run's earlier sessions too, and
 * not the entries re-queued since.
 */
export function exitCodeOf({
    stopped,
    routesStopped,
    deadLetterByReason,
}: {
    stopped?: NodeJS.Signals;
    routesStopped: number;
    deadLetterByReason: Record<string, number>;
}): number {
    if (stopped) return 128 + constants.signals[stopped];
    if (routesStopped > 0) return 3;
    const unrendered =
        (deadLetterByReason['renderer-unavailable'] ?? 0) + (deadLetterByReason['browser-launch-failed'] ?? 0);
    return unrendered > 0 ? 1 : 0;
}

export async function finishRun(
    pipeline: Pipeline,
    { stopped, timeline }: Ran,
): Promise<{ summary: RunSummary; exitCode: number }> {
    const { options, stores, renderLearner, driftBreaker, concurrency, browserStage } = pipeline;
    const { site, log } = options;
    const { stats } = stores;
    const summary = buildSummary(stats, {
        site: site.name,
        seenSet: stores.seenSet,
        render: renderLearner.decisions(),
        drift: driftBreaker.tripped,
        concurrency: concurrency?.byDomain(),
        concurrencyChanges: concurrency?.decisions(),
        browserAvailable: (await browserStage.available()) ?? options.chromiumPath !== undefined,
        stopped,
        storage: stores.location,
        proxies: pipeline.routing.report(),
        recrawlRun: stores.series.mode === 'recrawl' ? stores.series.run : undefined,
    });
    const exitCode = exitCodeOf({
        stopped,
        routesStopped: driftBreaker.tripped.length,
        deadLetterByReason: summary.deadLetterByReason,
    });
    const report = await writeReport(
        options.storageDir,
        runId(site.name, stats.startedAt, stores.fleet?.workerId),
        renderReport({ ...summary, exitCode }, timeline),
    );
    log.info({ report }, `run report: ${report}`);
    return { summary: { ...summary, report }, exitCode };
}
