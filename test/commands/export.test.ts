/**
 * `npm run export` of a distributed crawl's results: with --database-url (or DATABASE_URL) the
 * command reads the site's items, quarantine or dead-letter from PostgreSQL through the same
 * JSON Lines and CSV writer as from a storage dir. The command runs as a child process, as
 * `npm run export` runs it; the database is the real PostgreSQL, a schema per test.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import demoSite from '../../routes/demo-shop.js';
import { PgSink } from '../../src/store/postgres/sink.js';
import type { StoredItem } from '../../src/store/records.js';
import { assertOneLineError, runScript } from '../helpers/cli.js';
import { testDatabase } from '../helpers/pgSchema.js';
import { storeInDir, storeInPostgres, storedShop } from '../helpers/storedShop.js';

const SITE = 'export-shop';
const EXPORT = 'src/commands/export.ts';

/**
 * Two pages' items, and another site's. jsonb keeps an object's keys shortest first (then by
 * bytes), so these keys are written in that order for the CSV's columns to be predictable.
 */
// biome-ignore lint/plugin/noDoubleCast: StoredItem's _url and co. are left out; the sink stores records as they are
const items = [
    { id: 1, name: 'Lamp, "large"', price: 12.5 },
    { id: 2, name: 'Mug', stock: 3 },
] as unknown as StoredItem[];

async function seeded(t: TestContext) {
    const { db, url } = await testDatabase(t);
    const sink = new PgSink(db);
    await sink.commit(SITE, [
        { requestKey: 'http://shop.test/a', items: [items[0]!] },
        { requestKey: 'http://shop.test/b', items: [items[1]!] },
        {
            requestKey: 'http://shop.test/c',
            deadLetter: {
                url: 'http://shop.test/c',
                failureClass: 'permanent',
                reason: 'http-404',
                error: 'Not Found',
                status: 404,
                attempts: 1,
                stage: 'http',
                deadLetteredAt: '2024-01-01T00:00:00.000Z',
            },
        },
    ]);
    await sink.commit('other-shop', [
        // biome-ignore lint/plugin/noDoubleCast: left bare as the items above; it is there only not to be exported
        { requestKey: 'http://other.test/a', items: [{ id: 99 } as unknown as StoredItem] },
    ]);
    return { db, url };
}

const jsonLines = (text: string) =>
    text
        .trimEnd()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('npm run export --database-url (child process)', () => {
    it("writes the site's items from PostgreSQL as JSON lines to standard output, in the order stored", async (t) => {
        const { url } = await seeded(t);
        const run = await runScript(EXPORT, ['--format', 'jsonl', '--database-url', url, '--site', SITE]);
        assert.equal(run.code, 0, run.stderr);
        assert.deepEqual(jsonLines(run.stdout), items);
        assert.equal(run.stderr, `dragnet: exported 2 items of ${SITE}\n`);
    });

    it('writes CSV to a file, with DATABASE_URL instead of the flag', async (t) => {
        const { url } = await seeded(t);
        const dir = await mkdtemp(join(tmpdir(), 'dragnet-export-pg-'));
        t.after(() => rm(dir, { recursive: true, force: true }));
        const out = join(dir, 'items.csv');
        const run = await runScript(EXPORT, ['--format', 'csv', '--site', SITE, '--out', out], { DATABASE_URL: url });
        assert.equal(run.code, 0, run.stderr);
        assert.equal(await readFile(out, 'utf8'), 'id,name,price,stock\r\n1,"Lamp, ""large""",12.5,\r\n2,Mug,,3\r\n');
        assert.equal(run.stderr, `dragnet: exported 2 items of ${SITE} to ${out}\n`);
    });

    it('writes the dead-letter and the quarantine', async (t) => {
        const { url } = await seeded(t);
        const dead = await runScript(EXPORT, [
            '--format',
            'jsonl',
            '--store',
            'dead-letter',
            '--database-url',
            url,
            '--site',
            SITE,
        ]);
        assert.equal(dead.code, 0, dead.stderr);
        assert.deepEqual(
            jsonLines(dead.stdout).map((entry) => [entry.url, entry.reason]),
            [['http://shop.test/c', 'http-404']],
        );
        const quarantine = await runScript(EXPORT, [
            '--format',
            'jsonl',
            '--store',
            'quarantine',
            '--database-url',
            url,
            '--site',
            SITE,
        ]);
        assert.equal(quarantine.code, 0, quarantine.stderr);
        assert.equal(quarantine.stdout, '');
        assert.equal(quarantine.stderr, `dragnet: exported 0 quarantine of ${SITE}\n`);
    });

    it('exports the same records from PostgreSQL as from a storage dir holding the same crawl', async (t) => {
        const { db, url } = await testDatabase(t);
        const shop = storedShop(demoSite, { products: 5, redesignedFrom: 3 });
        const dir = await mkdtemp(join(tmpdir(), 'dragnet-export-both-'));
        t.after(() => rm(dir, { recursive: true, force: true }));
        await storeInPostgres(db, demoSite.name, shop, join(dir, 'fleet'));
        await storeInDir(dir, demoSite.name, shop);
        for (const store of ['items', 'quarantine', 'dead-letter']) {
            const fromPg = await runScript(EXPORT, ['--format', 'jsonl', '--store', store, '--database-url', url]);
            const fromDir = await runScript(EXPORT, ['--format', 'jsonl', '--store', store, '--storage-dir', dir]);
            assert.equal(fromPg.code, 0, fromPg.stderr);
            assert.equal(fromDir.code, 0, fromDir.stderr);
            const sorted = (text: string) =>
                jsonLines(text).sort((a, b) =>
                    JSON.stringify(a.url ?? a._url).localeCompare(JSON.stringify(b.url ?? b._url)),
                );
            assert.ok(jsonLines(fromPg.stdout).length > 0, store);
            assert.deepEqual(sorted(fromPg.stdout), sorted(fromDir.stdout), store);
            assert.equal(fromPg.stderr, fromDir.stderr);
        }
    });

    it('says in one line, exit code 2, that PostgreSQL is unreachable', async () => {
        const run = await runScript(EXPORT, [
            '--format',
            'jsonl',
            '--database-url',
            'postgres://127.0.0.1:1/test',
            '--site',
            SITE,
        ]);
        assertOneLineError(
            run,
            2,
            /PostgreSQL is unreachable at 127\.0\.0\.1:1 .*check --database-url \/ DATABASE_URL/,
        );
    });
});

describe('npm run export of a storage dir, given what it cannot use (child process)', () => {
    it(`says in one line, exit code 2, that --out cannot be written, or that the dir \
holds nothing of the site; creates nothing; takes the site by path too`, async (t) => {
        const dir = await mkdtemp(join(tmpdir(), 'dragnet-export-refused-'));
        t.after(() => rm(dir, { recursive: true, force: true }));
        await storeInDir(join(dir, 'crawled'), demoSite.name, storedShop(demoSite, { products: 3 }));
        const crawled = ['--format', 'jsonl', '--storage-dir', join(dir, 'crawled')];
        const [unwritable, emptyDir, otherSite, byPath] = await Promise.all([
            runScript(EXPORT, [...crawled, '--out', join(dir, 'no-such-dir', 'items.jsonl')]),
            runScript(EXPORT, ['--format', 'csv', '--storage-dir', join(dir, 'never-crawled')]),
            runScript(EXPORT, [...crawled, '--site', 'demo-shopp']),
            runScript(EXPORT, [...crawled, '--site', 'routes/demo-shop.ts']),
        ]);
        assert.equal(byPath.code, 0, byPath.stderr);
        assert.equal(
            byPath.stderr,
            'dragnet: exported 3 items of demo-shop\n',
            'a path names the site its module declares',
        );
        assertOneLineError(unwritable, 2, /cannot write --out .*no-such-dir.*: ENOENT/);
        assertOneLineError(
            emptyDir,
            2,
            /nothing of demo-shop in .*never-crawled: no run of the site stored anything there/,
        );
        assert.equal(existsSync(join(dir, 'never-crawled')), false, 'the mistyped storage dir was created');
        assertOneLineError(otherSite, 2, /nothing of demo-shopp in /);
    });
});
