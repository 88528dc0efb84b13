/**
 * `npm run reparse -- [--site S] [--route R]`: runs the current extractors over the stored raw
 * pages and replaces the dataset and quarantine with the result, without fetching anything: in
 * the storage dir, or in PostgreSQL when --database-url is set.
 */
import { optionLines, parseCommandLine } from '../options/config.js';
import { ConfigError } from '../options/configError.js';
import { reparse, reparseSite, type ReparseResult } from '../parse/reparse.js';
import type { Site } from '../site/site.js';
import { openStorage } from '../store/datasets.js';
import { RawStore } from '../store/rawStore.js';
import { IndexedRawPages } from '../store/postgres/indexedRawPages.js';
import { pgResults } from '../store/postgres/results.js';
import { loadSite, namedRoute } from '../site/sites.js';
import { runCommand } from './command.js';
import { connectPostgres } from '../store/postgres/connect.js';

const SHARED = ['site', 'storageDir', 'databaseUrl'] as const;

const HELP = `Usage: npm run reparse -- [--site NAME|PATH] [--route LABEL] [--storage-dir DIR] [--database-url URL]
Re-runs the site's extractors over its stored raw pages: items that now pass move from quarantine
to the dataset and back; the versions before are kept as <name>-previous. Nothing is fetched.
With --database-url, the results are those of that PostgreSQL (a distributed crawl's), the raw pages
those its index places in the storage dir, and the versions before are kept under the site name
<site>-previous.
${optionLines(SHARED)}
`;

runCommand(async () => {
    const commandLine = parseCommandLine(process.argv.slice(2), process.env, SHARED, { route: { type: 'string' } });
    if (commandLine === 'help') {
        process.stdout.write(HELP);
        return 0;
    }
    const { options, flags } = commandLine;
    const site = await loadSite(options.site);
    if (flags.route !== undefined) namedRoute(site, flags.route, '--route');
    const result = options.databaseUrl
        ? await inPostgres(options.databaseUrl, options.storageDir, site, flags.route)
        : await inStorageDir(options.storageDir, site, flags.route);
    const changes = Object.entries(result.changedByField)
        .sort(([, a], [, b]) => b - a)
        .map(([field, count]) => `${field} ${count}`);
    process.stdout.write(
        [
            `dragnet: re-parsed ${result.pages} pages of ${site.name}${flags.route ? ` (route ${flags.route})` : ''}`,
            `  items        ${result.items.before} → ${result.items.after}`,
            `  quarantined  ${result.quarantined.before} → ${result.quarantined.after}`,
            ...(result.needBrowser > 0
                ? [`  unchanged    ${result.needBrowser} cheap fetches still need the browser`]
                : []),
            ...(result.unparsable > 0
                ? [`  unchanged    ${result.unparsable} pages whose parse throws (a link rule, say)`]
                : []),
            `  changed      ${changes.length > 0 ? changes.join(', ') : 'nothing'}`,
            '',
        ].join('\n'),
    );
    return 0;
});

async function inStorageDir(storageDir: string, site: Site, route: string | undefined): Promise<ReparseResult> {
    // Opening the stores creates them: a mistyped storage dir would re-parse nothing and say nothing was wrong.
    if (!(await RawStore.hasPages({ storageDir, site: site.name }))) {
        throw new ConfigError(
            `no raw pages of ${site.name} in ${storageDir}: no run of the site stored any there (see --site, ` +
                `--storage-dir)`,
        );
    }
    const { config, storage } = openStorage(storageDir);
    try {
        return await reparse({ site, storageDir, config, route });
    } finally {
        await storage.close();
    }
}

async function inPostgres(
    databaseUrl: string,
    storageDir: string,
    site: Site,
    route: string | undefined,
): Promise<ReparseResult> {
    const db = await connectPostgres(databaseUrl);
    try {
        return await reparseSite({
            site,
            raw: await IndexedRawPages.open(db, site.name, { storageDir }),
            results: await pgResults(db, site.name),
            route,
        });
    } finally {
        await db.close();
    }
}
