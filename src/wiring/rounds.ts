/**
 * Wiring, step 3 of 4 (open → build → run → finish; see run.ts): the run itself. The start URLs
 * go through the frontier, the monitors start, and the two stages run in rounds until both queues
 * are drained — the browser stage can discover links for the HTTP stage and the HTTP stage
 * escalates pages to the browser — or until SIGINT or SIGTERM stops the run gracefully.
 */
import type { HttpCrawler, HttpCrawlingContext } from '@crawlee/http';
import { runAtControlledConcurrency } from '../fetch/controlledPool.js';
import type { TimelinePoint } from '../monitor/timeline.js';
import { onStopSignal } from '../stopSignal.js';
import type { Pipeline } from './build.js';
import { startMonitors } from './monitors.js';

export interface Ran {
    /** The signal that stopped the run before it was done; undefined when it ran to the end. */
    stopped?: NodeJS.Signals;
    timeline: TimelinePoint[];
}

export async function runRounds(pipeline: Pipeline): Promise<Ran> {
    const { options, frontier } = pipeline;
    const { site, log } = options;
    const startUrls = options.startUrls.length > 0 ? options.startUrls : site.startUrls;
    await frontier.enqueue(startUrls.map((url) => ({ url })));
    log.info({ site: site.name, startUrls, storageDir: options.storageDir }, `crawling ${site.name}`);

    const monitors = await startMonitors(pipeline);
    let stopped: NodeJS.Signals | undefined;
    try {
        stopped = await rounds(pipeline);
    } finally {
        await monitors.stop();
    }
    return { stopped, timeline: monitors.timeline.points };
}

/** Rounds until both queues are drained; returns the signal that stopped them early, if one did. */
async function rounds({ options: { log }, stores, browserStage, concurrency, httpStage: nextHttpStage }: Pipeline): Promise<NodeJS.Signals | undefined> {
    const { httpQueue, browserQueue, config } = stores;
    // Both crawlers share one event manager that neither owns, so one finishing does not stop the other's.
    const crawleeEvents = config.getEventManager();
    await crawleeEvents.init();
    let httpStage: HttpCrawler<HttpCrawlingContext> | undefined;
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
            httpStage = nextHttpStage();
            await runAtControlledConcurrency(httpStage, concurrency);
            await browserStage.finish();
        }
    } finally {
        removeStopHandler();
        await crawleeEvents.close();
    }
    return stopped;
}
