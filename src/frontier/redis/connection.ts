/**
 * The Redis connection of a distributed run. At start, a Redis that does not answer within a few
 * seconds is an error the user can act on (one line, exit 2). During the run a lost connection is
 * retried for ever with a capped backoff: commands wait in ioredis's offline queue meanwhile
 * (`maxRetriesPerRequest: null`, as BullMQ's workers require), so the workers pause and go on
 * where they were once Redis is back; nothing is dropped.
 *
 * With `cluster`, the URL names one node of a Redis Cluster and ioredis finds the others (and the
 * slots each serves) from it. Every key of a site carries the site's hash tag (openDistributed.ts,
 * fleetKeys), so a site's scripts and transactions, which touch many of its keys at once, run on
 * one node; the sites spread over the nodes.
 */
import { Cluster, Redis } from 'ioredis';
import { ConfigError } from '../../options/configError.js';
import { redactUrl } from '../../vocabulary/redact.js';

export interface RedisConnectionOptions {
    /** How long to wait for the first answer before giving up. Default: 5,000 ms. */
    connectTimeoutMs?: number;
    /** Longest wait between reconnection attempts. Default: 5,000 ms. */
    maxBackoffMs?: number;
    /** The connection's name in Redis's `CLIENT LIST`. Default: none. */
    name?: string;
    /** `url` names a node of a Redis Cluster (`--redis-cluster`). Default: false, one Redis. */
    cluster?: boolean;
}

/** A connection to one Redis or to a Redis Cluster: the commands dragnet sends are the same on both. */
export type RedisClient = Redis | Cluster;

/** The primaries that hold the keys: a Redis Cluster's are spread over its nodes, and each node's SCAN sees its own. */
export function primariesOf(redis: RedisClient): Redis[] {
    return redis instanceof Cluster ? redis.nodes('master') : [redis];
}

export async function connectRedis(url: string, options: RedisConnectionOptions = {}): Promise<RedisClient> {
    const { connectTimeoutMs = 5_000, maxBackoffMs = 5_000 } = options;
    const retryStrategy = (attempt: number) => Math.min(100 * 2 ** attempt, maxBackoffMs);
    const redisOptions = { connectionName: options.name, maxRetriesPerRequest: null };
    const redis: RedisClient = options.cluster
        ? new Cluster([url], {
              lazyConnect: true,
              clusterRetryStrategy: retryStrategy,
              // The nodes the cluster names are reached with the URL's credentials, as the one it names.
              redisOptions: { ...redisOptions, ...credentialsOf(url) },
          })
        : new Redis(url, { ...redisOptions, lazyConnect: true, retryStrategy });
    // Errors of a lost connection are retried by ioredis; they are not the process's to crash on.
    redis.on('error', () => {});
    let timer: NodeJS.Timeout | undefined;
    try {
        await Promise.race([
            redis.connect().then(() => redis.ping()),
            new Promise((_, reject) => {
                timer = setTimeout(() => reject(new Error(`no answer in ${connectTimeoutMs} ms`)), connectTimeoutMs);
            }),
        ]);
    } catch (error) {
        redis.disconnect();
        throw new ConfigError(
            `Redis${options.cluster ? ' Cluster' : ''} at ${redactUrl(url)} is unreachable ` +
                `(${error instanceof Error ? error.message : String(error)}); check --redis-url / REDIS_URL` +
                `${options.cluster ? ' and --redis-cluster' : ''}`,
        );
    } finally {
        clearTimeout(timer);
    }
    return redis;
}

/**
 * What BullMQ's guidance for production asks of Redis and this one lacks: `maxmemory-policy
 * noeviction` (an evicting Redis drops queued jobs and seen-set buckets silently) and persistence
 * (AOF, so a restart does not lose the frontier). Empty when all is well or when the server does
 * not let CONFIG GET be read (managed services often do not).
 */
export async function redisSettingProblems(redis: RedisClient): Promise<string[]> {
    // CONFIG GET answers [name, value].
    let policy: string | undefined;
    let appendonly: string | undefined;
    try {
        [, policy] = (await redis.config('GET', 'maxmemory-policy')) as string[];
        [, appendonly] = (await redis.config('GET', 'appendonly')) as string[];
    } catch {
        return [];
    }
    const problems: string[] = [];
    if (policy !== 'noeviction') {
        problems.push(
            `maxmemory-policy is ${policy}: Redis may evict queued requests and seen-set entries; set it to noeviction`,
        );
    }
    if (appendonly !== 'yes')
        problems.push(
            'appendonly is off: a Redis restart loses the shared frontier; set appendonly yes (appendfsync everysec)',
        );
    return problems;
}

function credentialsOf(url: string): { username?: string; password?: string } {
    const { username, password } = new URL(url);
    return {
        ...(username ? { username: decodeURIComponent(username) } : {}),
        ...(password ? { password: decodeURIComponent(password) } : {}),
    };
}
