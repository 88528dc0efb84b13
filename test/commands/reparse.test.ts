/**
 * `npm run reparse` of a distributed crawl's results: with --database-url the command re-parses
 * the raw pages in PostgreSQL into a new version of the site's results there, and says what changed
 * as it does for a storage dir. The stored crawl (test/helpers/storedShop.ts) was judged by a broken
 * title selector; the command re-parses it with the demo shop's own. Child processes, as
 * `npm run reparse` runs; the real PostgreSQL, a schema per test.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import demoSite from '../../routes/demo-shop.js';
import { textOf } from '../../src/site/site.js';
import type { QuarantineEntry, StoredItem } from '../../src/store/records.js';
import { assertOneLineError, runScript } from '../helpers/cli.js';
import { storedRows, testDatabase } from '../helpers/pgSchema.js';
import { storeInDir, storeInPostgres, storedShop } from '../helpers/storedShop.js';
import { withExtractor } from '../helpers/withExtractor.js';

const REPARSE = 'src/commands/reparse.ts';
const SITE = demoSite.name;
/** A bug the crawl ran with: the title read from a class the product page does not have. */
const broken = withExtractor(demoSite, 'product', (original) => ($, page) => ({
    ...(original($, page) as object),
    title: textOf($, 'h1.product-name'),
}));

describe('npm run reparse --database-url (child process)', () => {
    it('re-parses the raw pages in PostgreSQL and says what changed, as it does for a storage dir', async (t) => {
        const shop = storedShop(broken, { products: 4 });
        const { db, url } = await testDatabase(t);
        const dir = await mkdtemp(join(tmpdir(), 'dragnet-reparse-cli-'));
        t.after(() => rm(dir, { recursive: true, force: true }));
        const fleetDir = join(dir, 'fleet');
        await storeInPostgres(db, SITE, shop, fleetDir);
        await storeInDir(dir, SITE, shop);

        const run = await runScript(REPARSE, ['--site', SITE, '--database-url', url, '--storage-dir', fleetDir]);
        assert.equal(run.code, 0, run.stderr);
        assert.match(run.stdout, new RegExp(`^dragnet: re-parsed 4 pages of ${SITE}\\n`));
        assert.match(run.stdout, /\n {2}items {8}0 → 4\n {2}quarantined {2}4 → 0\n/);
        assert.match(run.stdout, /\n {2}changed {6}.*title 4/);
        const items = await storedRows<StoredItem>(db, SITE);
        assert.deepEqual(items.map((item) => item.title).sort(), shop.products.map((product) => product.title).sort());
        assert.equal(
            (await storedRows<QuarantineEntry>(db, `${SITE}-previous`, 'quarantine')).length,
            4,
            'the version before is kept',
        );

        const embedded = await runScript(REPARSE, ['--site', SITE, '--storage-dir', dir]);
        assert.equal(embedded.code, 0, embedded.stderr);
        // The same report from either backend; fields changed as often come in the order the items hold
        // them, and jsonb keeps an object's keys shortest first, not as written: compared as a set.
        const report = (stdout: string) =>
            stdout.replace(
                /(changed +)(.*)/,
                (_, head: string, fields: string) => head + fields.split(', ').sort().join(', '),
            );
        assert.equal(report(run.stdout), report(embedded.stdout));
    });

    it('says in one line, exit code 2, that PostgreSQL is unreachable', async () => {
        const run = await runScript(REPARSE, ['--database-url', 'postgres://127.0.0.1:1/test']);
        assert.equal(run.code, 2, run.stderr);
        assert.equal(run.stdout, '');
        assert.match(
            run.stderr,
            new RegExp(
                String.raw`^dragnet: PostgreSQL is unreachable at 127\.0\.0\.1:1 \(.*\); ` +
                    String.raw`check --database-url \/ DATABASE_URL \(postgres:\/\/127\.0\.0\.1:1\/test\)\n$`,
            ),
        );
    });
});

describe('npm run reparse of a storage dir, given what it cannot use (child process)', () => {
    it(`says in one line, exit code 2, that the dir holds no raw pages of \
the site, or that the route is not the site's; creates nothing`, async (t) => {
        const dir = await mkdtemp(join(tmpdir(), 'dragnet-reparse-refused-'));
        t.after(() => rm(dir, { recursive: true, force: true }));
        await storeInDir(join(dir, 'crawled'), SITE, storedShop(demoSite, { products: 3 }));
        const [emptyDir, noRoute] = await Promise.all([
            runScript(REPARSE, ['--storage-dir', join(dir, 'never-crawled')]),
            runScript(REPARSE, ['--storage-dir', join(dir, 'crawled'), '--route', 'prodcut']),
        ]);
        assertOneLineError(
            emptyDir,
            2,
            /no raw pages of demo-shop in .*never-crawled: no run of the site stored any there/,
        );
        assert.equal(existsSync(join(dir, 'never-crawled')), false, 'the mistyped storage dir was created');
        assertOneLineError(
            noRoute,
            2,
            /--route prodcut: site demo-shop has no such route \(routes: home, category, product\)/,
        );
    });
});
