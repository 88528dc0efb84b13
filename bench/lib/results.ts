/**
 * A suite's latest result as data: `bench/results/<suite>.json`, written by `npm run bench` when the
 * suite is done, read by the page generator (resultsPage.ts) that fills docs/benchmarks.md. One file
 * per suite, replaced by each run; the past is in git.
 *
 * A run that is an A/B of dragnet against itself (`--against REV`, `--dragnet-only`) is not the suite's
 * result: it goes to `bench/results/ab/<suite>.json`, which git ignores, so it never replaces the file
 * the page is generated from.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import type { BenchOptions, CaseReport, TableRow } from './suite.js';

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
    options: { runs: number; products: number[] | null; large: boolean; pageWeight: string } | null;
    startedAt: string;
    finishedAt: string;
    machine: Machine;
    node: string;
    commit: Commit;
    /** Crawlers a suite could not run here (Scrapy not installed), with why: their rows are missing from the table. */
    leftOut: Array<{ crawler: string; reason: string }>;
    /** Every case as the suite reported it: `json` (each run's figures, the medians, the ratios) and `rows` (its part of the table). */
    cases: CaseReport[];
}

/** The command line that reproduces a suite's run: `npm run -s bench -- <suite>` and the flags that matter. */
export function commandFor(suite: string, options?: BenchOptions): string {
    const flags = options
        ? [
              ...(options.products ? [`--products ${options.products.join(',')}`] : []),
              ...(options.large ? ['--large'] : []),
              ...(options.pageWeight !== 'real' ? [`--page-weight ${options.pageWeight}`] : []),
              `--runs ${options.runs}`,
          ]
        : [];
    return ['npm run -s bench --', suite, ...flags].join(' ');
}

/** An A/B run (`--against`, `--dragnet-only`) compares dragnet with itself, not with the baselines. */
export function isAbRun(options: Pick<BenchOptions, 'against' | 'dragnetOnly'>): boolean {
    return options.against !== undefined || options.dragnetOnly;
}

/** Where a suite's result goes: its own file, or the ignored ab/ folder for an A/B run. */
export function resultPath(root: string, suite: string, options?: Pick<BenchOptions, 'against' | 'dragnetOnly'>): string {
    return join(root, RESULTS_DIR, ...(options && isAbRun(options) ? ['ab'] : []), `${suite}.json`);
}

export function machineNow(): { cores: number; cpuModel: string; totalMemoryMb: number; loadAverage: [number, number, number] } {
    const [one, five, fifteen] = loadavg().map((load) => Math.round(load * 100) / 100) as [number, number, number];
    return { cores: cpus().length, cpuModel: cpus()[0]?.model.trim() ?? 'unknown', totalMemoryMb: Math.round(totalmem() / 2 ** 20), loadAverage: [one, five, fifteen] };
}

export function commitOf(root: string): Commit {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    try {
        const hash = git('rev-parse', 'HEAD').trim();
        const dirty = git('status', '--porcelain', '--', '.', `:(exclude)${RESULTS_DIR}`).trim() !== '';
        return { hash, dirty };
    } catch {
        return { hash: null, dirty: false };
    }
}

/**
 * A suite's result in the making: the machine, commit and command are taken when it starts, the
 * cases added as the suite reports them, the rest when it ends.
 */
export function startResult(root: string, suite: string, options?: BenchOptions): { cases: CaseReport[]; finish(leftOut: SuiteResult['leftOut']): SuiteResult } {
    const startedAt = new Date().toISOString();
    const { loadAverage: loadAverageAtStart, ...machine } = machineNow();
    const commit = commitOf(root);
    const cases: CaseReport[] = [];
    return {
        cases,
        finish: (leftOut) => ({
            suite,
            command: commandFor(suite, options),
            options: options ? { runs: options.runs, products: options.products ?? null, large: options.large, pageWeight: options.pageWeight } : null,
            startedAt,
            finishedAt: new Date().toISOString(),
            machine: { ...machine, loadAverageAtStart, loadAverageAtEnd: machineNow().loadAverage },
            node: process.version,
            commit,
            leftOut,
            cases,
        }),
    };
}

/** A standalone script's output as cases: each JSON line one, its figures one row of the script's table. */
export function scriptCases(output: string): CaseReport[] {
    return output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => {
            const json = JSON.parse(line) as Record<string, unknown>;
            return { json, rows: [flatRow(json)] };
        });
}

/** A line's scalar figures, nested objects' as `outer.inner`; arrays and a top-level `bench` (the script's name) left out. */
function flatRow(json: Record<string, unknown>, prefix = ''): TableRow {
    const row: TableRow = {};
    for (const [key, value] of Object.entries(json)) {
        if (prefix === '' && key === 'bench') continue;
        if (typeof value === 'number' || typeof value === 'string' || value === null) row[prefix + key] = value;
        else if (typeof value === 'boolean') row[prefix + key] = String(value);
        else if (typeof value === 'object' && !Array.isArray(value)) Object.assign(row, flatRow(value as Record<string, unknown>, `${prefix}${key}.`));
    }
    return row;
}

/** An array of numbers, strings, booleans or nulls as JSON.stringify lays it out with indents: one value a line. */
const PLAIN_ARRAY = /\[\n(?:\s*(?:-?[\d.e+-]+|null|true|false|"(?:[^"\\\n]|\\.)*"),?\n)+\s*\]/g;

/**
 * JSON with 4-space indents, as the project's other JSON files, but an array of plain values kept on
 * one line: the per-run series (in-flight samples) would otherwise take a line a number.
 */
export function stringifyResult(result: SuiteResult): string {
    const text = JSON.stringify(result, null, 4).replace(PLAIN_ARRAY, (array) => `[${(JSON.parse(array) as unknown[]).map((value) => JSON.stringify(value)).join(', ')}]`);
    return `${text}\n`;
}

/** Writes the result to a temporary file beside its place, then renames it there, so a reader never sees half of it. */
export async function writeResult(path: string, result: SuiteResult): Promise<void> {
    await mkdir(join(path, '..'), { recursive: true });
    const temporary = `${path}.${process.pid}.tmp`;
    await writeFile(temporary, stringifyResult(result));
    await rename(temporary, path);
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
