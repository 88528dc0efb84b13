/**
 * Wiring, step 1 of 4 (open → build → run → finish; see run.ts): a site's stores for one run,
 * fresh or resumed — the embedded backend (see stores.ts; the distributed one: openDistributed.ts).
 *
 * A run resumes when the storage dir holds an unfinished run of the site: requests still pending
 * in its queues (the run was killed or stopped, or dead-letter entries were re-queued). It counts
 * on from the saved counters, rebuilds the seen-set from the queues and the saved canonical
 * claims, frees the locks its dead predecessor held (retry waits keep waiting) and keeps what was
 * stored. Otherwise, a site whose earlier runs left a page history is recrawled (`recrawl` forces
 * it over an unfinished run): the queues and run state are emptied, the last run's results
 * become `<name>-previous`, and the archive and the history stay (wiring/recrawl.ts). A site
 * without one — or any, with `fresh` — starts over: its queues, datasets, archive, history and run
 * state are emptied first. Only one process may crawl a site from a storage dir at a time (siteLock.ts).
 */
import { type Configuration, Dataset } from '@crawlee/core';
import type { Logger } from 'pino';
import { BloomSeenSet } from '../frontier/bloomSeenSet.js';
import { urlKey } from '../frontier/normalize.js';
import { MemorySeenSet, type SeenSet } from '../frontier/seenSet.js';
import { RunStats } from '../monitor/stats.js';
import { runId } from '../monitor/report/writeReport.js';
import type { RunOptions } from '../options/crawlOptions.js';
import { datasetResults, openStorage, type StoreNames, storeNames } from '../store/datasets.js';
import type { SeriesRun } from '../store/pageHistory.js';
import { PREVIOUS } from '../store/siteResults.js';
import { SqliteDatasetClient } from '../store/sqlite/datasetClient.js';
import { SqlitePageHistory } from '../store/sqlite/pageHistory.js';
import { ArchiveStore, archiveDirOf } from '../store/archive/archiveStore.js';
import { RunState } from '../store/runState.js';
import { lockSite, type SiteLock } from '../store/siteLock.js';
import { BoundedRequestQueue } from '../store/sqlite/boundedRequestQueue.js';
import { sqliteClientOf } from '../store/sqlite/requestQueueClient.js';
import { SqliteOutcomes } from '../store/sqlite/outcomes.js';
import type { SqliteStorageClient } from '../store/sqlite/storageClient.js';
import type { DistributedStores } from './openDistributed.js';
import { logSeries, startSeries } from './recrawl.js';
import type { RunStores } from './stores.js';

export interface SiteStoresOptions {
    site: string;
    storageDir: string;
    /** Where raw pages are archived. Default: `<storageDir>/archive`. */
    archiveDir?: string;
    /** Start over, forgetting the site's earlier runs and any unfinished one. Default: false. */
    fresh?: boolean;
    /** Recrawl even over an unfinished run (dropping what it had queued). Default: false (resume it). */
    recrawl?: boolean;
    /** Hand out queued requests in random order (see SqliteRequestQueueOptions). Default: false. */
    randomOrder?: boolean;
    /**
     * The autoscaled pools' memory ceiling in MB (see runtime/memoryBudget.ts).
     * Default: Crawlee's, a quarter of the machine's memory.
     */
    memoryMb?: number;
    /** `exact` (default) or `bloom`: a fixed-memory filter sized by `expectedUrls` and `bloomErrorRate`. */
    seenSet?: 'exact' | 'bloom';
    expectedUrls?: number;
    bloomErrorRate?: number;
}

/**
 * The run's stores: distributed when the options name a Redis and a PostgreSQL, else embedded. The
 * distributed backend is loaded only for a distributed run: BullMQ, ioredis and pg would take ~40 MB
 * of every embedded run's memory.
 */
export async function openRunStores(options: RunOptions): Promise<SiteStores | DistributedStores> {
    const site = options.site.name;
    if (!options.distributed) return openSiteStores({ ...options, site });
    const { openDistributedStores } = await import('./openDistributed.js');
    return openDistributedStores({ ...options.distributed, ...options, site });
}

export interface SiteStores extends RunStores {
    backend: 'embedded';
    names: StoreNames;
    config: Configuration;
    storage: SqliteStorageClient;
    httpQueue: BoundedRequestQueue;
    browserQueue: BoundedRequestQueue;
    raw: ArchiveStore;
    runState: RunState;
    history: SqlitePageHistory;
    /** This process's hold on the site's stores: release it when the run is over. */
    lock: SiteLock;
    /** What was found of an unfinished run, when this one resumes it. */
    resumed?: { pending: number; handled: number; locksReleased: number };
}

export async function openSiteStores(options: SiteStoresOptions): Promise<SiteStores> {
    const { site, storageDir } = options;
    const names = storeNames(site);
    const { config, storage } = openStorage(storageDir, { randomOrder: options.randomOrder }, options.memoryMb);
    const lock = lockSite(storage.db, site, 'crawl');
    try {
        return await openLocked(options, { names, config, storage, lock });
    } catch (error) {
        lock.release();
        throw error;
    }
}

async function openLocked(
    options: SiteStoresOptions,
    { names, config, storage, lock }: Pick<SiteStores, 'names' | 'config' | 'storage' | 'lock'>,
): Promise<SiteStores> {
    const { site, storageDir } = options;
    const runState = new RunState(storage.db, site);
    const queues = (await storage.requestQueues().list()).items.filter(
        (queue) => queue.name === names.httpQueue || queue.name === names.browserQueue,
    );
    const pending = queues.reduce((sum, queue) => sum + queue.pendingRequestCount, 0);
    const history = new SqlitePageHistory(storage.db, site, new SqliteDatasetClient(storage.db, names.items));
    const resuming = pending > 0 && !options.fresh && !options.recrawl;
    const archiveDir = options.archiveDir ?? archiveDirOf(storageDir);
    const last = history.series();
    let series: SeriesRun = last ?? { run: 1, mode: 'first' };
    if (!resuming) {
        await emptyQueues(site, storage, runState);
        const start = await startSeries(history, last, options);
        if (start.lastResults === 'purge') await purge(site, archiveDir, config, history);
        if (start.lastResults === 'rotate') await (await datasetResults(site, config)).promote();
        series = start.series;
        history.startRun(series);
    }

    const httpQueue = await BoundedRequestQueue.open(names.httpQueue, { config });
    const browserQueue = await BoundedRequestQueue.open(names.browserQueue, { config });
    for (const name of [names.items, names.quarantine, names.deadLetter]) await Dataset.open(name, { config });
    const saved = resuming ? runState.loadStats() : undefined;
    const stats = saved ? RunStats.resume(saved) : new RunStats();
    const raw = await ArchiveStore.open({ archiveDir, site, run: runId(site, stats.firstStartedAt) });
    const seenSet =
        options.seenSet === 'bloom'
            ? new BloomSeenSet({ expectedItems: options.expectedUrls, falsePositiveRate: options.bloomErrorRate })
            : new MemorySeenSet();
    const parts = { names, config, storage, httpQueue, browserQueue, raw, runState, seenSet, lock, history, series };
    if (!resuming) return embeddedStores(parts, storageDir, stats);

    let locksReleased = 0;
    for (const queue of [httpQueue, browserQueue]) {
        const client = sqliteClientOf(queue);
        locksReleased += client.releaseLocks();
        await addInBatches(seenSet, client.urls());
    }
    await seenSet.add(runState.claims());
    const handled = queues.reduce((sum, queue) => sum + queue.handledRequestCount, 0);
    const stores = embeddedStores(parts, storageDir, stats);
    return { ...stores, resumed: { pending, handled, locksReleased } };
}

function embeddedStores(
    parts: Omit<SiteStores, 'backend' | 'stats' | 'outcomes' | 'location' | 'close'>,
    storageDir: string,
    stats: RunStats,
): SiteStores {
    const { names, storage, runState, raw, lock } = parts;
    return {
        ...parts,
        backend: 'embedded',
        stats,
        outcomes: new SqliteOutcomes({ storage, names, stats, runState, history: parts.history, series: parts.series }),
        location: {
            dir: storageDir,
            dataset: names.items,
            quarantine: names.quarantine,
            deadLetter: names.deadLetter,
            rawPages: raw.dir,
        },
        close: async () => {
            await raw.flush();
            lock.release();
            await storage.close();
        },
    };
}

/**
 * Empties the site's queues and run state. The queues are deleted through the storage client, not
 * opened to be dropped: a Crawlee RequestQueue allocates a 16 MB dedup table as it is made (see
 * BoundedRequestQueue), which would be garbage at once.
 */
async function emptyQueues(site: string, storage: SqliteStorageClient, runState: RunState): Promise<void> {
    const names = storeNames(site);
    for (const name of [names.httpQueue, names.browserQueue]) await storage.requestQueue(name).delete();
    runState.clear();
}

/** Forgets the site's earlier runs: its datasets, archive and page history. */
async function purge(
    site: string,
    archiveDir: string,
    config: Configuration,
    history: SqlitePageHistory,
): Promise<void> {
    const names = storeNames(site);
    for (const name of [names.items, names.quarantine, names.deadLetter]) {
        for (const version of [name, `${name}${PREVIOUS}`]) await (await Dataset.open(version, { config })).drop();
    }
    await ArchiveStore.purge({ archiveDir, site });
    history.clear();
}

async function addInBatches(seenSet: SeenSet, urls: Iterable<string>, batchSize = 10_000): Promise<void> {
    let batch: string[] = [];
    for (const url of urls) {
        batch.push(urlKey(url));
        if (batch.length === batchSize) {
            await seenSet.add(batch);
            batch = [];
        }
    }
    await seenSet.add(batch);
}

/** Says what was found: a lock taken over from another host, an unfinished run resumed, a fleet joined. */
export async function logOpened(
    stores: SiteStores | DistributedStores,
    site: string,
    log: Logger,
    fresh = false,
): Promise<void> {
    await logSeries(stores, site, log, fresh);
    if (stores.backend === 'distributed') return (await import('./openDistributed.js')).logJoined(stores, site, log);
    const takenOver = stores.lock.takenOverFrom;
    if (takenOver) {
        log.warn(
            { holder: takenOver },
            `took over the lock of ${site} from process ${takenOver.pid} on host ${takenOver.host}: ` +
                'it cannot be checked from here whether that run still goes on; a storage dir is not meant to be ' +
                'shared between machines',
        );
    }
    if (stores.resumed) {
        const { pending, handled, locksReleased } = stores.resumed;
        log.info(
            { ...stores.resumed, session: stores.stats.sessions + 1 },
            `resuming the unfinished run of ${site}: ${pending} requests pending, ${handled} done` +
                `${locksReleased ? `, ${locksReleased} taken back from the stopped process` : ''} (--fresh starts ` +
                `over)`,
        );
    }
}
