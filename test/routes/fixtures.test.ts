/**
 * Every site's fixtures, found by themselves: each `test/fixtures/<site>/<name>.html` with a
 * `<name>.expected.json` beside it (src/authoring/fixtureFiles.ts) is run through its route by each
 * definition of the site in routes/ (`<site>.ts`, and `<site>.yaml`/`.yml`/`.json` when there is one,
 * so a declarative copy must give what the TypeScript site gives), and a mismatch fails with the
 * field-by-field difference. `npm run try -- --save-fixture` writes such files.
 *
 * DRAGNET_FIXTURES_PROJECT names another project root (with routes/ and test/fixtures/) to run the
 * fixtures of; the default is this one.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, it } from 'node:test';
import { expectationOf, fixtureDifferences, readFixtures } from '../../src/authoring/fixtureFiles.js';
import { tryPage } from '../../src/authoring/pageTrial.js';
import { normalizeUrl } from '../../src/frontier/normalize.js';
import { SiteScope } from '../../src/frontier/scope.js';
import { loadSite, siteFilesNamed } from '../../src/site/sites.js';
import { ROOT } from '../helpers/cli.js';

const PROJECT = process.env.DRAGNET_FIXTURES_PROJECT || ROOT;
const ROUTES = join(PROJECT, 'routes');
const FIXTURES = join(PROJECT, 'test', 'fixtures');

const siteDirs = readdirSync(FIXTURES, { withFileTypes: true }).filter(
    (entry) =>
        entry.isDirectory() && readdirSync(join(FIXTURES, entry.name)).some((file) => file.endsWith('.expected.json')),
);

for (const { name } of siteDirs) {
    const definitions = siteFilesNamed(name, ROUTES).map((file) => basename(file));
    describe(`fixtures of ${name}`, () => {
        it('belong to a site in routes/', () =>
            assert.ok(
                definitions.length > 0,
                `test/fixtures/${name}/ has fixtures but routes/ has no ${name}.ts (or .yaml/.json)`,
            ));
        for (const definition of definitions) {
            it(`each page gives what it expects, through routes/${definition}`, async () => {
                const site = await loadSite(join(ROUTES, definition), ROUTES);
                const fixtures = await readFixtures(join(FIXTURES, name));
                const failures: string[] = [];
                for (const { file, pageFile, expected } of fixtures) {
                    const route = site.routes.get(expected.label);
                    if (!route) {
                        failures.push(`${file}: no route "${expected.label}" in ${definition}`);
                        continue;
                    }
                    const url = normalizeUrl(expected.url, { trackingParams: site.trackingParams });
                    const scope = new SiteScope({
                        startUrls: [url, ...site.startUrls],
                        allowedDomains: site.allowedDomains,
                    });
                    const trial = tryPage(
                        site,
                        route,
                        {
                            html: readFileSync(pageFile, 'utf8'),
                            finalUrl: url,
                            renderer: expected.renderer ?? 'http',
                            userData: {},
                        },
                        scope,
                    );
                    const differences = fixtureDifferences(expected, expectationOf(trial));
                    if (differences.length > 0) failures.push(`${file}:\n  ${differences.join('\n  ')}`);
                }
                assert.ok(fixtures.length > 0);
                if (failures.length > 0) assert.fail(`fixtures that differ:\n${failures.join('\n')}`);
            });
        }
    });
}
