/**
 * What a run works on, whichever backend holds it: the two stages' queues, the seen-set, where
 * outcomes and raw pages go, and the run's counters. The embedded backend (open.ts) keeps all of
 * it in the storage dir's SQLite file; the distributed one (openDistributed.ts) in Redis (the
 * frontier) and PostgreSQL (the sink), shared by every worker of the fleet. The pipeline does not
 * know which it runs on.
 */
import type { Configuration } from '@crawlee/core';
import type { RedisClient } from '../frontier/redis/connection.js';
import type { Fleet } from '../frontier/redis/fleet.js';
import type { SeenSet } from '../frontier/seenSet.js';
import type { RunStats } from '../monitor/stats.js';
import type { Outcomes } from '../store/outcomes.js';
import type { PageHistory, SeriesRun } from '../store/pageHistory.js';
import type { RawPages } from '../store/rawPages.js';
import type { FrontierQueue } from '../vocabulary/queue.js';
import type { RunSummary } from '../vocabulary/report.js';

export interface RunStores {
    backend: 'embedded' | 'distributed';
    /** Crawlee's configuration: its storage for the crawlers' own small state (session pool, statistics). */
    config: Configuration;
    httpQueue: FrontierQueue;
    browserQueue: FrontierQueue;
    seenSet: SeenSet;
    outcomes: Outcomes;
    raw: RawPages;
    /** What the site's runs learned of each page: a recrawl starts from it (store/pageHistory.ts). */
    history: PageHistory;
    /** This run's place in the site's series: its first run, or a recrawl. */
    series: SeriesRun;
    /** This process's counters (in the distributed mode, the fleet's are their sum: Fleet.stats). */
    stats: RunStats;
    /** Where the results are, for the summary. */
    location: RunSummary['storage'];
    /** The workers sharing the frontier; distributed mode only. */
    fleet?: Fleet;
    /**
     * Where state the fleet shares beside the frontier lives (the tier
     * controller's outcomes, the site's politeness): distributed mode only.
     */
    shared?: { redis: RedisClient; keyPrefix: string };
    /** Writes what is buffered and lets go of the stores (connections, locks). */
    close(): Promise<void>;
}
