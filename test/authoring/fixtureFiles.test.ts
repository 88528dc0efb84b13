/**
 * Fixture files are written by `try --save-fixture` and edited by hand (docs/contributing.md, "Fixtures"): one
 * that is no longer a fixture says which file, and what in it, instead of failing somewhere after.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fixtureName, readFixtures, saveFixture } from '../../src/authoring/fixtureFiles.js';

const GOOD = { url: 'http://127.0.0.1/a', label: 'product', records: [{ title: 'A' }], links: { product: [] } };

describe('readFixtures', () => {
    it('reads good files, and names the file and the key of one gone wrong', async (t) => {
        const dir = await mkdtemp(join(tmpdir(), 'dragnet-fixtures-'));
        t.after(() => rm(dir, { recursive: true, force: true }));
        await writeFile(join(dir, 'a.expected.json'), JSON.stringify(GOOD));
        const [fixture] = await readFixtures(dir);
        assert.deepEqual(fixture?.expected, GOOD);
        assert.equal(fixture?.pageFile, join(dir, 'a.html'));

        const cases: [string, RegExp][] = [
            ['{"url": "http://127.0.0.1/a", }', /b\.expected\.json: not JSON: /],
            [JSON.stringify({ ...GOOD, records: undefined, recrods: [] }), /b\.expected\.json: (records|the file): /],
            [JSON.stringify({ ...GOOD, renderer: 'chrome' }), /b\.expected\.json: renderer: /],
        ];
        for (const [text, message] of cases) {
            await writeFile(join(dir, 'b.expected.json'), text);
            await assert.rejects(readFixtures(dir), message, text);
        }
    });

    it('names a fixture by its path and query, so two pages of a listing are two fixtures', () => {
        assert.equal(fixtureName('http://127.0.0.1/products/widget-42'), 'products-widget-42');
        assert.equal(fixtureName('http://127.0.0.1/category/kitchen'), 'category-kitchen');
        assert.equal(fixtureName('http://127.0.0.1/category/kitchen?page=2'), 'category-kitchen-page-2');
        assert.equal(fixtureName('http://127.0.0.1/'), 'index');
        assert.equal(fixtureName('http://127.0.0.1/index.html'), 'index');
    });

    it('says when a save replaces a fixture of the same name', async (t) => {
        const dir = await mkdtemp(join(tmpdir(), 'dragnet-fixtures-'));
        t.after(() => rm(dir, { recursive: true, force: true }));
        assert.equal((await saveFixture(dir, 'a', '<html></html>', GOOD)).replaced, false);
        assert.equal((await saveFixture(dir, 'a', '<html></html>', GOOD)).replaced, true);
    });
});
