/**
 * Wiring, step 3 of 4 (open → build → run → finish; see run.ts): the run itself. The start URLs
 * go through the frontier, the site's sitemaps start streaming into it (sitemapSeeding.ts), the
 * monitors start, and the two stages run in rounds until both queues are drained and the sitemaps
 * read — the browser stage can discover links for the HTTP stage and the HTTP stage escalates
 * pages to the browser — or until SIGINT, SIGTERM or a runner's stop event stops the run gracefully
 * (runtime/stopSignal.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { HttpCrawler, HttpCrawlingContext } from '@crawlee/http';
import { runAtControlledConcurrency } from '../fetch/pacing/controlledPool.js';
import type { TimelinePoint } from '../monitor/timeline.js';
import { onStop } from '../runtime/stopSignal.js';
import type { Pipeline } from './build.js';
import { startMonitors } from './monitors.js';
import { carryUnsettledPages, seedKnownPages } from './recrawl.js';
import { seedSitemaps, type SitemapSeeding } from './sitemapSeeding.js';

export interface Ran {
    /**
     * The signal that stopped the run before it was done (or that a
     * runner's stop event counts as); undefined when it ran to the end.
     */
    stopped?: NodeJS.Signals;
    timeline: TimelinePoint[];
}

export async function runRounds(pipeline: Pipeline): Promise<Ran> {
    const { options, frontier } = pipeline;
    const { site, log } = options;
    const startUrls = options.startUrls.length > 0 ? options.startUrls : site.startUrls;
    // A recrawl's known pages first: a start URL the last run fetched is one of them, asked conditionally.
    const notDue = await seedKnownPages(pipeline.stores, frontier, options.revisit ?? {}, log);
    await frontier.enqueue(startUrls.map((url) => ({ url })));
    // A crawl given 20,000 listing URLs logs a few of them and how many, not a line of a megabyte.
    const shown = startUrls.slice(0, SHOWN_START_URLS);
    log.info(
        { site: site.name, startUrls: shown, startUrlCount: startUrls.length, storageDir: options.storageDir },
        `crawling ${site.name} from ${startUrls.length} start URL${startUrls.length === 1 ? '' : 's'}`,
    );
    const sitemaps = seedSitemaps(pipeline, startUrls, notDue);

    const monitors = await startMonitors(pipeline);
    let stopped: NodeJS.Signals | undefined;
    try {
        stopped = await rounds(pipeline, sitemaps);
    } finally {
        sitemaps?.stop();
        await sitemaps?.ended;
        await monitors.stop();
    }
    if (sitemaps?.failure) throw sitemaps.failure;
    if (!stopped) await carryUnsettledPages(pipeline.stores, pipeline.stores.stats);
    return { stopped, timeline: monitors.timeline.points };
}

/** Start URLs named in the first log line; the rest are counted. */
const SHOWN_START_URLS = 5;

/** How long a round waits on a queue that is empty here and not yet finished elsewhere before asking again. */
const IDLE_WAIT_MS = 250;

/**
 * Rounds until both queues are drained and the sitemaps read; returns the signal that stopped them early, if one did.
 */
async function rounds(
    { options: { log }, stores, browserStage, concurrency, httpStage: nextHttpStage }: Pipeline,
    sitemaps: SitemapSeeding | undefined,
): Promise<NodeJS.Signals | undefined> {
    const { httpQueue, browserQueue, config } = stores;
    // Both crawlers share one event manager that neither owns, so one finishing does not stop the other's.
    const crawleeEvents = config.getEventManager();
    await crawleeEvents.init();
    let httpStage: HttpCrawler<HttpCrawlingContext> | undefined;
    let stopped: NodeJS.Signals | undefined;
    const removeStopHandler = onStop(({ signal, cause }) => {
        stopped = signal;
        log.warn(
            `${cause}: stopping; pages in flight finish, the rest stays queued for the next run (a second signal ` +
                `quits at once)`,
        );
        httpStage?.stop(`${cause}: no new requests`);
        browserStage.stop();
        sitemaps?.stop();
    });
    try {
        while (!stopped) {
            // Asked before the queues are: a batch queued after this is waited for below, one queued before is in them.
            const reading = sitemaps?.reading ?? false;
            const batchQueued = sitemaps?.nextBatch();
            const httpFinished = await httpQueue.isFinished();
            if (httpFinished && (await browserQueue.isFinished())) {
                if (!reading) break;
                // Drained faster than the sitemaps stream: the next round starts with their next batch.
                await batchQueued;
                continue;
            }
            if (httpFinished && (await browserQueue.isEmpty())) {
                // Nothing here to fetch or render, but the browser queue is not finished: a fleet's
                // pages in work elsewhere, or its grace period. A round made now would end at once,
                // over and over (a new crawler each time), until it is.
                await sleep(IDLE_WAIT_MS);
                continue;
            }
            // A stop that came while the queues were asked would miss the stages made next.
            if (stopped) break;
            browserStage.start();
            httpStage = nextHttpStage();
            try {
                await runAtControlledConcurrency(httpStage, concurrency);
            } catch (error) {
                // Left running, the browser stage keeps the process alive; its own failure matters less than this one.
                browserStage.stop();
                await browserStage.finish().catch(() => undefined);
                throw error;
            }
            await browserStage.finish();
        }
    } finally {
        removeStopHandler();
        await crawleeEvents.close();
    }
    return stopped;
}
