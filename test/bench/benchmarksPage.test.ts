/**
 * docs/benchmarks.md covers bench/: a generated block for each suite and script in it (and for a
 * suite's variant, `<suite>@<variant>`, as its result is kept), and a result file only for one of them. (That each block is what its result gives today is checked with the
 * other generated files, test/docs/generated.test.ts.)
 */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pageSuites } from '../../src/authoring/benchmarkPage.js';
import { readResults } from '../../src/authoring/benchmarkResults.js';
import { ROOT } from '../helpers/cli.js';

/** The suites and scripts in bench/: each `bench/<name>.ts` but the runner. */
async function benchNames(): Promise<string[]> {
    const files = await readdir(join(ROOT, 'bench'));
    return files
        .filter((file) => file.endsWith('.ts') && file !== 'run.ts')
        .map((file) => file.slice(0, -'.ts'.length))
        .sort();
}

/** `seed@0.1` → `seed`: the suite a variant's result is of. */
const suiteOf = (name: string) => name.split('@')[0]!;

describe('docs/benchmarks.md', () => {
    it('has one block for each suite and script in bench/, and none for anything else', async () => {
        const page = await readFile(join(ROOT, 'docs/benchmarks.md'), 'utf8');
        assert.deepEqual([...new Set(pageSuites(page).map(suiteOf))].sort(), await benchNames());
        const variants = pageSuites(page).filter((name) => name.includes('@'));
        const results = Object.keys(await readResults(ROOT)).filter((name) => name.includes('@'));
        assert.deepEqual(variants.sort(), results.sort(), "a block for each variant's result, and only for one");
    });

    it('has a result file only for a suite or script in bench/', async () => {
        const names = await benchNames();
        for (const suite of Object.keys(await readResults(ROOT))) {
            assert.ok(names.includes(suiteOf(suite)), `bench/results/${suite}.json: no bench/${suiteOf(suite)}.ts`);
        }
    });
});
