/**
 * Every generated file and block is what its generator writes today (src/authoring/generatedDocs.ts),
 * and docs/api/ is what TypeDoc makes of the exports' TSDoc: `npm run docs` rewrites them.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { API_REFERENCE_DIR, writeApiReference } from '../../src/authoring/apiReference.js';
import { GENERATED_FILES } from '../../src/authoring/generatedDocs.js';
import { ROOT } from '../helpers/cli.js';

/** Every file under `dir`, by its path relative to it, with its text. */
async function filesUnder(dir: string): Promise<Map<string, string>> {
    const entries = await readdir(dir, { recursive: true, withFileTypes: true });
    const files = entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
    return new Map(
        await Promise.all(files.map(async (file) => [relative(dir, file), await readFile(file, 'utf8')] as const)),
    );
}

describe('the generated docs', () => {
    for (const file of GENERATED_FILES) {
        it(`${file.path} is what npm run docs writes`, async () => {
            const current = await readFile(join(ROOT, file.path), 'utf8');
            assert.equal(current, await file.content(current, ROOT), `${file.path} is stale: run npm run docs`);
        });
    }

    it(`${API_REFERENCE_DIR}/ is what TypeDoc makes of the exports' TSDoc`, async (t) => {
        const out = await mkdtemp(join(tmpdir(), 'dragnet-api-'));
        t.after(() => rm(out, { recursive: true, force: true }));
        await writeApiReference(ROOT, out);
        const [made, kept] = await Promise.all([filesUnder(out), filesUnder(join(ROOT, API_REFERENCE_DIR))]);
        assert.deepEqual(
            [...kept.keys()].sort(),
            [...made.keys()].sort(),
            `${API_REFERENCE_DIR}/ has other pages than TypeDoc makes: run npm run docs`,
        );
        for (const [page, text] of made)
            assert.equal(kept.get(page), text, `${API_REFERENCE_DIR}/${page} is stale: run npm run docs`);
    });
});
