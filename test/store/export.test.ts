import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { Dataset } from '@crawlee/core';
import { openStorage } from '../../src/store/datasets.js';
import { csvCell, exportDataset } from '../../src/store/export.js';

async function datasetWith(t: TestContext, items: Record<string, unknown>[]) {
    const dir = await mkdtemp(join(tmpdir(), 'dragnet-export-'));
    const { config, storage } = openStorage(dir);
    const dataset = await Dataset.open('items', { config });
    await dataset.pushData(items);
    t.after(async () => {
        await storage.close();
        await rm(dir, { recursive: true, force: true });
    });
    return { dataset, dir };
}

describe('exportDataset', () => {
    it('writes one JSON line per item, in order, across pages', async (t) => {
        const items = Array.from({ length: 25 }, (_, n) => ({ n, title: `item ${n}` }));
        const { dataset, dir } = await datasetWith(t, items);
        const out = join(dir, 'items.jsonl');
        assert.equal(await exportDataset({ dataset, format: 'jsonl', out, pageSize: 7 }), 25);
        const lines = (await readFile(out, 'utf8')).trimEnd().split('\n');
        assert.deepEqual(
            lines.map((line) => JSON.parse(line)),
            items,
        );
    });

    it(`writes CSV with the union of all columns, in first-seen \
order, and empty cells for missing fields`, async (t) => {
        const { dataset, dir } = await datasetWith(t, [{ a: 1, b: 'x' }, { b: 'y', c: true }, { a: 3 }]);
        const out = join(dir, 'items.csv');
        assert.equal(await exportDataset({ dataset, format: 'csv', out, pageSize: 2 }), 3);
        assert.equal(await readFile(out, 'utf8'), 'a,b,c\r\n1,x,\r\ny,true\r\n3,,\r\n'.replace('y,true', ',y,true'));
    });

    it(`rejects when its file cannot be opened, in either \
format, rather than end as if all were written`, async (t) => {
        const { dataset, dir } = await datasetWith(
            t,
            Array.from({ length: 3000 }, (_, n) => ({ n })),
        );
        for (const format of ['jsonl', 'csv'] as const) {
            await assert.rejects(
                exportDataset({ dataset, format, out: join(dir, 'no-such-dir', `items.${format}`) }),
                { code: 'ENOENT' },
                format,
            );
        }
    });
});

describe('csvCell', () => {
    it('quotes what needs quoting and doubles quotes (RFC 4180)', () => {
        assert.equal(csvCell('plain'), 'plain');
        assert.equal(csvCell('a,b'), '"a,b"');
        assert.equal(csvCell('say "hi"'), '"say ""hi"""');
        assert.equal(csvCell('two\nlines'), '"two\nlines"');
        assert.equal(csvCell(' padded'), '" padded"');
    });

    it('writes lists and objects as JSON and missing values as empty', () => {
        assert.equal(csvCell(['a', 'b']), '"[""a"",""b""]"');
        assert.equal(csvCell({ k: 1 }), '"{""k"":1}"');
        assert.equal(csvCell(undefined), '');
        assert.equal(csvCell(null), '');
        assert.equal(csvCell(0), '0');
    });
});
