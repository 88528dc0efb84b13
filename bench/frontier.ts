/**
 * Frontier benchmark: Crawlee's request queue on the SQLite storage client, at several queue sizes.
 * For each size N, in a fresh process and storage dir: fill the queue with N requests (batches of
 * 1,000), then at that fill level time 10,000 more adds, 10,000 fetchNextRequest() and 10,000
 * markRequestHandled() (three rounds, median reported), then drain everything. One JSON line per size:
 *
 *     {"bench":"frontier","size":N,"queue":"bounded","addPerSec":…,"fetchPerSec":…,"handlePerSec":…,
 *      "perCpuSec":{"add":…,"fetch":…,"handle":…},"drainSec":…,"peakRssMb":…,"load1":…}
 *
 *     npx tsx bench/frontier.ts [--sizes 10000,100000,1000000] [--queue bounded|plain]
 *
 * Sizes default to 10000,100000. `--queue plain` uses Crawlee's own `RequestQueue` instead of
 * `BoundedRequestQueue` (the default), to see what its unbounded caches cost. Each size runs in its
 * own process so its peak RSS is its own.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Configuration, log, type Request, RequestQueue } from 'crawlee';
import { BoundedRequestQueue } from '../src/store/sqlite/boundedRequestQueue.js';
import { SqliteStorageClient } from '../src/store/sqlite/storageClient.js';

const DEFAULT_SIZES = [10_000, 100_000];
/** Requests per addRequests() call, while filling and while measuring adds. */
const BATCH = 1000;
/** Operations timed at each fill level. */
const OPS = 10_000;

type QueueKind = 'bounded' | 'plain';

/** Rounds of each timed operation at a fill level; the median round is reported. */
const ROUNDS = 3;

export interface FrontierResult {
    bench: 'frontier';
    size: number;
    queue: QueueKind;
    /** Operations per wall-clock second: what a crawl sees, disturbed by whatever else the machine runs. */
    addPerSec: number;
    fetchPerSec: number;
    handlePerSec: number;
    /** Operations per second of this process's own CPU time: the intrinsic cost, steady on a busy machine. */
    perCpuSec: { add: number; fetch: number; handle: number };
    drainSec: number;
    peakRssMb: number;
    /** 1-minute load average at the end: above the core count, wall-clock rates are understated. */
    load1: number;
}

interface Timing {
    wallSec: number;
    cpuSec: number;
}

async function measure(size: number, kind: QueueKind): Promise<FrontierResult> {
    log.setLevel(log.LEVELS.WARNING);
    const dir = await mkdtemp(join(tmpdir(), 'dragnet-bench-frontier-'));
    const storage = new SqliteStorageClient({ storageDir: dir });
    try {
        const Queue = kind === 'plain' ? RequestQueue : BoundedRequestQueue;
        const queue = await Queue.open('frontier', { config: new Configuration({ storageClient: storage }) });
        let next = 0;
        const addBatch = () =>
            queue.addRequests(Array.from({ length: BATCH }, () => ({ url: `http://127.0.0.1:9/item/${next++}` })));

        while (next < size) await addBatch();

        // Each round adds OPS and handles OPS, so the fill level stays at `size`.
        const rounds: Array<{ add: Timing; fetch: Timing; handle: Timing }> = [];
        for (let round = 0; round < ROUNDS; round++) {
            const add = await timed(async () => {
                for (let i = 0; i < OPS / BATCH; i++) await addBatch();
            });
            const fetched: Request[] = [];
            const fetch = await timed(async () => {
                for (let i = 0; i < OPS; i++) fetched.push((await queue.fetchNextRequest())!);
            });
            const handle = await timed(async () => {
                for (const request of fetched) await queue.markRequestHandled(request);
            });
            rounds.push({ add, fetch, handle });
        }
        const drain = await timed(async () => {
            for (let request = await queue.fetchNextRequest(); request; request = await queue.fetchNextRequest()) {
                await queue.markRequestHandled(request);
            }
        });
        const info = await queue.getInfo();
        if (info?.pendingRequestCount !== 0 || info.handledRequestCount !== size + ROUNDS * OPS) {
            throw new Error(`queue not drained: ${JSON.stringify(info)}`);
        }
        const rate = (op: 'add' | 'fetch' | 'handle', clock: keyof Timing) =>
            Math.round(median(rounds.map((r) => OPS / r[op][clock])));
        return {
            bench: 'frontier',
            size,
            queue: kind,
            addPerSec: rate('add', 'wallSec'),
            fetchPerSec: rate('fetch', 'wallSec'),
            handlePerSec: rate('handle', 'wallSec'),
            perCpuSec: { add: rate('add', 'cpuSec'), fetch: rate('fetch', 'cpuSec'), handle: rate('handle', 'cpuSec') },
            drainSec: round(drain.wallSec, 2),
            peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
            load1: round(loadavg()[0]!, 1),
        };
    } finally {
        await storage.close();
        await rm(dir, { recursive: true, force: true });
    }
}

async function timed(work: () => Promise<void>): Promise<Timing> {
    const start = process.hrtime.bigint();
    const cpu = process.cpuUsage();
    await work();
    const used = process.cpuUsage(cpu);
    return { wallSec: Number(process.hrtime.bigint() - start) / 1e9, cpuSec: (used.user + used.system) / 1e6 };
}

function median(values: number[]): number {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)]!;
}

function round(value: number, digits: number): number {
    return Number(value.toFixed(digits));
}

/** Runs one size in a child process (same Node flags, so tsx too) and passes its JSON line through. */
function inChild(size: number, kind: QueueKind): Promise<void> {
    const script = fileURLToPath(import.meta.url);
    const args = [...process.execArgv, script, '--one', String(size), '--queue', kind];
    const child = spawn(process.execPath, args, { stdio: 'inherit' });
    return new Promise((resolve, reject) =>
        child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`size ${size}: exit code ${code}`)))),
    );
}

function flag(name: string): string | undefined {
    const at = process.argv.indexOf(name);
    return at === -1 ? undefined : process.argv[at + 1];
}

const kind = (flag('--queue') ?? 'bounded') as QueueKind;
if (kind !== 'bounded' && kind !== 'plain') throw new Error('--queue: bounded or plain');
const one = flag('--one');
if (one) {
    console.log(JSON.stringify(await measure(Number(one), kind)));
} else {
    const sizes = flag('--sizes')?.split(',').map(Number) ?? DEFAULT_SIZES;
    if (sizes.some((size) => !Number.isInteger(size) || size < 0))
        throw new Error('--sizes: comma-separated request counts');
    for (const size of sizes) await inChild(size, kind);
}
