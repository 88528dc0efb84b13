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
import type { CrawlOptions, CrawlResult } from './options/crawlOptions.js';
import { buildPipeline, type Pipeline } from './wiring/build.js';
import { closeRun, finishRun } from './wiring/finish.js';
import { logOpened, openRunStores } from './wiring/open.js';
import { type Ran, runRounds } from './wiring/rounds.js';

export async function crawl(options: CrawlOptions): Promise<CrawlResult> {
    const stores = await openRunStores(options);
    let pipeline: Pipeline | undefined;
    let ran: Ran;
    try {
        await logOpened(stores, options.site.name, options.log);
        pipeline = await buildPipeline(stores, options);
        ran = await runRounds(pipeline);
    } finally {
        await closeRun(stores, pipeline);
    }
    const { summary, exitCode } = await finishRun(pipeline, ran);
    return { summary, exitCode, concurrencyDecisions: pipeline.concurrency?.decisions() ?? [] };
}
