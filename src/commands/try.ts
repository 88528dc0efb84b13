/**
 * `npm run try -- --site NAME --url URL [--label L] [--render] [--json] [--save-fixture]`, or
 * `--file PAGE.html`: one page through its route, without a crawl. The page is fetched as a run would
 * fetch it (authoring/onePageRun.ts: the run's options, in a storage dir of its own), and the route's
 * records, the schema's verdict per field, the links each rule would follow and whether the page
 * would escalate are printed (authoring/trialReport.ts). `--save-fixture` keeps the page and its
 * output as a fixture of the site, which `npm test` then runs (test/routes/fixtures.test.ts).
 */
import { readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { crawlOptionsOf, optionLines, parseCommandLine } from '../options/config.js';
import { ConfigError } from '../options/configError.js';
import { findChromium } from '../fetch/browser/chromium.js';
import { InvalidUrlError, normalizeUrl } from '../frontier/normalize.js';
import { SiteScope } from '../frontier/scope.js';
import { createLogger } from '../monitor/logger.js';
import { OPTIONS, type OptionName } from '../options/options.js';
import type { Renderer, Route, Site } from '../site/site.js';
import { loadSite, namedRoute, siteSourceFile } from '../site/sites.js';
import { expectationOf, fixtureName, saveFixture } from '../authoring/fixtureFiles.js';
import { fetchOnePage, type OnePageResult } from '../authoring/onePageRun.js';
import { type PageTrial, tryPage } from '../authoring/pageTrial.js';
import { formatSideBySide, formatTrial } from '../authoring/trialReport.js';
import { runCommand } from './command.js';

/**
 * Every option of a run (the page goes out as a run's would: headers,
 * proxy tiers, limits) but the log level, which is try's own.
 */
const SHARED = (Object.keys(OPTIONS) as OptionName[]).filter(
    (name): name is Exclude<OptionName, 'logLevel'> => name !== 'logLevel',
);

const OWN = {
    url: { type: 'string' },
    file: { type: 'string' },
    label: { type: 'string' },
    render: { type: 'boolean' },
    json: { type: 'boolean' },
    'save-fixture': { type: 'boolean' },
    'fixtures-dir': { type: 'string' },
    // The one-page run's info lines (its storage dir, its report) are about a run that is thrown away.
    'log-level': { type: 'string', default: 'warn' },
} as const;

const HELP = `Usage: npm run try -- --site NAME|PATH (--url URL | --file PAGE.html) [--label L] [--render] [--json] \
[--save-fixture]
Runs one page through its route and shows the records, the schema's verdict per field, the links each
enqueue rule would follow (or why not) and whether a run would send the page to the browser. Nothing
is crawled and the site's stores are not touched.
  --url URL              the page: fetched as a run fetches it (same headers, session, proxy tier, checks)
  --file PAGE.html       a saved page instead (its links resolve against --url, else the site's first start URL)
  --label L              the route to use (default: the route whose match takes the URL)
  --render               also render the page in the browser, and show both side by side
  --json                 print the trial as JSON
  --save-fixture         save the page and its output as a fixture of the site (test/fixtures/<site>/)
  --fixtures-dir DIR     where fixtures go (default: test/fixtures/<site>/ beside the site's routes/ folder)
  --log-level LEVEL      the fetch's log on stderr (default: warn)
Every option of a run applies too (npm start -- --help), e.g.:
${optionLines(['site', 'proxyTiers', 'allowPrivateNetwork', 'maxResponseMb', 'requestTimeoutSecs'])}
`;

runCommand(async () => {
    const commandLine = parseCommandLine(process.argv.slice(2), process.env, SHARED, OWN);
    if (commandLine === 'help') {
        process.stdout.write(HELP);
        return 0;
    }
    const { options, flags } = commandLine;
    const site = await loadSite(options.site);
    if (!flags.url && !flags.file) throw new ConfigError('give the page: --url URL, or --file PAGE.html');
    if (flags.file && flags.render) throw new ConfigError('--render fetches the page: give --url, not --file');
    const url = pageUrl(site, flags.url ?? site.startUrls[0]);
    const route = routeOf(site, flags.label, url);
    const scope = new SiteScope({
        startUrls: [url, ...site.startUrls],
        allowedDomains: [...(site.allowedDomains ?? []), ...options.allowDomains],
    });

    const trials: { trial: PageTrial; html: string; fetched?: string }[] = [];
    const failures: string[] = [];
    const trialOf = (html: string, finalUrl: string, renderer: Renderer) =>
        tryPage(site, route, { html, finalUrl, renderer, userData: {} }, scope);
    if (flags.file) {
        const html = await readFile(flags.file, 'utf8').catch((error: NodeJS.ErrnoException) => {
            throw new ConfigError(`cannot read --file ${flags.file}: ${error.code ?? error.message}`);
        });
        trials.push({ trial: trialOf(html, url, 'http'), html });
    } else {
        const level = OPTIONS.logLevel.schema.safeParse(flags['log-level']);
        if (!level.success) throw new ConfigError(`--log-level ${level.error.issues[0]?.message ?? 'is not valid'}`);
        const logLevel = level.data;
        const log = createLogger({ level: logLevel });
        const run = {
            ...crawlOptionsOf({ ...options, logLevel }),
            site,
            url,
            route,
            chromiumPath: findChromium(),
            log,
        };
        for (const render of flags.render ? (['never', 'always'] as const) : (['never'] as const)) {
            const result = await fetchOnePage({ ...run, render });
            if (result.page) {
                const { page } = result;
                const fetched = [
                    `status ${page.status}`,
                    `${(Buffer.byteLength(page.body) / 1024).toFixed(1)} KB`,
                    page.charset,
                    page.finalUrl !== url ? `from ${url}` : undefined,
                ];
                trials.push({
                    trial: trialOf(page.body, page.finalUrl, page.renderer),
                    html: page.body,
                    fetched: fetched.filter(Boolean).join(', '),
                });
            } else {
                failures.push(`${render === 'never' ? 'cheap fetch' : 'browser'}: ${notFetched(result)}`);
            }
        }
    }

    if (flags.json) {
        const json = { site: site.name, trials: trials.map(({ trial, fetched }) => ({ ...trial, fetched })), failures };
        process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
    } else {
        const sections = [...trials.map(({ trial, fetched }) => formatTrial(trial, fetched)), ...failures];
        const [first, second] = trials;
        if (trials.length === 2 && first && second) sections.push(formatSideBySide(first.trial, second.trial));
        process.stdout.write(`${sections.join('\n\n')}\n`);
    }
    if (flags['save-fixture']) {
        const dir = flags['fixtures-dir'] ?? fixturesDirOf(site);
        for (const { trial, html } of trials) {
            const name = `${fixtureName(trial.url)}${trial.renderer === 'browser' ? '-rendered' : ''}`;
            const saved = await saveFixture(dir, name, html, expectationOf(trial));
            const replaced = saved.replaced ? ', replacing the fixture of that name' : '';
            process.stderr.write(
                `dragnet: saved fixture ${relative(process.cwd(), saved.file)} ` +
                    `(and ${relative(process.cwd(), saved.pageFile)})${replaced}\n`,
            );
        }
    }
    return failures.length > 0 ? 1 : 0;
});

function pageUrl(site: Site, raw: string | undefined): string {
    if (!raw) throw new ConfigError(`site ${site.name} has no start URL: give --url`);
    try {
        return normalizeUrl(raw, { trackingParams: site.trackingParams });
    } catch (error) {
        if (error instanceof InvalidUrlError) throw new ConfigError(`--url: ${error.message}`);
        throw error;
    }
}

function routeOf(site: Site, label: string | undefined, url: string): Route {
    if (label) return namedRoute(site, label, '--label');
    const route = site.routeFor(undefined, new URL(url));
    if (!route)
        throw new ConfigError(
            `${url}: no route of site ${site.name} matches it; give --label ` +
                `(routes: ${[...site.routes.keys()].join(', ')})`,
        );
    return route;
}

/** Why a one-page run stored no page. */
function notFetched({ deadLetter, skipped }: OnePageResult): string {
    if (deadLetter)
        return `dead-lettered as ${deadLetter.reason} after ${deadLetter.attempts} attempt(s): ${deadLetter.error}`;
    if (skipped.disallowed > 0) return 'not fetched: robots.txt disallows it';
    if (skipped.offsite > 0) return 'not fetched: it redirects off the site';
    return 'not fetched (see the log)';
}

/** `test/fixtures/<site>/` of the project the site's file is in (`<project>/routes/<site>.ts`, or `.yaml`). */
function fixturesDirOf(site: Site): string {
    const source = siteSourceFile(site);
    return join(source ? dirname(dirname(source)) : process.cwd(), 'test', 'fixtures', site.name);
}
