/**
 * docs/benchmarks.md against the committed results: each generated block is what the generator
 * writes today from bench/results/*.json, so a results file or a table edited by hand, or a result
 * committed without `npm run docs`, fails here; and every suite and script in bench/ has a block.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { benchmarksPage, benchNames } from '../../bench/lib/benchmarksPage.js';
import { readResults } from '../../bench/lib/results.js';
import { BLOCK_END, pageSuites, updateBenchmarksPage } from '../../bench/lib/resultsPage.js';
import { ROOT } from '../helpers/cli.js';

describe('docs/benchmarks.md', () => {
    it('shows in each generated block what bench/results/ gives today', async () => {
        const { current, expected } = await benchmarksPage(ROOT);
        assert.equal(current, expected, 'docs/benchmarks.md differs from bench/results/: run npm run docs (and never edit a results file or a generated table by hand)');
    });

    it('has one block for each suite and script in bench/, and none for anything else', async () => {
        const { current } = await benchmarksPage(ROOT);
        assert.deepEqual([...pageSuites(current)].sort(), await benchNames(ROOT));
    });

    it('has a result file only for a suite or script in bench/', async () => {
        const names = await benchNames(ROOT);
        for (const suite of Object.keys(await readResults(ROOT))) assert.ok(names.includes(suite), `bench/results/${suite}.json: no bench/${suite}.ts`);
    });

    it('would notice a generated block edited by hand', async () => {
        const { current } = await benchmarksPage(ROOT);
        const edited = current.replace(BLOCK_END, `an edit by hand\n${BLOCK_END}`);
        assert.notEqual(edited, current);
        assert.notEqual(updateBenchmarksPage(edited, await readResults(ROOT)), edited);
    });
});
