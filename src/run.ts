/**
 * `crawl()`: one run of a site through the whole pipeline, in four steps (src/wiring/):
 *
 * 1. open   (open.ts)   the site's stores in the storage dir, fresh or resuming an unfinished run;
 * 2. build  (build.ts)  the frontier, the parser, the two stages, and the observers subscribed to
 *                       the run's events;
 * 3. run    (rounds.ts) the start URLs through the frontier, then rounds of both stages until both
 *                       queues are drained or a signal stops the run;
 * 4. finish (finish.ts) the stores closed, then the summary, the exit code and the run report.
 *
 * Its options and result: options/crawlOptions.ts.
 */
import { findChromium } from './fetch/browser/chromium.js';
import { createLogger } from './monitor/logger.js';
import { CRAWL_DEFAULTS, type CrawlOptions, type CrawlResult, type RunOptions } from './options/crawlOptions.js';
import { buildPipeline, type Pipeline } from './wiring/build.js';
import { closeRun, finishRun } from './wiring/finish.js';
import { logOpened, openRunStores } from './wiring/open.js';
import { type Ran, runRounds } from './wiring/rounds.js';

export async function crawl(given: CrawlOptions): Promise<CrawlResult> {
    const options = settled(given);
    const stores = await openRunStores(options);
    let pipeline: Pipeline | undefined;
    let ran: Ran;
    try {
        await logOpened(stores, options.site.name, options.log, options.fresh);
        pipeline = await buildPipeline(stores, options);
        ran = await runRounds(pipeline);
    } finally {
        await closeRun(stores, pipeline);
    }
    const { summary, exitCode } = await finishRun(pipeline, ran);
    return { summary, exitCode, concurrencyDecisions: pipeline.concurrency?.decisions() ?? [] };
}

/** The options with the defaults of what surrounds a run: where it starts, stores, renders and logs. */
function settled(given: CrawlOptions): RunOptions {
    return {
        ...given,
        startUrls: given.startUrls ?? [],
        storageDir: given.storageDir ?? CRAWL_DEFAULTS.storageDir,
        // Left out, a Chromium is looked for; given as undefined, the run has none.
        chromiumPath: 'chromiumPath' in given ? given.chromiumPath : findChromium(),
        log: given.log ?? createLogger(),
    };
}
