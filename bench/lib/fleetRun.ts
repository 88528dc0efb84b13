/**
 * One crawl by a fleet of dragnet workers, each started as a user starts one:
 * `node --import tsx src/main.ts --site demo-shop --start-url URL ...` with REDIS_URL and
 * DATABASE_URL, in a world of the run's own — a fresh Redis key prefix and PostgreSQL schema,
 * removed afterwards whatever happened (as test/helpers/fleetWorld.ts does for the tests).
 *
 * Every option's variable is set empty in the workers' environment, as test/helpers/cli.ts does:
 * the CLI reads empty as unset and dotenv does not override a set variable, so neither the
 * caller's environment nor a `.env` changes the run.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import pg from 'pg';
import { helpText } from '../../src/options/config.js';
import { deleteKeysUnder } from '../../src/frontier/redisSeenSet.js';
import { fleetKeys } from '../../src/wiring/openDistributed.js';
import type { RunSummary } from '../../src/vocabulary/report.js';

const projectRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface FleetRunOptions {
    workers: number;
    /** The shop's origin, no trailing slash. */
    shopUrl: string;
    redisUrl: string;
    /** The PostgreSQL URL without a schema; the run adds its own. */
    postgresUrl: string;
    /** `--max-concurrency` of every worker. */
    maxConcurrency: number;
    /** DRAGNET_FINISH_GRACE_SECS. */
    finishGraceSecs: number;
    /** Workers still running after this are stopped (SIGTERM, then SIGKILL) and the run marked unfinished. */
    timeLimitSec: number;
    /** Used for cleaning up the run's keys. */
    redis: Redis;
    /**
     * One process in the embedded mode instead (no REDIS_URL or DATABASE_URL; its SQLite stores in
     * its storage dir), started the same way, for a comparison with one worker. Default: false.
     */
    embedded?: boolean;
}

export interface WorkerOutcome {
    exitCode: number | null;
    signal: NodeJS.Signals | null;
    /** Seconds from the fleet's spawn to this worker's exit. */
    exitSec: number;
    /**
     * Seconds from the fleet's spawn to this worker's crawl start (its
     * summary's startedAt): loading tsx, the modules, connecting.
     */
    startupSec: number | null;
    /** Seconds from the fleet's spawn to this worker's crawl end (its summary's finishedAt), before it shuts down. */
    finishedSec: number | null;
    /** Its summary's counts: pages it fetched, items it stored. */
    fetched: number | null;
    stored: number | null;
    /** The end of its stderr, when it failed. */
    error?: string;
}

export interface FleetRunResult {
    /** `Date.now()` when the first worker was spawned, and when the last one had exited. */
    spawnedAtMs: number;
    exitedAtMs: number;
    finished: boolean;
    workers: WorkerOutcome[];
    /** Rows in the run's `items` table (embedded: the items its summary says it stored). */
    items: number;
}

export async function runFleet(options: FleetRunOptions): Promise<FleetRunResult> {
    const id = randomUUID().slice(0, 8);
    const prefix = `dragnet-bench-${id}`;
    const schema = `dragnet_bench_${id}`;
    const separator = options.postgresUrl.includes('?') ? '&' : '?';
    const databaseUrl = `${options.postgresUrl}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    const dir = await mkdtemp(join(tmpdir(), 'dragnet-bench-fleet-'));
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const [, name] of helpText().matchAll(/env: ([A-Z_]+)/g)) env[name as string] = '';
    if (options.embedded && options.workers !== 1) throw new Error('the embedded mode runs one process');
    Object.assign(env, {
        ...(options.embedded ? {} : { REDIS_URL: options.redisUrl, DATABASE_URL: databaseUrl }),
        DRAGNET_REDIS_PREFIX: prefix,
        DRAGNET_FINISH_GRACE_SECS: String(options.finishGraceSecs),
        LOG_LEVEL: 'warn',
    });
    const db = new pg.Client({ connectionString: withDefaultUser(options.postgresUrl) });
    await db.connect();
    try {
        const spawnedAtMs = Date.now();
        const children = Array.from({ length: options.workers }, (_, index) => startWorker(index, dir, options, env));
        let finished = true;
        const stopTimer = setTimeout(() => {
            finished = false;
            for (const { child } of children) child.kill('SIGTERM');
            setTimeout(() => {
                for (const { child } of children) child.kill('SIGKILL');
            }, 10_000).unref();
        }, options.timeLimitSec * 1000);
        const exits = await Promise.all(children.map(({ exit }) => exit));
        clearTimeout(stopTimer);
        const exitedAtMs = Math.max(...exits.map((exit) => exit.atMs));
        const workers = await Promise.all(
            exits.map(async (exit, index): Promise<WorkerOutcome> => {
                const summary = await readFile(join(dir, `w${index}.json`), 'utf8').then(
                    (text) => JSON.parse(text) as RunSummary,
                    () => undefined,
                );
                const failed = exit.code !== 0;
                return {
                    exitCode: exit.code,
                    signal: exit.signal,
                    exitSec: (exit.atMs - spawnedAtMs) / 1000,
                    startupSec: summary ? (Date.parse(summary.startedAt) - spawnedAtMs) / 1000 : null,
                    finishedSec: summary ? (Date.parse(summary.finishedAt) - spawnedAtMs) / 1000 : null,
                    fetched: summary?.http.fetched ?? null,
                    stored: summary?.items.stored ?? null,
                    ...(failed ? { error: exit.stderr.trim().split('\n').slice(-5).join(' | ') } : {}),
                };
            }),
        );
        const tables = await db.query<{ n: string }>(
            'SELECT count(*) AS n FROM pg_tables WHERE schemaname = $1 AND tablename = $2',
            [schema, 'items'],
        );
        const items = options.embedded
            ? (workers[0]?.stored ?? 0)
            : Number(tables.rows[0]!.n) > 0
              ? Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".items`)).rows[0]!.n)
              : 0;
        return {
            spawnedAtMs,
            exitedAtMs,
            finished: finished && workers.every((worker) => worker.exitCode === 0),
            workers,
            items,
        };
    } finally {
        await deleteKeysUnder(options.redis, fleetKeys(prefix, 'demo-shop').site);
        await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await db.end();
        await rm(dir, { recursive: true, force: true });
    }
}

interface WorkerExit {
    code: number | null;
    signal: NodeJS.Signals | null;
    atMs: number;
    stderr: string;
}

function startWorker(
    index: number,
    dir: string,
    options: FleetRunOptions,
    env: NodeJS.ProcessEnv,
): { child: ChildProcess; exit: Promise<WorkerExit> } {
    const args = [
        '--import',
        'tsx',
        'src/main.ts',
        '--site',
        'demo-shop',
        '--start-url',
        `${options.shopUrl}/`,
        '--max-concurrency',
        String(options.maxConcurrency),
        '--storage-dir',
        join(dir, `w${index}`),
        '--summary-json',
        join(dir, `w${index}.json`),
    ];
    const child = spawn(process.execPath, args, { cwd: projectRoot, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
    // Timed at 'exit' (the process is gone), resolved at 'close' (its stderr has been read to the end).
    let exitedAtMs = 0;
    child.once('exit', () => (exitedAtMs = Date.now()));
    const exit = new Promise<WorkerExit>((resolve) => {
        child.once('error', (error) => resolve({ code: null, signal: null, atMs: Date.now(), stderr: error.message }));
        child.once('close', (code, signal) => resolve({ code, signal, atMs: exitedAtMs || Date.now(), stderr }));
    });
    return { child, exit };
}

/**
 * The URL with the OS user in it when it names none and neither PGUSER nor USER is set, as the
 * workers' own pool does (store/postgres/database.ts): pg, unlike libpq, would send no user at all.
 */
function withDefaultUser(url: string): string {
    const parsed = new URL(url);
    if (parsed.username || parsed.searchParams.has('user') || process.env.PGUSER || process.env.USER) return url;
    parsed.username = encodeURIComponent(userInfo().username);
    return parsed.toString();
}
