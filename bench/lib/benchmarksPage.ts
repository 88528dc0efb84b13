/**
 * docs/benchmarks.md on disk: what `npm run docs` calls to regenerate its tables from
 * bench/results/*.json (resultsPage.ts does the rendering), and what the docs check compares.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { headlineFigures, type HeadlineFigures } from './headline.js';
import { readResults } from './results.js';
import { updateBenchmarksPage } from './resultsPage.js';

export const BENCHMARKS_PAGE = 'docs/benchmarks.md';

/** The page as it is and as the committed results make it today. */
export async function benchmarksPage(root: string): Promise<{ path: string; current: string; expected: string }> {
    const path = join(root, BENCHMARKS_PAGE);
    const current = await readFile(path, 'utf8');
    return { path, current, expected: updateBenchmarksPage(current, await readResults(root)) };
}

/** Rewrites the page's generated blocks from bench/results/; true when that changed it. */
export async function writeBenchmarksPage(root: string): Promise<boolean> {
    const { path, current, expected } = await benchmarksPage(root);
    if (expected === current) return false;
    await writeFile(path, expected);
    return true;
}

/** The README's headline figures, from the same files. */
export async function readHeadlineFigures(root: string): Promise<HeadlineFigures> {
    return headlineFigures(await readResults(root));
}

/** The suites and scripts in bench/ (each `bench/<name>.ts` but the runner), each of which the page should have a block for. */
export async function benchNames(root: string): Promise<string[]> {
    const files = await readdir(join(root, 'bench'));
    return files.filter((file) => file.endsWith('.ts') && file !== 'run.ts').map((file) => file.slice(0, -'.ts'.length)).sort();
}
