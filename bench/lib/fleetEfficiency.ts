/**
 * What a page costs in the distributed mode against the embedded one, on a CPU-bound crawl: the
 * fixture shop with real-weight pages and no latency, in a process of its own, crawled once by one
 * embedded process and once by one distributed worker, each started as a user starts it, run after
 * run in turn. A page's CPU is the crawler's process and, for the worker, Redis's and PostgreSQL's
 * (serviceCpu.ts); Redis's operations are its `total_commands_processed` over the run.
 *
 * The goals (issue 50): the worker's CPU per page within 1.3× the embedded mode's, Redis's and
 * PostgreSQL's included, and its pages/s at least 0.8× the embedded mode's.
 */
import type { Redis } from 'ioredis';
import { CLEAN_SHOP } from './countingShop.js';
import { runFleet } from './fleetRun.js';
import { cpuBetween, serviceCpu } from './serviceCpu.js';
import { startShopProcess } from './shopProcess.js';
import { median, ratio, round } from './stats.js';
import type { CaseReport } from './suite.js';

export const EFFICIENCY_GOALS = { cpuPerPage: 1.3, pagesPerSec: 0.8 };
/** Pages in flight: enough to keep one process's thread busy on a shop with no latency. */
const CONCURRENCY = 50;
const PRODUCTS_PER_CATEGORY = 200;

type Mode = 'embedded' | 'distributed';

interface EfficiencyRun {
    mode: Mode;
    run: number;
    pages: number;
    items: number;
    wallSec: number;
    /** Over the crawl: the shop's first request to its last answer. */
    pagesPerSec: number;
    /** CPU ms per page: the crawler's process, Redis, PostgreSQL, and their sum. */
    crawlerMs: number;
    redisMs: number;
    postgresMs: number;
    totalMs: number;
    redisOpsPerPage: number;
    error?: string;
}

export interface EfficiencyOptions {
    redis: Redis;
    redisUrl: string;
    postgresUrl: string;
    products: number;
    runs: number;
}

export async function efficiencyCase(options: EfficiencyOptions, report: (result: CaseReport) => void): Promise<void> {
    const { products, runs } = options;
    const shopOptions = {
        ...CLEAN_SHOP,
        products,
        categories: Math.max(1, Math.round(products / PRODUCTS_PER_CATEGORY)),
        pageWeight: 'real' as const,
        latencyMs: 0,
    };
    const records: EfficiencyRun[] = [];
    for (let run = 1; run <= runs; run++) {
        for (const mode of ['embedded', 'distributed'] as const) {
            const record = await efficiencyRun(options, mode, shopOptions, run);
            records.push(record);
            process.stderr.write(
                `bench distributed efficiency ${products}: ${mode} run ${run}/${runs}: ` +
                    (record.error
                        ? `FAILED (${record.error})`
                        : `${record.pages} pages in ${record.wallSec} s, ${record.pagesPerSec} pages/s, ` +
                          `${record.totalMs} CPU ms/page (crawler ${record.crawlerMs}, redis ${record.redisMs}, ` +
                          `pg ${record.postgresMs}), ${record.redisOpsPerPage} Redis ops/page`) +
                    '\n',
            );
        }
    }
    const medianOf = (mode: Mode, key: keyof EfficiencyRun) => {
        const value = median(records.filter((r) => r.mode === mode && !r.error).map((r) => r[key] as number));
        return value === null ? null : round(value, 2);
    };
    const figures = (mode: Mode) => ({
        pagesPerSec: medianOf(mode, 'pagesPerSec'),
        cpuMsPerPage: medianOf(mode, 'totalMs'),
        crawlerMsPerPage: medianOf(mode, 'crawlerMs'),
        redisMsPerPage: medianOf(mode, 'redisMs'),
        postgresMsPerPage: medianOf(mode, 'postgresMs'),
        redisOpsPerPage: medianOf(mode, 'redisOpsPerPage'),
    });
    const embedded = figures('embedded');
    const distributed = figures('distributed');
    const cpuRatio = ratio(distributed.cpuMsPerPage, embedded.cpuMsPerPage);
    const speedRatio = ratio(distributed.pagesPerSec, embedded.pagesPerSec);
    // Redis runs commands on one thread: a primary is full when that core is.
    const redisCapacity = distributed.redisMsPerPage ? Math.round(1000 / distributed.redisMsPerPage) : null;
    const workersPerPrimary =
        redisCapacity !== null && distributed.pagesPerSec ? round(redisCapacity / distributed.pagesPerSec, 1) : null;
    report({
        json: {
            case: `efficiency-${products}`,
            products,
            pageWeight: 'real',
            maxConcurrency: CONCURRENCY,
            runs,
            embedded,
            distributed,
            redisPrimary: { pagesPerSec: redisCapacity, workers: workersPerPrimary },
            ratios: {
                cpuPerPage: cpuRatio,
                pagesPerSec: speedRatio,
                goals: EFFICIENCY_GOALS,
                meetsCpuGoal: cpuRatio !== null && cpuRatio <= EFFICIENCY_GOALS.cpuPerPage,
                meetsSpeedGoal: speedRatio !== null && speedRatio >= EFFICIENCY_GOALS.pagesPerSec,
            },
            records,
        },
        rows: [
            {
                case: `efficiency ${products}`,
                figure: 'one worker / embedded: CPU ms per page',
                value: cpuRatio,
                note:
                    `goal <= ${EFFICIENCY_GOALS.cpuPerPage}; embedded ${embedded.cpuMsPerPage} ms, worker ` +
                    `${distributed.cpuMsPerPage} ms (its own ${distributed.crawlerMsPerPage}, Redis ` +
                    `${distributed.redisMsPerPage}, PostgreSQL ${distributed.postgresMsPerPage})`,
            },
            {
                case: `efficiency ${products}`,
                figure: 'one worker / embedded: pages/s',
                value: speedRatio,
                note: `goal >= ${EFFICIENCY_GOALS.pagesPerSec}; embedded ${embedded.pagesPerSec}, worker ${distributed.pagesPerSec}`,
            },
            {
                case: `efficiency ${products}`,
                figure: 'pages/s one Redis primary holds',
                value: redisCapacity,
                note:
                    `one core's 1,000 ms a second over Redis's ${distributed.redisMsPerPage} CPU ms a page: ` +
                    `${workersPerPrimary ?? '-'} workers at ${distributed.pagesPerSec} pages/s each`,
            },
            {
                case: `efficiency ${products}`,
                figure: 'Redis operations per page (one worker)',
                value: distributed.redisOpsPerPage,
                note: 'INFO stats total_commands_processed over the run, over the pages the shop answered',
            },
        ],
    });
}

async function efficiencyRun(
    options: EfficiencyOptions,
    mode: Mode,
    shopOptions: object,
    run: number,
): Promise<EfficiencyRun> {
    const shop = await startShopProcess(shopOptions);
    const empty = { mode, run, pages: 0, items: 0, wallSec: 0, pagesPerSec: 0 };
    const zeroes = { crawlerMs: 0, redisMs: 0, postgresMs: 0, totalMs: 0, redisOpsPerPage: 0 };
    try {
        const before = await serviceCpu();
        const opsBefore = await commandsProcessed(options.redis);
        const result = await runFleet({
            workers: 1,
            embedded: mode === 'embedded',
            shopUrl: shop.url,
            redisUrl: options.redisUrl,
            postgresUrl: options.postgresUrl,
            maxConcurrency: CONCURRENCY,
            finishGraceSecs: 1,
            timeLimitSec: Math.max(120, Math.ceil(options.products / 20)),
            redis: options.redis,
        });
        const ops = (await commandsProcessed(options.redis)) - opsBefore;
        const cpu = cpuBetween(before, await serviceCpu());
        const seen = await shop.report();
        const wallSec = (result.exitedAtMs - result.spawnedAtMs) / 1000;
        // Pages/s over the crawl itself, the shop's first request to its last answer: not the start-up both pay.
        const crawlSec = Math.max(0.001, ((seen.lastAnswerAtMs ?? 0) - (seen.firstRequestAtMs ?? 0)) / 1000);
        if (!result.finished) return { ...empty, ...zeroes, error: result.workers[0]?.error ?? 'not finished' };
        const perPage = (sec: number) => round((sec * 1000) / Math.max(1, seen.requests), 2);
        // The embedded run touches neither service: what they used meanwhile is the machine's, not its.
        const redisSec = mode === 'distributed' ? cpu.redisSec : 0;
        const postgresSec = mode === 'distributed' ? cpu.postgresSec : 0;
        return {
            mode,
            run,
            pages: seen.requests,
            items: result.items,
            wallSec: round(wallSec, 2),
            pagesPerSec: round(seen.requests / crawlSec, 1),
            crawlerMs: perPage(cpu.reapedChildrenSec),
            redisMs: perPage(redisSec),
            postgresMs: perPage(postgresSec),
            totalMs: perPage(cpu.reapedChildrenSec + redisSec + postgresSec),
            redisOpsPerPage: mode === 'distributed' ? round(ops / Math.max(1, seen.requests), 1) : 0,
        };
    } finally {
        await shop.close();
    }
}

async function commandsProcessed(redis: Redis): Promise<number> {
    const info = await redis.info('stats');
    return Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? 0);
}
