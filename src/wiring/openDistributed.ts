/**
 * Wiring, step 1 of 4, distributed backend (see stores.ts): this worker's share of a site's fleet.
 * The frontier is in Redis — the two stages' BullMQ queues, the seen-set, the fleet's workers,
 * counters and stopped routes — and the sink in PostgreSQL, so every process that opens the same
 * two URLs works on the same crawl.
 *
 * Every process is a worker; there is no coordinator. Opening is serialized by a short Redis lock:
 * the first worker to find no other worker alive and nothing queued starts a new run (the site's
 * frontier and results are emptied, as the embedded backend does after a finished run); the
 * others join it. With `fresh`, a worker empties the site's frontier and results even when work is
 * queued, and refuses while other workers are alive. Seeding is idempotent: start URLs go through
 * the shared seen-set like any link, so N workers seeding them queue each once.
 */
import { Configuration } from '@crawlee/core';
import { MemoryStorage } from '@crawlee/memory-storage';
import type { RedisClient } from '../frontier/redis/connection.js';
import type { Logger } from 'pino';
import { ConfigError } from '../options/configError.js';
import { DISTRIBUTED_DEFAULTS, type DistributedOptions, type RunOptions } from '../options/crawlOptions.js';
import { browserPages } from '../fetch/browser/browserConcurrency.js';
import { deadLetterOutcome } from '../frontier/deadLetter.js';
import { connectRedis, redisSettingProblems } from '../frontier/redis/connection.js';
import { Fleet } from '../frontier/redis/fleet.js';
import { JobQueue } from '../frontier/redis/jobQueue.js';
import { RedisBloomSeenSet } from '../frontier/redisBloomSeenSet.js';
import { RedisSeenSet } from '../frontier/redisSeenSet.js';
import { readOwnMemoryWithoutChildren } from '../monitor/memoryReadings.js';
import { runId } from '../monitor/report/writeReport.js';
import { RunStats } from '../monitor/stats.js';
import { storeNames } from '../store/datasets.js';
import { connectPostgres } from '../store/postgres/connect.js';
import type { PgDatabase } from '../store/postgres/database.js';
import { PgBacklog } from '../store/postgres/backlog.js';
import { PgOutcomes } from '../store/postgres/outcomes.js';
import { IndexedRawPages } from '../store/postgres/indexedRawPages.js';
import { ArchiveStore, archiveDirOf } from '../store/archive/archiveStore.js';
import { PgSink } from '../store/postgres/sink.js';
import { PgPageHistory } from '../store/postgres/pageHistory.js';
import { pgResults } from '../store/postgres/results.js';
import type { SeriesRun } from '../store/pageHistory.js';
import { redactUrl } from '../vocabulary/redact.js';
import type { RequestData, Stage } from '../vocabulary/request.js';
import { failedRecord } from '../parse/pageRecords.js';
import { startSeries } from './recrawl.js';
import type { RunStores } from './stores.js';
import { HTTP_JOBS_AHEAD, startingWidth } from './httpWidth.js';

export type DistributedStoresOptions = DistributedOptions &
    Pick<
        RunOptions,
        | 'fresh'
        | 'recrawl'
        | 'randomOrder'
        | 'seenSet'
        | 'expectedUrls'
        | 'bloomErrorRate'
        | 'maxConcurrency'
        | 'browserConcurrency'
        | 'memoryMb'
        | 'log'
        | 'storageDir'
        | 'archiveDir'
    > & { site: string };

export interface DistributedStores extends RunStores {
    backend: 'distributed';
    fleet: Fleet;
    httpQueue: JobQueue;
    browserQueue: JobQueue;
    /** How this worker came in: it started the run, or joined one under way. */
    joined: { workers: number; queued: number } | undefined;
}

/**
 * The Redis keys of a site's fleet, every one under the site's hash tag `{<prefix>:<site>}`: its
 * seen-set and fleet state under `{<prefix>:<site>}:`, and its queues, BullMQ's with that tag for
 * their prefix (`{<prefix>:<site>}:<site>-http:…`, `-browser`). A Redis Cluster hashes only the
 * tag, so a site's keys share one slot, as the scripts and transactions that touch several at once
 * need (BullMQ's `{prefix}` rule), and different sites spread over the cluster's nodes.
 */
export function fleetKeys(prefix: string, site: string) {
    const names = storeNames(site);
    const tag = `{${prefix}:${site}}`;
    return {
        site: tag,
        /** BullMQ's prefix for the site's queues. */
        queuePrefix: tag,
        seenSet: `${tag}:seen`,
        opening: `${tag}:opening`,
        /** The exit breakers' verdicts (wiring/proxies.ts), one of `shared`. */
        exits: `${tag}:exits`,
        httpQueue: names.httpQueue,
        browserQueue: names.browserQueue,
        /**
         * The tier controller's outcomes, the politeness turn and the exits' verdicts (wiring/proxies.ts),
         * the request budget's count and the concurrency limits (build.ts) and the sitemaps' turn
         * (sitemapSeeding.ts), forgotten by a new run.
         */
        shared: ['tiers', 'politeness', 'exits', 'budget', 'concurrency', 'sitemaps'].map((part) => `${tag}:${part}`),
    };
}

/** Connects to both parts; either unreachable is a ConfigError (one line, exit 2). */
export async function connectParts(
    redisUrl: string,
    databaseUrl: string,
    name: string,
    cluster = false,
): Promise<{ redis: RedisClient; db: PgDatabase }> {
    const redis = await connectRedis(redisUrl, { name, cluster });
    try {
        return { redis, db: await connectPostgres(databaseUrl) };
    } catch (error) {
        redis.disconnect();
        throw error;
    }
}

export async function openDistributedStores(options: DistributedStoresOptions): Promise<DistributedStores> {
    const { site, log } = options;
    const prefix = options.redisPrefix ?? DISTRIBUTED_DEFAULTS.redisPrefix;
    const archiveDir = options.archiveDir ?? archiveDirOf(options.storageDir);
    const keys = fleetKeys(prefix, site);
    const { redis, db } = await connectParts(
        options.redisUrl,
        options.databaseUrl,
        `${prefix}:worker`,
        options.redisCluster,
    );
    for (const problem of await redisSettingProblems(redis))
        log.warn(`Redis: ${problem} (see docs/distributed.md, "RedisClient and PostgreSQL")`);
    const stats = new RunStats();
    const sink = new PgSink(db);
    const history = new PgPageHistory(db, site);
    let series: SeriesRun = { run: 1, mode: 'first' };
    const outcomes = new PgOutcomes({
        sink,
        site,
        stats,
        run: () => series.run,
        fenceOf: (queue, request) => (queue instanceof JobQueue ? queue.fenceOf(request) : undefined),
        onRefused: (requestKey) =>
            log.warn({ requestKey }, `left ${requestKey} to the worker that took its job since: not stored twice`),
    });
    const lockMillis = (options.jobLockSecs ?? DISTRIBUTED_DEFAULTS.jobLockSecs) * 1000;
    const finishGraceMillis = (options.finishGraceSecs ?? DISTRIBUTED_DEFAULTS.finishGraceSecs) * 1000;
    const queueOf = (name: string, stage: Stage, prefetch: number): JobQueue => {
        const queue: JobQueue = new JobQueue({
            redis,
            prefix: keys.queuePrefix,
            name,
            lockMillis,
            finishGraceMillis,
            prefetch,
            randomOrder: options.randomOrder,
            backlog: new PgBacklog(db, site, name),
            maxWaiting: options.maxWaitingJobs,
            onTakenBack: (jobId) =>
                log.warn({ jobId, stage }, `took back job ${jobId}: the worker that held it stopped renewing its lock`),
            // BullMQ gave up on the job: it stalled too often (its workers died) or the frontier failed it.
            onLost: (request, reason) => {
                const lost = /stalled/i.test(reason) ? 'worker-lost' : 'frontier-error';
                log.warn({ url: request.url, stage, reason }, `dead-lettered as ${lost}: ${reason}`);
                const { known } = request.userData as RequestData;
                void outcomes
                    .settle(queue, request, {
                        ...deadLetterOutcome({
                            url: request.url,
                            label: request.label,
                            failureClass: 'transient',
                            reason: lost,
                            error: reason,
                            attempts: request.retryCount + 1,
                            stage,
                        }),
                        ...(known ? { page: failedRecord(known, undefined) } : {}),
                    })
                    .catch((error: unknown) =>
                        log.error({ err: error, url: request.url }, 'could not dead-letter a lost job'),
                    );
            },
        });
        return queue;
    };
    const httpQueue = queueOf(keys.httpQueue, 'http', startingWidth(options) + HTTP_JOBS_AHEAD);
    const browserQueue = queueOf(
        keys.browserQueue,
        'browser',
        browserPages({ limit: options.browserConcurrency, memoryMb: options.memoryMb }).max,
    );
    const fleet = new Fleet({ redis, key: keys.site });

    // The seen-set is opened under the lock too: a worker starting a new run clears it, and an
    // opener outside the lock could read its layout key between the delete and the rewrite.
    const { seenSet, joined } = await whileOpening(redis, keys.opening, fleet.workerId, async () => {
        const seenSet =
            options.seenSet === 'bloom'
                ? await RedisBloomSeenSet.open(redis, {
                      key: keys.seenSet,
                      expectedUrls: options.expectedUrls,
                      falsePositiveRate: options.bloomErrorRate,
                  })
                : await RedisSeenSet.open(redis, { key: keys.seenSet, expectedUrls: options.expectedUrls });
        const workers = (await fleet.workers()).length;
        const counts = await Promise.all([httpQueue.counts(), browserQueue.counts()]);
        const queued = counts.reduce(
            (sum, { waiting, delayed, active, spilled }) => sum + waiting + delayed + active + spilled,
            0,
        );
        const forced = options.fresh ? '--fresh' : options.recrawl ? '--recrawl' : undefined;
        if (forced && workers > 0) {
            throw new ConfigError(
                `${forced}: ${workers} worker(s) of ${site} are active; stop them first (npm run status -- ` +
                    `--site ${site})`,
            );
        }
        const newRun = forced !== undefined || (workers === 0 && queued === 0);
        const last = await history.series();
        series = last ?? series;
        if (newRun) {
            const start = await startSeries(history, last, options);
            await Promise.all([
                httpQueue.clear(),
                browserQueue.clear(),
                seenSet.clear(),
                fleet.clear(),
                redis.del(...keys.shared),
                ...(start.lastResults === 'purge'
                    ? [sink.purge(site), ArchiveStore.purge({ archiveDir, site })]
                    : [sink.clearFrontier(site)]),
                ...(start.lastResults === 'rotate' ? [pgResults(db, site).then((results) => results.promote())] : []),
            ]);
            series = start.series;
            await history.startRun(series);
        }
        await fleet.heartbeat(stats.snapshot(), 0);
        return { seenSet, joined: newRun ? undefined : { workers, queued } };
    }).catch(async (error: unknown) => {
        await Promise.all([httpQueue.close(), browserQueue.close()]);
        redis.disconnect();
        await db.close();
        throw error;
    });
    const raw = await IndexedRawPages.open(db, site, {
        archiveDir,
        writer: fleet.workerId,
        run: runId(site, stats.startedAt, fleet.workerId),
    });
    if (options.fleetConcurrency !== undefined) await httpQueue.queue.setGlobalConcurrency(options.fleetConcurrency);
    httpQueue.start();
    browserQueue.start();
    const heartbeat = setInterval(
        () => void fleet.heartbeat(stats.snapshot(), stats.finished).catch(() => {}),
        fleet.heartbeatMillis,
    );

    return {
        backend: 'distributed',
        config: readOwnMemoryWithoutChildren(
            new Configuration({
                storageClient: new MemoryStorage({ persistStorage: false }),
                purgeOnStart: false,
                memoryMbytes: options.memoryMb,
            }),
        ),
        httpQueue,
        browserQueue,
        seenSet,
        outcomes,
        raw,
        history,
        series,
        stats,
        fleet,
        shared: { redis, keyPrefix: keys.site },
        joined,
        location: {
            dir: redactUrl(options.databaseUrl),
            dataset: 'items',
            quarantine: 'quarantine',
            deadLetter: 'dead_letter',
            rawPages: raw.dir,
        },
        close: async () => {
            clearInterval(heartbeat);
            await Promise.all([outcomes.flush(), raw.flush()]);
            await Promise.all([httpQueue.close(), browserQueue.close()]);
            await fleet.heartbeat(stats.snapshot(), stats.finished).catch(() => {});
            await fleet.leave().catch(() => {});
            await redis.quit().catch(() => redis.disconnect());
            await db.close();
        },
    };
}

/** Runs `work` holding the site's opening lock, so two workers starting at once do not both start a new run. */
async function whileOpening<T>(redis: RedisClient, key: string, holder: string, work: () => Promise<T>): Promise<T> {
    const lockMillis = 30_000;
    while ((await redis.set(key, holder, 'PX', lockMillis, 'NX')) !== 'OK')
        await new Promise((resolve) => setTimeout(resolve, 100));
    try {
        return await work();
    } finally {
        if ((await redis.get(key)) === holder) await redis.del(key);
    }
}

/** Says how this worker came in. */
export function logJoined(stores: DistributedStores, site: string, log: Logger): void {
    if (stores.joined) {
        log.info(
            { ...stores.joined, worker: stores.fleet.workerId },
            `joined the fleet of ${site}: ${stores.joined.workers} other worker(s), ${stores.joined.queued} jobs ` +
                `queued or in work`,
        );
    } else {
        log.info({ worker: stores.fleet.workerId }, `started a new distributed run of ${site}`);
    }
}
