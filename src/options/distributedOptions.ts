/**
 * The options of the table (options/options.ts) of the distributed mode: the shared frontier in Redis,
 * the shared sink in PostgreSQL, and how a fleet's workers hold and hand back their work.
 */
import { z } from 'zod';
import { DISTRIBUTED_DEFAULTS } from './crawlOptions.js';
import { onOrOff, wholeAtLeast1 } from './optionSchemas.js';
import { option } from './optionSpec.js';

export const DISTRIBUTED_OPTIONS = {
    redisUrl: option({
        flag: 'redis-url',
        env: 'REDIS_URL',
        group: 'distributed',
        defaultText: 'none: the embedded SQLite frontier',
        doc:
            'the Redis that holds the shared frontier (BullMQ queues, seen-set, fleet state); with --database-url, ' +
            'switches to distributed mode',
        schema: z.string().min(1, 'must not be empty').optional(),
    }),
    databaseUrl: option({
        flag: 'database-url',
        env: 'DATABASE_URL',
        group: 'distributed',
        defaultText: 'none: the embedded SQLite sink',
        doc:
            'the PostgreSQL that holds items, quarantine, dead-letter and raw pages; a schema: ' +
            '?options=-c%20search_path%3DNAME',
        schema: z.string().min(1, 'must not be empty').optional(),
    }),
    redisCluster: option({
        flag: 'redis-cluster',
        env: 'DRAGNET_REDIS_CLUSTER',
        group: 'distributed',
        kind: 'switch',
        default: false,
        defaultText: 'off: one Redis',
        doc:
            "--redis-url names one node of a Redis Cluster; the others are found from it. Each site's keys share " +
            'one hash slot, so the sites spread over the nodes; the variable: 1 or 0',
        schema: onOrOff(),
    }),
    redisPrefix: option({
        flag: 'redis-prefix',
        env: 'DRAGNET_REDIS_PREFIX',
        group: 'distributed',
        default: DISTRIBUTED_DEFAULTS.redisPrefix,
        doc: 'the start of every Redis key dragnet writes, so several fleets can share one Redis',
        schema: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'must be letters, digits, _, . or -'),
    }),
    jobLockSecs: option({
        flag: 'job-lock-secs',
        env: 'DRAGNET_JOB_LOCK_SECS',
        group: 'distributed',
        default: DISTRIBUTED_DEFAULTS.jobLockSecs,
        doc:
            "seconds a page's job stays locked to its worker without a renewal: how soon a dead worker's pages go " +
            'to the others',
        schema: wholeAtLeast1(),
    }),
    finishGraceSecs: option({
        flag: 'finish-grace-secs',
        env: 'DRAGNET_FINISH_GRACE_SECS',
        group: 'distributed',
        default: DISTRIBUTED_DEFAULTS.finishGraceSecs,
        doc: 'seconds the shared frontier must stay empty, with no job locked anywhere, before a worker ends',
        schema: wholeAtLeast1(),
    }),
    fleetConcurrency: option({
        flag: 'fleet-concurrency',
        env: 'DRAGNET_FLEET_CONCURRENCY',
        group: 'distributed',
        defaultText: 'no fleet-wide limit',
        doc:
            "most pages of the site in work at once across all workers (BullMQ's global concurrency), so N workers " +
            'do not send N times what the site takes',
        schema: wholeAtLeast1().optional(),
    }),
    maxWaitingJobs: option({
        flag: 'max-waiting-jobs',
        env: 'DRAGNET_MAX_WAITING_JOBS',
        group: 'distributed',
        default: DISTRIBUTED_DEFAULTS.maxWaitingJobs,
        doc:
            'jobs waiting in Redis per stage past which record pages spill to PostgreSQL and are fed back in ' +
            'windows (a waiting job costs Redis ~0.5 KB)',
        schema: wholeAtLeast1(),
    }),
};
