/**
 * `npm run new-site -- NAME --start-url URL`: a new site from the template (authoring/siteTemplate.ts),
 * `routes/NAME.ts`, and its fixtures folder `test/fixtures/NAME/`, which test/routes/fixtures.test.ts
 * runs as soon as `npm run try -- --save-fixture` has put a page in it.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { siteTemplate } from '../authoring/siteTemplate.js';
import { ConfigError } from '../options/configError.js';
import { InvalidUrlError, normalizeUrl } from '../frontier/normalize.js';
import { SITE_NAME, SITE_NAME_RULE } from '../site/site.js';
import { siteFilesNamed } from '../site/sites.js';
import { runCommand } from './command.js';

const PROJECT = fileURLToPath(new URL('../..', import.meta.url));

const HELP = `Usage: npm run new-site -- NAME --start-url URL [--root DIR]
Writes routes/NAME.ts (a listing → detail site to fill in, every place commented) and test/fixtures/NAME/.
  --start-url URL   where the site's crawl starts
  --root DIR        the project to write into (default: this one)
Then: npm run try -- --site NAME --url URL, and --save-fixture to keep a page as a test.
`;

runCommand(async () => {
    const { values, positionals } = readArgs(process.argv.slice(2));
    if (values.help) {
        process.stdout.write(HELP);
        return 0;
    }
    const [name] = positionals;
    if (name === undefined || positionals.length !== 1) {
        throw new ConfigError('give one site name: npm run new-site -- NAME --start-url URL');
    }
    if (!SITE_NAME.test(name)) throw new ConfigError(`site name "${name}" ${SITE_NAME_RULE}`);
    if (!values['start-url']) throw new ConfigError("give the site's start URL: --start-url URL");
    const startUrl = startUrlOf(values['start-url']);

    const root = resolve(values.root ?? PROJECT);
    const [existing] = siteFilesNamed(name, join(root, 'routes'));
    if (existing) throw new ConfigError(`site "${name}" exists: ${relative(process.cwd(), existing)}`);

    const routeFile = join(root, 'routes', `${name}.ts`);
    const fixturesDir = join(root, 'test', 'fixtures', name);
    await mkdir(join(root, 'routes'), { recursive: true });
    await writeFile(routeFile, siteTemplate({ name, startUrl }), { flag: 'wx' });
    await mkdir(fixturesDir, { recursive: true });
    const shown = (path: string) => relative(process.cwd(), path) || '.';
    process.stdout.write(
        [
            `dragnet: wrote ${shown(routeFile)} and ${shown(fixturesDir)}/`,
            'next:',
            `  1. fill in the TODOs of ${shown(routeFile)} (selectors, match patterns, schema)`,
            `  2. npm run try -- --site ${name} --url ${startUrl}`,
            `  3. npm run try -- --site ${name} --url <a detail page> --save-fixture`,
            '  4. npm test: the saved fixtures are tested from now on',
            '',
        ].join('\n'),
    );
    return 0;
});

function readArgs(args: string[]) {
    try {
        return parseArgs({
            args,
            options: { 'start-url': { type: 'string' }, root: { type: 'string' }, help: { type: 'boolean' } },
            allowPositionals: true,
        });
    } catch (error) {
        throw new ConfigError(`${(error as Error).message.split('\n')[0]} (see --help)`);
    }
}

function startUrlOf(raw: string): string {
    try {
        return normalizeUrl(raw);
    } catch (error) {
        if (error instanceof InvalidUrlError) throw new ConfigError(`--start-url: ${error.message}`);
        throw error;
    }
}
