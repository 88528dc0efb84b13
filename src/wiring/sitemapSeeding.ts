/**
 * Part of step 3 (rounds.ts): the site's sitemaps read into the frontier while the stages run, so
 * the first pages are fetched while a large sitemap is still streaming. The reader
 * (frontier/sitemaps.ts) fetches through fetch/http/sitemapFetch.ts by the rules the pages go by: the
 * run's egress and scope, the cheapest proxy tier, the response size cap. It stops reading when the
 * run's request budget is spent, or when the run is stopped. A fleet reads them once, by whichever
 * worker takes the turn (frontier/redis/sitemapTurn.ts); the others wait until they are read.
 */
import { CRAWL_DEFAULTS } from '../options/crawlOptions.js';
import { createRobotsFetch } from '../fetch/http/robotsFetch.js';
import { createSitemapFetch } from '../fetch/http/sitemapFetch.js';
import { OWN_TURN, RedisSitemapTurn } from '../frontier/redis/sitemapTurn.js';
import { SitemapReader } from '../frontier/sitemaps.js';
import type { Pipeline } from './build.js';
import type { NotDuePages } from './recrawl.js';

export interface SitemapSeeding {
    /** Whether the sitemaps are still being read. */
    readonly reading: boolean;
    /** Resolves when the next batch of their URLs is queued, or when the reading ends. */
    nextBatch(): Promise<void>;
    /** Stops the reading where it is; the next run of the site reads its sitemaps again. */
    stop(): void;
    /** Resolves when the reading has ended, whether it read everything, was stopped or broke. */
    readonly ended: Promise<void>;
    /** What broke the reading (the frontier failed to queue a batch; a sitemap's own failure never does). */
    readonly failure?: unknown;
}

/**
 * Starts reading the site's sitemaps, when it names any; `startUrls`
 * are the run's (their origins' robots.txt for `sitemaps: true`).
 */
export function seedSitemaps(
    pipeline: Pipeline,
    startUrls: readonly string[],
    notDue?: NotDuePages,
): SitemapSeeding | undefined {
    const { options, frontier, stores, routing, egress, httpClient } = pipeline;
    const { site, log } = options;
    const named = site.sitemaps;
    if (!named) return undefined;
    const { stats } = stores;
    const session = () => routing.cheapestSession();
    const abort = new AbortController();
    let wake: () => void = () => undefined;
    let batchQueued = new Promise<void>((resolve) => (wake = resolve));
    const batchDone = () => {
        wake();
        batchQueued = new Promise<void>((resolve) => (wake = resolve));
    };
    const reader = new SitemapReader({
        fetch: createSitemapFetch({
            egress,
            client: httpClient,
            session,
            inScope: (url) => frontier.inScope(url),
            maxBytes: (options.maxResponseMb ?? CRAWL_DEFAULTS.maxResponseMb) * 1024 * 1024,
        }),
        enqueue: async (links, base) => {
            // A recrawl's pages not due are seen already: the sitemap may say they changed.
            const queued = (await frontier.enqueue(links, base)) + ((await notDue?.fromSitemap(links)) ?? 0);
            batchDone();
            return queued;
        },
        counters: stats.sitemaps,
        log,
        isFull: () => frontier.budgetSpent,
        signal: abort.signal,
    });
    const turn =
        stores.shared && stores.fleet
            ? new RedisSitemapTurn({
                  redis: stores.shared.redis,
                  key: `${stores.shared.keyPrefix}:sitemaps`,
                  holder: stores.fleet.workerId,
              })
            : OWN_TURN;
    const readAll = async () => {
        if (!(await turn.take(abort.signal))) {
            if (!abort.signal.aborted) log.info("the site's sitemaps were read by another worker of the fleet");
            return;
        }
        try {
            const sitemaps =
                named === true
                    ? await reader.listedInRobotsTxt(
                          startUrls.map((url) => new URL(url).origin),
                          createRobotsFetch({ egress, client: httpClient, session }),
                      )
                    : named;
            log.info({ sitemaps }, `reading ${sitemaps.length} sitemaps`);
            await reader.read(sitemaps);
            if (!abort.signal.aborted) await turn.done();
        } finally {
            await turn.release();
        }
    };
    let reading = true;
    let failure: unknown;
    const ended = readAll()
        .catch((error: unknown) => {
            failure = error;
        })
        .finally(() => {
            reading = false;
            wake();
        });
    return {
        get reading() {
            return reading;
        },
        get failure() {
            return failure;
        },
        nextBatch: () => (reading ? batchQueued : Promise.resolve()),
        stop: () => abort.abort(),
        ended,
    };
}
