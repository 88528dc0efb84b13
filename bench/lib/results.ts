/**
 * A suite's latest result as data: `bench/results/<suite>.json`, written by `npm run bench` when the
 * suite is done, read back by the generator of docs/benchmarks.md
 * (src/authoring/benchmarkResults.ts, benchmarkPage.ts). One file per suite, replaced by each run;
 * the past is in git.
 *
 * A run that is an A/B of dragnet against itself (`--against REV`, `--dragnet-only`) is not the suite's
 * result: it goes to `bench/results/ab/<suite>.json`, which git ignores, so it never replaces the file
 * the page is generated from.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { type Commit, commandFor, RESULTS_DIR, type SuiteResult } from '../../src/authoring/benchmarkResults.js';
import type { BenchOptions, CaseReport, TableRow } from './suite.js';

/** An A/B run (`--against`, `--dragnet-only`) compares dragnet with itself, not with the baselines. */
export function isAbRun(options: Pick<BenchOptions, 'against' | 'dragnetOnly'>): boolean {
    return options.against !== undefined || options.dragnetOnly;
}

/** Where a suite's result goes: its own file, or the ignored ab/ folder for an A/B run. */
export function resultPath(
    root: string,
    suite: string,
    options?: Pick<BenchOptions, 'against' | 'dragnetOnly'>,
): string {
    return join(root, RESULTS_DIR, ...(options && isAbRun(options) ? ['ab'] : []), `${suite}.json`);
}

export function machineNow(): {
    cores: number;
    cpuModel: string;
    totalMemoryMb: number;
    loadAverage: [number, number, number];
} {
    const [one, five, fifteen] = loadavg().map((load) => Math.round(load * 100) / 100) as [number, number, number];
    return {
        cores: cpus().length,
        cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
        totalMemoryMb: Math.round(totalmem() / 2 ** 20),
        loadAverage: [one, five, fifteen],
    };
}

export function commitOf(root: string): Commit {
    const git = (...args: string[]) =>
        execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
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
export function startResult(
    root: string,
    suite: string,
    options?: BenchOptions,
): { cases: CaseReport[]; finish(leftOut: SuiteResult['leftOut']): SuiteResult } {
    const startedAt = new Date().toISOString();
    const { loadAverage: loadAverageAtStart, ...machine } = machineNow();
    const commit = commitOf(root);
    const cases: CaseReport[] = [];
    return {
        cases,
        finish: (leftOut) => ({
            suite,
            command: commandFor(suite, options),
            options: options
                ? {
                      runs: options.runs,
                      products: options.products ?? null,
                      large: options.large,
                      pageWeight: options.pageWeight,
                      // The seed suite's flags, recorded only when given, as the command shows them.
                      ...(options.scale !== 1 ? { scale: options.scale } : {}),
                      ...(options.maxConcurrency !== undefined ? { maxConcurrency: options.maxConcurrency } : {}),
                  }
                : null,
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

/**
 * A line's scalar figures, nested objects' as `outer.inner`;
 * arrays and a top-level `bench` (the script's name) left out.
 */
function flatRow(json: Record<string, unknown>, prefix = ''): TableRow {
    const row: TableRow = {};
    for (const [key, value] of Object.entries(json)) {
        if (prefix === '' && key === 'bench') continue;
        if (typeof value === 'number' || typeof value === 'string' || value === null) row[prefix + key] = value;
        else if (typeof value === 'boolean') row[prefix + key] = String(value);
        else if (typeof value === 'object' && !Array.isArray(value))
            Object.assign(row, flatRow(value as Record<string, unknown>, `${prefix}${key}.`));
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
    const text = JSON.stringify(result, null, 4).replace(
        PLAIN_ARRAY,
        (array) => `[${(JSON.parse(array) as unknown[]).map((value) => JSON.stringify(value)).join(', ')}]`,
    );
    return `${text}\n`;
}

/** Writes the result to a temporary file beside its place, then renames it there, so a reader never sees half of it. */
export async function writeResult(path: string, result: SuiteResult): Promise<void> {
    await mkdir(join(path, '..'), { recursive: true });
    const temporary = `${path}.${process.pid}.tmp`;
    await writeFile(temporary, stringifyResult(result));
    await rename(temporary, path);
}
