/**
 * The distributed mode (a BullMQ frontier in Redis, the sink in PostgreSQL): does a fleet scale,
 * how fast is the frontier, and what does it cost in Redis memory. Needs a Redis and a PostgreSQL
 * (DRAGNET_BENCH_REDIS_URL, default redis://127.0.0.1:6379; DRAGNET_BENCH_DATABASE_URL, default
 * postgres://127.0.0.1:5432/test); every run works under a key prefix and a schema of its own and
 * removes them afterwards.
 *
 * 1. scaling: the fixture shop with 250 ms responses, in a process of its own, crawled by 1, 2 and
 *    4 worker processes started as a user starts them (`src/main.ts`, --max-concurrency 20 each,
 *    DRAGNET_FINISH_GRACE_SECS=1). Latency-bound, so N workers should crawl N times as fast:
 *    the goal is pages/s(N) >= 0.9 x N x pages/s(1), wall time from the first spawn to the last exit.
 * 2. frontier ops: one process adding requests to a stage's JobQueue (batches of 100), then taking
 *    and completing them (fetchNextRequest + markRequestHandled, prefetch 50); the seen-set's adds.
 * 3. seen-set memory: bytes per URL of the exact set and the Bloom filter (lib/seenSetMemory.ts).
 * 4. queue memory: Redis bytes per waiting request with 1,000,000 queued, and what 10M would take.
 * 5. efficiency: one worker against one embedded process on a CPU-bound crawl of real-weight pages,
 *    CPU per page (Redis's and PostgreSQL's included) and pages/s, and Redis operations per page
 *    (lib/fleetEfficiency.ts).
 */
import { Redis } from 'ioredis';
import { cpus } from 'node:os';
import { DISTRIBUTED_DEFAULTS } from '../src/options/crawlOptions.js';
import { connectRedis } from '../src/frontier/redis/connection.js';
import { CLEAN_SHOP } from './lib/countingShop.js';
import { runFleet, type FleetRunResult } from './lib/fleetRun.js';
import { efficiencyCase } from './lib/fleetEfficiency.js';
import { measureFrontierOps, measureQueueMemory, type FrontierOps } from './lib/redisFrontier.js';
import { cpuBetween, serviceCpu } from './lib/serviceCpu.js';
import { measureSpilledQueue } from './lib/spilledQueue.js';
import { measureSeenSetMemory, type SeenSetMemory } from './lib/seenSetMemory.js';
import { startShopProcess, type ShopReport } from './lib/shopProcess.js';
import { median, ratio, round, seriesSummary } from './lib/stats.js';
import { defineSuite, type CaseReport, type TableRow } from './lib/suite.js';

const REDIS_URL = process.env.DRAGNET_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const POSTGRES_URL = process.env.DRAGNET_BENCH_DATABASE_URL ?? 'postgres://127.0.0.1:5432/test';

const LATENCY_MS = 250;
/** Each worker's --max-concurrency: the fleet's ideal is workers x 20 / 0.25 s = 80 pages/s a worker. */
const CONCURRENCY = 20;
const WORKER_COUNTS = [1, 2, 4];
/** Short, so the grace a worker waits on an empty frontier before it ends is a small part of a run. */
const FINISH_GRACE_SECS = 1;
const SCALING_GOAL = 0.9;
/** 2,000 products are ~2,100 pages: 26 s for one worker at its ideal, 7 s for four. */
const DEFAULT_PRODUCTS = [2_000];
const LARGE_PRODUCTS = [10_000];
/** Listing chains of 10 pages (one `next` hop per 250 ms), so discovery keeps ahead of 4 workers. */
const PRODUCTS_PER_CATEGORY = 200;

const FRONTIER_REQUESTS = 20_000;
const LARGE_FRONTIER_REQUESTS = 100_000;
/** Requests per addRequests() and seen-set add(): about a listing page's links. */
const FRONTIER_BATCH = 100;
const PREFETCH = 50;

const SEEN_SET_CASES: Array<{ urls: number; kind: 'exact' | 'bloom' }> = [
    { urls: 1_000_000, kind: 'exact' },
    { urls: 1_000_000, kind: 'bloom' },
];
/** A minute or two each: only with --large. */
const LARGE_SEEN_SET_CASES: Array<{ urls: number; kind: 'exact' | 'bloom' }> = [
    { urls: 10_000_000, kind: 'exact' },
    { urls: 10_000_000, kind: 'bloom' },
];

/** The issue's crawl: 10,000 real-weight products, some 15 s embedded. */
const EFFICIENCY_PRODUCTS = 10_000;
const LARGE_EFFICIENCY_PRODUCTS = 50_000;

const QUEUED_JOBS = 1_000_000;
const SAMPLED_JOBS = 1_000;
const EXTRAPOLATED_JOBS = 10_000_000;
/** The Redis the 10M projection is held against. */
const REDIS_BUDGET_BYTES = 4 * 1024 ** 3;

type Report = (result: CaseReport) => void;

export default defineSuite({
    description:
        'distributed mode: 1/2/4 worker processes on a 250 ms shop ' +
        '(scaling), frontier ops/s, Redis bytes per URL and per queued request',
    runByDefault: false,
    async run(options, report) {
        const redis = await connectRedis(REDIS_URL, { name: 'dragnet-bench' });
        if (!(redis instanceof Redis)) throw new Error('the distributed bench measures one Redis, not a cluster');
        try {
            for (const products of options.products ?? (options.large ? LARGE_PRODUCTS : DEFAULT_PRODUCTS))
                await scalingCase(redis, products, options.runs, report);
            await frontierOpsCase(
                redis,
                options.large ? LARGE_FRONTIER_REQUESTS : FRONTIER_REQUESTS,
                options.runs,
                report,
            );
            const seenSets: SeenSetMemory[] = [];
            for (const seenSetCase of [...SEEN_SET_CASES, ...(options.large ? LARGE_SEEN_SET_CASES : [])])
                seenSets.push(await seenSetCaseRun(redis, seenSetCase, report));
            await queueMemoryCase(redis, seenSets, report);
            await spilledQueueCase(redis, report);
            await efficiencyCase(
                {
                    redis,
                    redisUrl: REDIS_URL,
                    postgresUrl: POSTGRES_URL,
                    products: options.large ? LARGE_EFFICIENCY_PRODUCTS : EFFICIENCY_PRODUCTS,
                    runs: options.runs,
                },
                report,
            );
        } finally {
            redis.disconnect();
        }
    },
});

// --- 1. scaling ---------------------------------------------------------------------------

interface FleetFigures {
    pages: number;
    items: number;
    wallSec: number;
    pagesPerSec: number;
    /** From the shop's first request to its last answer: the crawl without start-up and finish. */
    crawlSec: number;
    crawlPagesPerSec: number;
    /** Crawl pages/s over the fleet's ideal (workers x concurrency / latency). */
    shareOfIdeal: number;
    /** From the first spawn to the shop's first request: loading tsx and the modules, connecting. */
    startupSec: number;
    /** From the shop's last answer to the last worker's exit: the finish grace and shutting down. */
    tailSec: number;
    /**
     * Part of the tail: from the shop's last answer to the last worker's crawl
     * end (its summary's finishedAt): noticing the end, the grace included.
     */
    endDetectSec: number | null;
    /** The rest: from the last crawl end to the last exit (report, closing queues and pools, process exit). */
    shutdownSec: number | null;
    inflightMedian: number | null;
    inflightMax: number | null;
    /** CPU seconds over the run, and the machine's busy share. */
    workersCpuSec: number;
    redisCpuSec: number;
    postgresCpuSec: number;
    shopCpuSec: number;
    /** Workers' CPU over the wall time: cores the fleet kept busy (this machine has cpus().length). */
    workersCores: number;
    workerCpuMsPerPage: number;
    machineBusy: number;
    othersCpuShare: number;
}

type FleetRecord =
    | {
          run: number;
          figures: FleetFigures;
          perWorker: Array<{
              fetched: number | null;
              stored: number | null;
              startupSec: number | null;
              finishedSec: number | null;
              exitSec: number;
          }>;
      }
    | { run: number; error: string };

async function scalingCase(redis: Redis, products: number, runs: number, report: Report): Promise<void> {
    const categories = Math.max(1, Math.round(products / PRODUCTS_PER_CATEGORY));
    const shopOptions = { ...CLEAN_SHOP, products, categories, latencyMs: LATENCY_MS };
    const records = new Map<number, FleetRecord[]>(WORKER_COUNTS.map((workers) => [workers, []]));
    // Worker counts alternate run by run, so drift in the machine's load hits all of them alike.
    for (let run = 1; run <= runs; run++) {
        for (const workers of WORKER_COUNTS) {
            const record = await fleetOnce(redis, workers, products, shopOptions, run);
            records.get(workers)!.push(record);
            process.stderr.write(
                `bench distributed scaling ${products}: ${workers} ` +
                    `worker(s) run ${run}/${runs}: ${describeFleet(record)}\n`,
            );
        }
    }
    const fleets = Object.fromEntries(
        [...records].map(([workers, list]) => [workers, { median: medians(list), runs: list }]),
    );
    const one = fleets[1]!.median;
    const ratios = Object.fromEntries(
        WORKER_COUNTS.filter((workers) => workers > 1).map((workers) => {
            const m = fleets[workers]!.median;
            const wall = ratio(m.pagesPerSec, one.pagesPerSec);
            return [
                workers,
                {
                    pagesPerSec: wall,
                    crawlPagesPerSec: ratio(m.crawlPagesPerSec, one.crawlPagesPerSec),
                    goal: round(SCALING_GOAL * workers, 2),
                    meetsGoal: wall !== null && wall >= SCALING_GOAL * workers,
                },
            ];
        }),
    );
    const rows: TableRow[] = WORKER_COUNTS.map((workers) => {
        const m = fleets[workers]!.median;
        const r = ratios[workers];
        const figure = `${workers} worker${workers > 1 ? 's' : ''}: pages/s (wall)`;
        if (Object.keys(m).length === 0)
            return { case: `scaling ${products}`, figure, value: null, note: 'every run failed (see the JSON)' };
        return {
            case: `scaling ${products}`,
            figure,
            value: m.pagesPerSec,
            note: [
                `${m.pages} pages in ${m.wallSec} s`,
                r ? `x${r.pagesPerSec} of 1 (goal ${r.goal}${r.meetsGoal ? ', met' : ', missed'})` : null,
                `crawl ${m.crawlPagesPerSec}/s = ${m.shareOfIdeal} ` +
                    `of ${idealPagesPerSec(workers)}/s${r ? `, x${r.crawlPagesPerSec}` : ''}`,
                `start ${m.startupSec} s, tail ${m.tailSec} s (end seen after ${m.endDetectSec} ` +
                    `s, grace ${FINISH_GRACE_SECS} s; shutdown ${m.shutdownSec} s)`,
                `in flight ${m.inflightMedian}`,
                `workers ${m.workersCores} cores, ${m.workerCpuMsPerPage} ms ` +
                    `CPU/page; redis ${m.redisCpuSec} s, pg ${m.postgresCpuSec} s`,
                `machine ${m.machineBusy === null ? '-' : Math.round(m.machineBusy * 100)}% busy`,
                failedRuns(records.get(workers)!),
            ]
                .filter(Boolean)
                .join('; '),
        };
    });
    report({
        json: {
            case: `scaling-${products}`,
            products,
            categories,
            latencyMs: LATENCY_MS,
            maxConcurrencyPerWorker: CONCURRENCY,
            finishGraceSecs: FINISH_GRACE_SECS,
            idealPagesPerSecPerWorker: idealPagesPerSec(1),
            runs,
            fleets,
            ratios,
        },
        rows,
    });
}

function idealPagesPerSec(workers: number): number {
    return (workers * CONCURRENCY) / (LATENCY_MS / 1000);
}

async function fleetOnce(
    redis: Redis,
    workers: number,
    products: number,
    shopOptions: object,
    run: number,
): Promise<FleetRecord> {
    const shop = await startShopProcess(shopOptions);
    try {
        const before = await serviceCpu();
        let result: FleetRunResult;
        try {
            result = await runFleet({
                workers,
                shopUrl: shop.url,
                redisUrl: REDIS_URL,
                postgresUrl: POSTGRES_URL,
                maxConcurrency: CONCURRENCY,
                finishGraceSecs: FINISH_GRACE_SECS,
                // Far past the slowest expected run (one worker at a quarter of its ideal).
                timeLimitSec: Math.max(120, Math.ceil((4 * products) / idealPagesPerSec(1))),
                redis,
            });
        } catch (error) {
            return { run, error: error instanceof Error ? error.message : String(error) };
        }
        const cpu = cpuBetween(before, await serviceCpu());
        const seen = await shop.report();
        if (!result.finished)
            return {
                run,
                error: result.workers
                    .map((w, i) => `worker ${i}: exit ${w.exitCode ?? w.signal}${w.error ? ` (${w.error})` : ''}`)
                    .join('; '),
            };
        return {
            run,
            figures: fleetFigures(workers, result, seen, cpu),
            perWorker: result.workers.map(({ fetched, stored, startupSec, finishedSec, exitSec }) => ({
                fetched,
                stored,
                startupSec,
                finishedSec,
                exitSec,
            })),
        };
    } finally {
        await shop.close();
    }
}

function fleetFigures(
    workers: number,
    result: FleetRunResult,
    seen: ShopReport,
    cpu: ReturnType<typeof cpuBetween>,
): FleetFigures {
    const wallSec = (result.exitedAtMs - result.spawnedAtMs) / 1000;
    const first = seen.firstRequestAtMs ?? result.spawnedAtMs;
    const last = seen.lastAnswerAtMs ?? result.exitedAtMs;
    const crawlSec = Math.max(0.001, (last - first) / 1000);
    const inflight = seriesSummary(seen.inflightSamples);
    const finishes = result.workers.map((worker) => worker.finishedSec);
    const lastFinishedMs = finishes.every((sec) => sec !== null)
        ? result.spawnedAtMs + Math.max(...(finishes as number[])) * 1000
        : null;
    const ours = cpu.reapedChildrenSec + cpu.redisSec + cpu.postgresSec + seen.cpuSec;
    return {
        pages: seen.requests,
        items: result.items,
        wallSec: round(wallSec, 2),
        pagesPerSec: round(seen.requests / wallSec, 1),
        crawlSec: round(crawlSec, 2),
        crawlPagesPerSec: round(seen.requests / crawlSec, 1),
        shareOfIdeal: round(seen.requests / crawlSec / idealPagesPerSec(workers), 3),
        startupSec: round((first - result.spawnedAtMs) / 1000, 2),
        tailSec: round((result.exitedAtMs - last) / 1000, 2),
        endDetectSec: lastFinishedMs === null ? null : round((lastFinishedMs - last) / 1000, 2),
        shutdownSec: lastFinishedMs === null ? null : round((result.exitedAtMs - lastFinishedMs) / 1000, 2),
        inflightMedian: inflight.steadyMedian,
        inflightMax: inflight.max,
        workersCpuSec: round(cpu.reapedChildrenSec, 2),
        redisCpuSec: round(cpu.redisSec, 2),
        postgresCpuSec: round(cpu.postgresSec, 2),
        shopCpuSec: round(seen.cpuSec, 2),
        workersCores: round(cpu.reapedChildrenSec / wallSec, 2),
        workerCpuMsPerPage: round((cpu.reapedChildrenSec * 1000) / Math.max(1, seen.requests), 2),
        machineBusy: round(cpu.machineBusy, 3),
        othersCpuShare: round(Math.max(0, cpu.machineBusy - ours / (cpus().length * wallSec)), 3),
    };
}

function describeFleet(record: FleetRecord): string {
    if ('error' in record) return `FAILED (${record.error})`;
    const f = record.figures;
    return (
        `${f.pages} pages, ${f.items} items in ${f.wallSec}s: ${f.pagesPerSec} ` +
        `pages/s (crawl ${f.crawlPagesPerSec}/s over ${f.crawlSec}s, ` +
        `start ${f.startupSec}s, tail ${f.tailSec}s = end seen ${f.endDetectSec}s ` +
        `+ shutdown ${f.shutdownSec}s), in flight ${f.inflightMedian}, ` +
        `workers ${f.workersCores} cores, redis ${f.redisCpuSec}s ` +
        `pg ${f.postgresCpuSec}s CPU, machine ${Math.round(f.machineBusy * 100)}% ` +
        `busy (others ${Math.round(f.othersCpuShare * 100)}%); per ` +
        `worker ${record.perWorker.map((w) => w.fetched).join('/')} pages`
    );
}

/** The median of every figure over the runs that finished. */
function medians(records: readonly FleetRecord[]): Record<keyof FleetFigures, number | null> {
    const done = records.flatMap((record) => ('figures' in record ? [record.figures] : []));
    const names = Object.keys(done[0] ?? {}) as Array<keyof FleetFigures>;
    return Object.fromEntries(
        names.map((name) => [
            name,
            median(done.flatMap((figures) => (figures[name] === null ? [] : [figures[name] as number]))),
        ]),
    ) as Record<keyof FleetFigures, number | null>;
}

function failedRuns(records: readonly FleetRecord[]): string | null {
    const failed = records.filter((record) => 'error' in record).length;
    return failed > 0 ? `${failed} run(s) failed` : null;
}

// --- 2. frontier operations --------------------------------------------------------------

async function frontierOpsCase(redis: Redis, requests: number, runs: number, report: Report): Promise<void> {
    const results: FrontierOps[] = [];
    for (let run = 1; run <= runs; run++) {
        const ops = await measureFrontierOps(redis, { requests, batch: FRONTIER_BATCH, prefetch: PREFETCH });
        results.push(ops);
        process.stderr.write(
            `bench distributed frontier-ops run ${run}/${runs}: ${ops.addsPerSec} adds/s ` +
                `(redis ${ops.addCpu.redisCoreShare}, ` +
                `bench ${ops.addCpu.benchCoreShare} cores), ${ops.takeCompletePerSec} ` +
                `take+complete/s (redis ${ops.takeCompleteCpu.redisCoreShare}, ` +
                `bench ${ops.takeCompleteCpu.benchCoreShare} ` +
                `cores), seen-set ${ops.seenAddsPerSec.exact}/s exact, ${ops.seenAddsPerSec.bloom}/s bloom\n`,
        );
    }
    const m = {
        addsPerSec: median(results.map((r) => r.addsPerSec)),
        takeCompletePerSec: median(results.map((r) => r.takeCompletePerSec)),
        seenSetExactAddsPerSec: median(results.map((r) => r.seenAddsPerSec.exact)),
        seenSetBloomAddsPerSec: median(results.map((r) => r.seenAddsPerSec.bloom)),
        addRedisCores: median(results.map((r) => r.addCpu.redisCoreShare)),
        addBenchCores: median(results.map((r) => r.addCpu.benchCoreShare)),
        takeCompleteRedisCores: median(results.map((r) => r.takeCompleteCpu.redisCoreShare)),
        takeCompleteBenchCores: median(results.map((r) => r.takeCompleteCpu.benchCoreShare)),
    };
    const caseName = `frontier-ops ${requests}`;
    report({
        json: {
            case: `frontier-ops-${requests}`,
            requests,
            batch: FRONTIER_BATCH,
            prefetch: PREFETCH,
            runs,
            median: m,
            results,
        },
        rows: [
            {
                case: caseName,
                figure: `JobQueue adds/s (batches of ${FRONTIER_BATCH}, one at a time)`,
                value: m.addsPerSec,
                note: `cores busy: redis ${m.addRedisCores}, client ${m.addBenchCores}`,
            },
            {
                case: caseName,
                figure: `JobQueue take+complete/s (prefetch ${PREFETCH})`,
                value: m.takeCompletePerSec,
                note: `cores busy: redis ${m.takeCompleteRedisCores}, client ${m.takeCompleteBenchCores}`,
            },
            {
                case: caseName,
                figure: `seen-set adds/s, exact (batches of ${FRONTIER_BATCH})`,
                value: m.seenSetExactAddsPerSec,
                note: null,
            },
            {
                case: caseName,
                figure: `seen-set adds/s, bloom (batches of ${FRONTIER_BATCH})`,
                value: m.seenSetBloomAddsPerSec,
                note: null,
            },
        ],
    });
}

// --- 3. seen-set memory ------------------------------------------------------------------

async function seenSetCaseRun(
    redis: Redis,
    seenSetCase: { urls: number; kind: 'exact' | 'bloom' },
    report: Report,
): Promise<SeenSetMemory> {
    const measured = await measureSeenSetMemory(redis, seenSetCase);
    process.stderr.write(
        `bench distributed seen-set ${seenSetCase.kind} ${seenSetCase.urls}: ${measured.bytesPerUrl} ` +
            `bytes/URL, ${measured.addsPerSec} adds/s\n`,
    );
    report({
        json: {
            case: `seen-set-${seenSetCase.kind}-${seenSetCase.urls}`,
            ...measured,
            usedMemoryDeltaPerUrl: round(measured.usedMemoryDelta / seenSetCase.urls, 2),
        },
        rows: [
            {
                case: `seen-set ${seenSetCase.kind} ${seenSetCase.urls}`,
                figure: 'bytes/URL (MEMORY USAGE)',
                value: measured.bytesPerUrl,
                note:
                    `used_memory delta ${round(measured.usedMemoryDelta / seenSetCase.urls, 2)}/URL; ` +
                    `${Math.round(measured.bytes / 1024 ** 2)} MB; ${measured.addsPerSec} adds/s ` +
                    `(batches of 10,000, 4 in flight); admitted ${measured.admitted}`,
            },
        ],
    });
    return measured;
}

// --- 4. queue memory ---------------------------------------------------------------------

async function queueMemoryCase(redis: Redis, seenSets: readonly SeenSetMemory[], report: Report): Promise<void> {
    const memory = await measureQueueMemory(redis, { jobs: QUEUED_JOBS, sampled: SAMPLED_JOBS });
    // Per job, the larger of the allocator's and the keys' own view; linear, which leaves out that
    // the keyspace's table doubles in steps (2^24 buckets x 8 bytes = 128 MB at 10M keys).
    const perJob = Math.max(memory.bytesPerJob, memory.bytesPerJobByKeys);
    const jobsBytes = perJob * EXTRAPOLATED_JOBS;
    // A frontier of 10M URLs also holds their seen-set: measured at 10M with --large, else 1M scaled.
    const exact =
        seenSets.find((s) => s.kind === 'exact' && s.urls === EXTRAPOLATED_JOBS) ??
        seenSets.find((s) => s.kind === 'exact');
    const seenSetBytes = exact ? Math.round(exact.bytesPerUrl * EXTRAPOLATED_JOBS) : null;
    const totalBytes = jobsBytes + (seenSetBytes ?? 0);
    const projection = {
        jobs: EXTRAPOLATED_JOBS,
        bytesPerJob: perJob,
        queueBytes: jobsBytes,
        seenSetBytes,
        seenSetFrom: exact ? `exact at ${exact.urls}` : null,
        totalBytes,
        budgetBytes: REDIS_BUDGET_BYTES,
        fitsBudget: totalBytes < REDIS_BUDGET_BYTES,
        shareOfBudget: round(totalBytes / REDIS_BUDGET_BYTES, 2),
    };
    process.stderr.write(
        `bench distributed queue-memory ${QUEUED_JOBS}: ${memory.bytesPerJob} bytes/job ` +
            `(used_memory), ${memory.bytesPerJobByKeys} by keys; 10M: ${gb(totalBytes)} GB with the seen-set\n`,
    );
    const caseName = `queue-memory ${QUEUED_JOBS}`;
    report({
        json: { case: `queue-memory-${QUEUED_JOBS}`, ...memory, projection },
        rows: [
            {
                case: caseName,
                figure: 'bytes/waiting request (used_memory delta)',
                value: memory.bytesPerJob,
                note: `filled at ${memory.fillPerSec} adds/s`,
            },
            {
                case: caseName,
                figure: 'bytes/waiting request (MEMORY USAGE)',
                value: memory.bytesPerJobByKeys,
                note:
                    `job hash ${memory.jobHashBytes} B (${memory.jobHashEncoding}; ` +
                    `hash-max-listpack-value ${memory.hashMaxListpackValue}), ` +
                    `prioritized zset ${round((memory.queueKeysBytes.prioritized ?? 0) / QUEUED_JOBS, 1)} B/job`,
            },
            {
                case: caseName,
                figure: `projected at ${EXTRAPOLATED_JOBS / 1e6}M queued, GB`,
                value: gb(totalBytes),
                note:
                    `queue ${gb(jobsBytes)} GB + seen-set ${seenSetBytes === null ? '-' : gb(seenSetBytes)} ` +
                    `GB; ${projection.fitsBudget ? 'fits' : 'does not fit'} a ${gb(REDIS_BUDGET_BYTES)} ` +
                    `GB Redis (${Math.round(projection.shareOfBudget * 100)}%)`,
            },
        ],
    });
}

// --- 5. the backlog in PostgreSQL ----------------------------------------------------------

/** The 1M waiting requests again, now with the default Redis window: the rest spills to PostgreSQL. */
async function spilledQueueCase(redis: Redis, report: Report): Promise<void> {
    const spill = await measureSpilledQueue(redis, POSTGRES_URL, {
        jobs: QUEUED_JOBS,
        maxWaiting: DISTRIBUTED_DEFAULTS.maxWaitingJobs,
    });
    process.stderr.write(
        `bench distributed spilled-queue ${QUEUED_JOBS}: ${spill.inRedis} in Redis (${mb(spill.redisBytes)} ` +
            `MB), ${spill.spilled} spilled at ${spill.postgresBytesPerSpilledJob} B each\n`,
    );
    const caseName = `spilled-queue ${QUEUED_JOBS}`;
    report({
        json: { case: `spilled-queue-${QUEUED_JOBS}`, ...spill },
        rows: [
            {
                case: caseName,
                figure: 'Redis MB for the whole queue',
                value: mb(spill.redisBytes),
                note: `${spill.inRedis} jobs in Redis (window ${spill.maxWaiting}), ${spill.spilled} in PostgreSQL`,
            },
            {
                case: caseName,
                figure: 'PostgreSQL bytes/spilled request',
                value: spill.postgresBytesPerSpilledJob,
                note: `filled at ${spill.fillPerSec} adds/s`,
            },
            {
                case: caseName,
                figure: 'fed back to BullMQ, requests/s',
                value: spill.feedPerSec,
                note: 'windows of 10,000',
            },
        ],
    });
}

function mb(bytes: number): number {
    return round(bytes / 1024 ** 2, 1);
}

function gb(bytes: number): number {
    return round(bytes / 1024 ** 3, 2);
}
