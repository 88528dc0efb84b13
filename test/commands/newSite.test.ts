/**
 * The contributor's loop, end to end, in a project of its own (a temp dir with this project's src/,
 * node_modules/ and package.json linked in, so the route file's `'dragnet'` resolves as in this
 * one): `new-site` writes the route file, the test fills in the selectors of the fixture shop's
 * product page, `try --save-fixture` saves a fixture, and the fixture test then runs it (and fails,
 * field by field, when the page stops giving what it saved).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { type Shop, startShop } from '../../src/demo/shop.js';
import { assertOneLineError, ROOT, TSC, runScript } from '../helpers/cli.js';

const NEW_SITE = 'src/commands/newSite.ts';
const TRY = 'src/commands/try.ts';

describe('new-site → try --save-fixture → the fixture test', () => {
    let project: string;
    let shop: Shop;
    let routeFile: string;

    before(async () => {
        project = await mkdtemp(join(tmpdir(), 'dragnet-new-site-'));
        await symlink(join(ROOT, 'src'), join(project, 'src'));
        await symlink(join(ROOT, 'node_modules'), join(project, 'node_modules'));
        await symlink(join(ROOT, 'package.json'), join(project, 'package.json'));
        shop = await startShop({ seed: 3, products: 40, scriptOnlyRate: 0 });
        routeFile = join(project, 'routes', 'pinewood.ts');
    });
    after(async () => {
        await shop.close();
        await rm(project, { recursive: true, force: true });
    });

    it(`writes routes/NAME.ts and test/fixtures/NAME/, and \
refuses a name that exists or is not a site name`, async () => {
        const run = await runScript(NEW_SITE, ['pinewood', '--start-url', `${shop.url}/`, '--root', project]);
        assert.equal(run.code, 0, run.stderr);
        assert.match(run.stdout, /wrote .*routes\/pinewood\.ts/);
        assert.ok(existsSync(join(project, 'test', 'fixtures', 'pinewood')));
        const written = await readFile(routeFile, 'utf8');
        assert.match(written, /name: 'pinewood'/);
        assert.ok(written.includes(`startUrls: ["${shop.url}/"]`), written);

        assertOneLineError(
            await runScript(NEW_SITE, ['pinewood', '--start-url', `${shop.url}/`, '--root', project]),
            2,
            /site "pinewood" exists/,
        );
        assertOneLineError(
            await runScript(NEW_SITE, ['Pine_wood', '--start-url', `${shop.url}/`, '--root', project]),
            2,
            /site name "Pine_wood" must be lower-case/,
        );
        assertOneLineError(
            await runScript(NEW_SITE, ['other', '--start-url', 'not a url', '--root', project]),
            2,
            /--start-url: invalid URL/,
        );
    });

    it('the template type-checks as written, and after the selectors are filled in', async () => {
        await writeFile(
            join(project, 'tsconfig.json'),
            JSON.stringify({ extends: join(ROOT, 'tsconfig.json'), include: ['routes'] }),
        );
        const tsc = () => promisify(execFile)(process.execPath, [TSC, '--noEmit', '-p', project], { cwd: project });
        await tsc();
        // What a contributor fills in for the fixture shop: its
        // categories are listings, its product page's title and price.
        const template = await readFile(routeFile, 'utf8');
        const filled = template
            .replace("url.searchParams.has('page')", "url.pathname.startsWith('/category/')")
            .replace(
                "{ selector: 'a.next', label: 'listing' },",
                "{ selector: 'a.next', label: 'listing' },\n" +
                    "                { selector: 'a.category-link', label: 'listing' },",
            )
            .replace("textOf($, 'h1')", "textOf($, 'h1.product-title')")
            .replace("numberOf($, '.price')", "numberOf($, '.buy-box .price')");
        assert.notEqual(filled, template);
        await writeFile(routeFile, filled);
        await tsc();
    });

    it(`try --save-fixture saves the product page, and the fixture test \
passes with it, then fails field by field when it drifts`, async () => {
        const product = `${shop.url}${shop.products[0]!.path}`;
        const tried = await runScript(TRY, [
            '--site',
            routeFile,
            '--url',
            product,
            '--allow-private-network',
            '--save-fixture',
        ]);
        assert.equal(tried.code, 0, tried.stderr);
        assert.match(tried.stdout, /✓ title +"/);
        assert.match(tried.stdout, /complete: a run stores the records/);
        const fixtures = join(project, 'test', 'fixtures', 'pinewood');
        const saved = (await readdir(fixtures)).sort();
        assert.equal(saved.length, 2, saved.join(', '));
        const expectedFile = join(fixtures, saved.find((file) => file.endsWith('.expected.json'))!);
        const expected = JSON.parse(await readFile(expectedFile, 'utf8'));
        assert.equal(expected.records[0].title, shop.products[0]!.title);

        const fixtureTest = () =>
            promisify(execFile)(
                process.execPath,
                ['--import', 'tsx', '--test', '--test-reporter=spec', 'test/routes/fixtures.test.ts'],
                {
                    cwd: ROOT,
                    // Without the runner's own NODE_TEST_CONTEXT, which would
                    // make the child report to this runner instead of printing.
                    env: { ...withoutTestContext(process.env), DRAGNET_FIXTURES_PROJECT: project },
                },
            ).then(
                ({ stdout }) => ({ code: 0, stdout }),
                (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
            );
        const passing = await fixtureTest();
        assert.equal(passing.code, 0, passing.stdout);
        assert.match(passing.stdout, /fixtures of pinewood/);
        assert.match(passing.stdout, /ℹ pass 2/);

        await writeFile(
            expectedFile,
            JSON.stringify({ ...expected, records: [{ ...expected.records[0], title: 'Something Else' }] }),
        );
        const failing = await fixtureTest();
        assert.notEqual(failing.code, 0);
        assert.match(failing.stdout, /records\[0\]\.title: expected "Something Else", got "/);
    });
});

function withoutTestContext(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
    const { NODE_TEST_CONTEXT: _, ...rest } = env;
    return rest;
}
