/**
 * The state of a site's fleet, read from the shared stores: the queues (waiting, delayed, active)
 * of both stages, the workers heard of lately and their rates, the fleet's counters (the sum of
 * every worker's), the routes the drift breaker stopped, the exits the exit breakers hold out, and
 * what PostgreSQL holds — dead-letter by reason included. `npm run status` prints it.
 */
import { Queue } from 'bullmq';
import type { RedisClient } from '../frontier/redis/connection.js';
import { Fleet, type WorkerSeen } from '../frontier/redis/fleet.js';
import { type QueueCounts, queueCounts } from '../frontier/redis/queueCounts.js';
import { PgBacklog } from '../store/postgres/backlog.js';
import type { PgDatabase } from '../store/postgres/database.js';
import { type DeadLetterReason, PgSink, type SiteCounts } from '../store/postgres/sink.js';
import type { ChangeCounts, Trip } from '../vocabulary/report.js';
import type { StatsSnapshot } from '../monitor/stats.js';
import { PgPageHistory } from '../store/postgres/pageHistory.js';
import { RedisExitVerdicts } from '../fetch/egress/redisExitVerdicts.js';
import { fleetKeys } from './openDistributed.js';

export interface QueueState extends QueueCounts {
    /** Spilled to PostgreSQL, to be fed back as the queue drains. */
    spilled: number;
}

export interface FleetStatus {
    site: string;
    queues: { http: QueueState; browser: QueueState };
    /** The most pages in work at once across the fleet, when a limit is set. */
    fleetConcurrency: number | null;
    workers: WorkerSeen[];
    /** Pages finished per second, the fleet's (sum of the workers' last heartbeats). */
    pagesPerSec: number;
    /** Counters summed over every worker that worked on the run, gone ones included. */
    totals: Record<string, number>;
    tripped: Trip[];
    /** Exits (proxies) the fleet's breakers hold out now, each with when it is due back (ISO). */
    restingExits: { exit: string; until: string }[];
    stored: SiteCounts;
    deadLetter: DeadLetterReason[];
    /** A recrawl's progress: its run of the site's series and its items by change so far; absent in a first run. */
    recrawl?: { run: number; items: ChangeCounts };
}

/** Counters summed for the status, by their name in the workers' stats. */
const TOTALS = [
    'admitted',
    'succeeded',
    'deadLettered',
    'retries',
    'httpFetched',
    'browserRendered',
    'itemsStored',
    'itemsInvalid',
];

export async function readFleetStatus(
    redis: RedisClient,
    db: PgDatabase,
    { prefix, site }: { prefix: string; site: string },
): Promise<FleetStatus> {
    const keys = fleetKeys(prefix, site);
    const fleet = new Fleet({ redis, key: keys.site });
    const http = new Queue(keys.httpQueue, { connection: redis, prefix: keys.queuePrefix });
    const browser = new Queue(keys.browserQueue, { connection: redis, prefix: keys.queuePrefix });
    try {
        const sink = new PgSink(db);
        const verdicts = new RedisExitVerdicts({ redis, key: keys.exits });
        const [
            httpState,
            browserState,
            fleetConcurrency,
            workers,
            stats,
            tripped,
            resting,
            stored,
            deadLetter,
            series,
        ] = await Promise.all([
            queueState(http, new PgBacklog(db, site, keys.httpQueue)),
            queueState(browser, new PgBacklog(db, site, keys.browserQueue)),
            http.getGlobalConcurrency(),
            fleet.workers(),
            fleet.stats(),
            fleet.trips(),
            verdicts.resting(),
            sink.counts(site),
            sink.deadLetterByReason(site),
            new PgPageHistory(db, site).series(),
        ]);
        const totals = Object.fromEntries(
            TOTALS.map((name) => [
                name,
                Object.values(stats).reduce((sum, snapshot) => sum + Number(snapshot.counters[name] ?? 0), 0),
            ]),
        );
        const pagesPerSec = Math.round(workers.reduce((sum, worker) => sum + worker.pagesPerSec, 0) * 10) / 10;
        return {
            site,
            queues: { http: httpState, browser: browserState },
            fleetConcurrency,
            workers,
            pagesPerSec,
            totals,
            tripped,
            restingExits: resting.map(({ exit, until }) => ({ exit, until: new Date(until).toISOString() })),
            stored,
            deadLetter,
            ...(series?.mode === 'recrawl'
                ? { recrawl: { run: series.run, items: changesOf(Object.values(stats)) } }
                : {}),
        };
    } finally {
        await Promise.all([http.close(), browser.close()]);
    }
}

/** The fleet's recrawl items by change: every worker's, over every route. */
function changesOf(snapshots: readonly StatsSnapshot[]): ChangeCounts {
    const total: ChangeCounts = { new: 0, changed: 0, unchanged: 0, removed: 0 };
    for (const snapshot of snapshots)
        for (const counts of Object.values((snapshot.counters.changes ?? {}) as Record<string, ChangeCounts>))
            for (const change of Object.keys(total) as (keyof ChangeCounts)[]) total[change] += counts[change];
    return total;
}

async function queueState(queue: Queue, backlog: PgBacklog): Promise<QueueState> {
    const [counts, spilled] = await Promise.all([queueCounts(queue), backlog.count()]);
    return { ...counts, spilled };
}
