/**
 * The comparison loop shared by the crawl suites: each crawler in turn (dragnet, plain, dragnet,
 * plain, …) so that drift in the machine's load hits all of them alike, `runs` times; each run
 * against a fresh shop of the same seed, into a fresh storage dir, in a fresh child process.
 */
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ShopOptions } from '../../src/demo/shop.js';
import type { CrawlerCase } from '../crawlers/protocol.js';
import { startCountingShop } from './countingShop.js';
import { median as medianOf, round } from './stats.js';
import { runCrawler, type Crawler, type RunOutcome, type Sidecar } from './runCrawler.js';

export interface ComparisonOptions {
    /** Names the comparison in progress lines. */
    title: string;
    crawlers: Crawler[];
    runs: number;
    shop: ShopOptions;
    crawl: Omit<CrawlerCase, 'shopUrl' | 'storageDir'>;
    /**
     * Runs after each round (every crawler run once more), so a
     * measurement taken there drifts with the machine as the runs do.
     */
    afterRound?: () => Promise<void>;
    /**
     * Each round starts one crawler further on in the list, so that none always runs first, or always
     * after the same one.
     */
    rotate?: boolean;
}

export interface RunRecord {
    run: number;
    outcome: RunOutcome;
    /** In-flight requests at the shop, one per sample interval, from the crawler's start to its end. */
    shopInflightSamples: number[];
    /** CPU seconds the shop (this process) spent during the run. */
    shopCpuSec: number;
    /** The crawler's sidecar's report on the run (its own CPU included), when it has one. */
    sidecar?: { cpuSec: number } & Record<string, number>;
    /**
     * Share of the machine's cores that neither the crawler nor the shop used during the crawl:
     * other people's work on a shared machine. High values make a run's figures suspect.
     */
    othersCpuShare: number | null;
    /** Bytes of the raw-page archive the crawler left in its storage dir (`archive/`): 0 for crawlers that keep none. */
    archiveBytes?: number;
}

/** Every run of every crawler, by crawler name, in run order. */
export async function compareCrawlers(options: ComparisonOptions): Promise<Map<string, RunRecord[]>> {
    const records = new Map<string, RunRecord[]>(options.crawlers.map((crawler) => [crawler.name, []]));
    for (let run = 1; run <= options.runs; run++) {
        const first = options.rotate ? (run - 1) % options.crawlers.length : 0;
        for (const crawler of [...options.crawlers.slice(first), ...options.crawlers.slice(0, first)]) {
            const record = await runOnce(crawler, run, options);
            records.get(crawler.name)!.push(record);
            process.stderr.write(
                `bench ${options.title}: ${crawler.name} run ${run}/${options.runs}: ${describe(record)}\n`,
            );
        }
        await options.afterRound?.();
    }
    return records;
}

async function runOnce(crawler: Crawler, run: number, options: ComparisonOptions): Promise<RunRecord> {
    const storageDir = await mkdtemp(join(tmpdir(), `dragnet-bench-${crawler.name}-`));
    const shop = await startCountingShop({ ...options.shop, ...crawler.shopOverrides }, options.crawl.sampleIntervalMs);
    let sidecar: Sidecar | undefined;
    try {
        sidecar = await crawler.sidecar?.();
        const args = [...(options.crawl.args ?? []), ...(sidecar?.args ?? [])];
        const shopCpuBefore = process.cpuUsage();
        const outcome = await runCrawler(crawler, {
            ...options.crawl,
            ...(args.length > 0 ? { args } : {}),
            shopUrl: shop.shop.url,
            storageDir,
        });
        const shopCpu = process.cpuUsage(shopCpuBefore);
        const shopCpuSec = round((shopCpu.user + shopCpu.system) / 1e6, 2);
        const sidecarReport = await sidecar?.report();
        if (!outcome.ok)
            return { run, outcome, shopInflightSamples: [], shopCpuSec, sidecar: sidecarReport, othersCpuShare: null };
        const { result } = outcome;
        const shopInflightSamples = shop
            .samples()
            .filter((s) => s.atMs >= result.startedAtMs && s.atMs <= result.endedAtMs)
            .map((s) => s.inflight);
        // The shop and the sidecar are idle outside the crawl, so all of their CPU time falls in the crawl's window.
        const ours = (result.cpuSec + shopCpuSec + (sidecarReport?.cpuSec ?? 0)) / (cpus().length * result.durationSec);
        return {
            run,
            outcome,
            shopInflightSamples,
            shopCpuSec,
            sidecar: sidecarReport,
            othersCpuShare: round(Math.max(0, result.machineCpuBusy - ours), 3),
            archiveBytes: await directoryBytes(join(storageDir, 'archive')),
        };
    } finally {
        await sidecar?.close();
        await shop.close();
        await rm(storageDir, { recursive: true, force: true });
    }
}

/** The bytes of the files under `dir`; 0 when there is no such directory. */
async function directoryBytes(dir: string): Promise<number> {
    const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
    let bytes = 0;
    for (const entry of entries) if (entry.isFile()) bytes += (await stat(join(entry.parentPath, entry.name))).size;
    return bytes;
}

function describe({ outcome, othersCpuShare }: RunRecord): string {
    if (!outcome.ok) return `FAILED (${outcome.error})`;
    const r = outcome.result;
    const cut = r.finished ? '' : ' (cut at the time limit)';
    return (
        `${r.pages} pages in ${r.durationSec}s, ${r.pagesPerSec} ` +
        `pages/s${r.steadyPagesPerSec === null ? '' : `, steady ${r.steadyPagesPerSec}/s`}, ` +
        `${r.peakRssMb} MB${r.tree ? ` (tree; spawned ${r.tree.spawnedCpuSec} CPU s)` : ''}, ` +
        `machine ${Math.round(r.machineCpuBusy * 100)}% busy (others ${Math.round((othersCpuShare ?? 0) * 100)}%), ` +
        `crawling thread ${Math.round(r.threadBusy * 100)}%${cut}`
    );
}

export interface RunsSummary<K extends string> {
    /** Median of each metric over the runs that completed without error. */
    median: Record<K, number | null>;
    /** Each run's metrics, or its error. */
    runs: Array<
        | ({ run: number } & Record<K, number | null> & Record<string, unknown>)
        | { run: number; error: string; peakRssMb?: number }
    >;
    failedRuns: number;
}

/**
 * Medians over the successful runs of one crawler. `metrics` picks the numbers to take medians
 * of; `details` adds per-run fields that are reported but not aggregated (series, flags). A suite
 * whose records carry more than a RunRecord (the seed suite's) gets its own type back in both.
 */
export function summarizeRuns<K extends string, R extends RunRecord = RunRecord>(
    records: readonly R[],
    metrics: (record: R & { outcome: { ok: true } }) => Record<K, number | null>,
    details: (record: R & { outcome: { ok: true } }) => Record<string, unknown> = () => ({}),
): RunsSummary<K> {
    const runs: RunsSummary<K>['runs'] = [];
    const values = new Map<K, number[]>();
    for (const record of records) {
        if (!record.outcome.ok) {
            runs.push({ run: record.run, error: record.outcome.error, peakRssMb: record.outcome.peakRssMb });
            continue;
        }
        const ok = record as R & { outcome: { ok: true } };
        const picked = metrics(ok);
        for (const [name, value] of Object.entries(picked) as [K, number | null][]) {
            if (!values.has(name)) values.set(name, []);
            if (value !== null) values.get(name)!.push(value);
        }
        runs.push({ run: record.run, ...picked, ...details(ok) });
    }
    const median = Object.fromEntries([...values].map(([name, list]) => [name, medianOf(list)])) as Record<
        K,
        number | null
    >;
    return { median, runs, failedRuns: records.filter((r) => !r.outcome.ok).length };
}
