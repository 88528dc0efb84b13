/**
 * docs/benchmarks.md covers bench/: a generated block for each suite and script in it, and a result
 * file only for one of them. (That each block is what its result gives today is checked with the
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

describe('docs/benchmarks.md', () => {
    it('has one block for each suite and script in bench/, and none for anything else', async () => {
        const page = await readFile(join(ROOT, 'docs/benchmarks.md'), 'utf8');
        assert.deepEqual([...pageSuites(page)].sort(), await benchNames());
    });

    it('has a result file only for a suite or script in bench/', async () => {
        const names = await benchNames();
        for (const suite of Object.keys(await readResults(ROOT))) {
            assert.ok(names.includes(suite), `bench/results/${suite}.json: no bench/${suite}.ts`);
        }
    });
});
