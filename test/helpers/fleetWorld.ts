/**
 * A distributed world for one test: the machine's real Redis and PostgreSQL, under a key prefix
 * and a schema of the test's own, and worker processes started as a user starts them
 * (`npm start` with REDIS_URL and DATABASE_URL set). `close()` removes every key and the schema.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { openPostgres, type PgDatabase } from '../../src/store/postgres/database.js';
import { iterateItems } from '../../src/store/postgres/reader.js';
import { startCli, type RunningCli } from './cli.js';

export const REDIS_URL = process.env.DRAGNET_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const POSTGRES_URL = process.env.DRAGNET_TEST_DATABASE_URL ?? 'postgres://127.0.0.1:5432/test';

/** A PostgreSQL URL whose connections use `schema`. */
export function withSchema(url: string, schema: string): string {
    return `${url}${url.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
}

export interface FleetWorld {
    prefix: string;
    schema: string;
    redisUrl: string;
    databaseUrl: string;
    /** A connection of the test's own, to look at Redis (and to kill the workers' connections). */
    redis: Redis;
    db: PgDatabase;
    /** The environment of a worker of this world. */
    env: NodeJS.ProcessEnv;
    /** Starts a worker: the CLI with `args`, in this world. */
    worker(args: string[], env?: NodeJS.ProcessEnv): RunningCli;
    /** What the fleet stored for `site` in `store`. */
    stored<T = Record<string, unknown>>(site: string, store?: 'items' | 'quarantine' | 'deadLetter'): Promise<T[]>;
    close(): Promise<void>;
}

export async function openFleetWorld(): Promise<FleetWorld> {
    const id = randomUUID().slice(0, 8);
    const prefix = `dragnet-test-${id}`;
    const schema = `dragnet_test_${id}`;
    const databaseUrl = withSchema(POSTGRES_URL, schema);
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    const db = await openPostgres(databaseUrl);
    const env = { REDIS_URL, DATABASE_URL: databaseUrl, DRAGNET_REDIS_PREFIX: prefix };
    return {
        prefix,
        schema,
        redisUrl: REDIS_URL,
        databaseUrl,
        redis,
        db,
        env,
        worker: (args, extra = {}) => startCli(args, { ...env, ...extra }),
        stored: async <T>(site: string, store: 'items' | 'quarantine' | 'deadLetter' = 'items') => {
            const rows: T[] = [];
            for await (const row of iterateItems(db, site, store)) rows.push(row as T);
            return rows;
        },
        close: async () => {
            for await (const keys of redis.scanStream({ match: `*${prefix}:*`, count: 1000 })) {
                if ((keys as string[]).length > 0) await redis.unlink(...(keys as string[]));
            }
            redis.disconnect();
            await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
            await db.close();
        },
    };
}

/**
 * Kills every Redis connection of the world's workers (`CLIENT KILL`):
 * what a Redis restart or a network cut does to them.
 */
export async function killWorkerConnections(world: FleetWorld): Promise<number> {
    const list = (await world.redis.client('LIST')) as string;
    const ids = list
        .split('\n')
        .filter((line) => / name=\S*/.test(line) && line.includes(`name=${world.prefix}:`))
        .map((line) => /\bid=(\d+)/.exec(line)![1]!);
    for (const id of ids) await world.redis.client('KILL', 'ID', id);
    return ids.length;
}
