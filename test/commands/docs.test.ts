/**
 * `npm run docs` rewrites generated files in the project (test/docs/generated.test.ts checks they are
 * current). Asked for help, or given an argument it does not take, it says so and writes nothing.
 * Child processes, as `npm run docs` runs; only the two runs that never write are made here.
 */
import assert from 'node:assert/strict';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { GENERATED_FILES } from '../../src/authoring/generatedDocs.js';
import { assertOneLineError, ROOT, runScript } from '../helpers/cli.js';

const DOCS = 'src/commands/docs.ts';
const GENERATED = GENERATED_FILES.map((file) => file.path);

const modifiedTimes = () => Promise.all(GENERATED.map(async (file) => (await stat(join(ROOT, file))).mtimeMs));

describe('npm run docs (child process)', () => {
    it('prints its usage for --help, and refuses an unknown flag in one line; neither writes a file', async () => {
        const before = await modifiedTimes();
        const [help, unknown] = await Promise.all([runScript(DOCS, ['--help']), runScript(DOCS, ['--out', 'x'])]);
        assert.equal(help.code, 0, help.stderr);
        assert.match(help.stdout, /^Usage: npm run docs\n/);
        assert.equal(help.stderr, '');
        assertOneLineError(unknown, 2, /--out/);
        assert.deepEqual(await modifiedTimes(), before, 'no generated file was rewritten');
    });
});
