/**
 * A benchmark suite's latest result as data, `bench/results/<suite>.json`: its shape, the command that
 * reproduces it, and the files read back. `npm run bench` writes them (bench/lib/results.ts); the
 * benchmarks page and the README's headline figures are generated from them (benchmarkPage.ts,
 * benchmarkHeadline.ts).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Where the results of the suites live, relative to the project's root. */
export const RESULTS_DIR = 'bench/results';

export interface Machine {
    cores: number;
    cpuModel: string;
    totalMemoryMb: number;
    /** 1-, 5- and 15-minute load averages when the suite started: above the core count, someone else was busy too. */
    loadAverageAtStart: [number, number, number];
    loadAverageAtEnd: [number, number, number];
}

export interface Commit {
    /** The commit the tree was at, as `git rev-parse HEAD` gives it; null outside a git checkout. */
    hash: string | null;
    /** Uncommitted changes outside bench/results/ (which the runs themselves write) when the suite ran. */
    dirty: boolean;
}

export interface SuiteResult {
    suite: string;
    /** The command that reproduces this result: the suite named alone, with the flags that shaped it. */
    command: string;
    /** The flags as the suite saw them. A standalone script runs with its own defaults: none. */
    options: {
        runs: number;
        products: number[] | null;
        large: boolean;
        pageWeight: string;
        scale?: number;
        maxConcurrency?: number;
    } | null;
    startedAt: string;
    finishedAt: string;
    machine: Machine;
    node: string;
    commit: Commit;
    /** Crawlers a suite could not run here (Scrapy not installed), with why: their rows are missing from the table. */
    leftOut: Array<{ crawler: string; reason: string }>;
    /**
     * Every case as the suite reported it: `json` (each run's figures, the medians, the ratios) and
     * `rows` (its part of the table).
     */
    cases: ResultCase[];
}

/** The command line that reproduces a suite's run: `npm run -s bench -- <suite>` and the flags that matter. */
export function commandFor(suite: string, options?: ResultOptions): string {
    const flags = options
        ? [
              ...(options.products ? [`--products ${options.products.join(',')}`] : []),
              ...(options.large ? ['--large'] : []),
              ...(options.pageWeight !== 'real' ? [`--page-weight ${options.pageWeight}`] : []),
              ...(options.scale !== undefined && options.scale !== 1 ? [`--scale ${options.scale}`] : []),
              ...(options.maxConcurrency !== undefined ? [`--max-concurrency ${options.maxConcurrency}`] : []),
              ...(options.baselines ? ['--baselines'] : []),
              `--runs ${options.runs}`,
          ]
        : [];
    return ['npm run -s bench --', suite, ...flags].join(' ');
}

export type TableRow = Record<string, string | number | null>;

/** One case of a suite, as it reported it. */
export interface ResultCase {
    /** Printed as one JSON line on stdout, with `suite` added. */
    json: Record<string, unknown>;
    /** Rows of the suite's table, printed on stderr at the end; the first row's keys are the columns. */
    rows: TableRow[];
}

/** The flags of a suite's run that shape its result. */
export interface ResultOptions {
    runs: number;
    products?: number[];
    large: boolean;
    pageWeight: string;
    /** `--scale`: the seed suite's share of its full size. Default 1. */
    scale?: number;
    /** `--max-concurrency`: the seed suite's ceiling for dragnet, when given. */
    maxConcurrency?: number;
    /** `--baselines`: the seed suite runs Scrapy and plain Crawlee at any scale. */
    baselines?: boolean;
}

export async function readResult(path: string): Promise<SuiteResult> {
    return JSON.parse(await readFile(path, 'utf8')) as SuiteResult;
}

/** Every suite's result in `bench/results/`, by suite name (the ab/ folder left out). */
export async function readResults(root: string): Promise<Record<string, SuiteResult>> {
    const dir = join(root, RESULTS_DIR);
    const files = (await readdir(dir).catch(() => [] as string[])).filter((file) => file.endsWith('.json')).sort();
    const results: Record<string, SuiteResult> = {};
    for (const file of files) results[file.slice(0, -'.json'.length)] = await readResult(join(dir, file));
    return results;
}
