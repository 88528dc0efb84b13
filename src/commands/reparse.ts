/**
 * `npm run reparse -- [--site S] [--route R] [--warc FILE_OR_DIR]`: runs the current extractors over
 * the stored raw pages, or over the responses of a WARC written by any tool, and replaces the
 * dataset, quarantine and dead-letter with the result, without fetching anything: in the storage
 * dir, or in PostgreSQL when --database-url is set. `--convert-raw` archives the raw pages of the
 * JSON-lines store that came before the archive, once.
 */
import { join } from 'node:path';
import { decodeBody } from '../fetch/http/decodeBody.js';
import { checkResponse } from '../fetch/failures/responseCheck.js';
import { optionLines, parseCommandLine } from '../options/config.js';
import { ConfigError } from '../options/configError.js';
import { livePages, type PageSource, reparse, reparseSite, type ReparseResult } from '../parse/reparse.js';
import { PgPageHistory } from '../store/postgres/pageHistory.js';
import { SqliteDatasetClient } from '../store/sqlite/datasetClient.js';
import { SqlitePageHistory } from '../store/sqlite/pageHistory.js';
import { type Skipped, WarcPages, warcFilesAt } from '../parse/warcPages.js';
import type { Site } from '../site/site.js';
import { openStorage } from '../store/datasets.js';
import { ArchiveStore, archiveDirOf } from '../store/archive/archiveStore.js';
import { convertLegacyRawPages, legacyRawDir, legacySegments } from '../store/archive/legacyRawPages.js';
import { IndexedRawPages } from '../store/postgres/indexedRawPages.js';
import { pgResults } from '../store/postgres/results.js';
import { loadSite, namedRoute } from '../site/sites.js';
import { runCommand } from './command.js';
import { connectPostgres } from '../store/postgres/connect.js';

const SHARED = ['site', 'storageDir', 'archiveDir', 'databaseUrl'] as const;
const OWN = { route: { type: 'string' }, warc: { type: 'string' }, 'convert-raw': { type: 'boolean' } } as const;

const HELP = `Usage: npm run reparse -- [--site NAME|PATH] [--route LABEL] [--warc FILE|DIR] [--storage-dir DIR]
                            [--archive-dir DIR] [--database-url URL]
       npm run reparse -- --convert-raw [--site NAME|PATH] [--storage-dir DIR] [--archive-dir DIR]
                            [--database-url URL]
Re-runs the site's extractors over its stored raw pages: items that now pass move from quarantine
to the dataset and back; the versions before are kept as <name>-previous. Nothing is fetched.
With --warc, the pages are the responses of a WARC written by any tool, each routed by the routes'
match and judged as a crawl judges a response; its items, quarantine and dead-letter replace the
site's, and the records that are no page of the site are skipped and counted by reason.
With --database-url, the results are those of that PostgreSQL (a distributed crawl's), the raw pages
those its index places in the archive dir, and the versions before are kept under the site name
<site>-previous.
--convert-raw archives the raw pages of the JSON-lines store that came before the WARC archive
(<storage-dir>/raw_pages/<site>/) once, then removes them.
  ${'--route <value>'.padEnd(30)} re-parse only this route's pages; the other routes' results are kept
  ${'--warc <value>'.padEnd(30)} a WARC file, or a directory whose *.warc and *.warc.gz files are read in name order
  ${'--convert-raw'.padEnd(30)} convert the old raw pages into the archive; re-parses nothing
${optionLines(SHARED)}
`;

/** Skipped records shown, per reason. */
const EXAMPLES_PER_REASON = 3;

runCommand(async () => {
    const commandLine = parseCommandLine(process.argv.slice(2), process.env, SHARED, OWN);
    if (commandLine === 'help') {
        process.stdout.write(HELP);
        return 0;
    }
    const { options, flags } = commandLine;
    const site = await loadSite(options.site);
    const archiveDir = options.archiveDir ?? archiveDirOf(options.storageDir);
    if (flags['convert-raw']) {
        if (flags.route !== undefined || flags.warc !== undefined)
            throw new ConfigError('--convert-raw converts the raw pages and re-parses nothing: give it alone');
        const converted = await convertRaw(options.storageDir, archiveDir, site, options.databaseUrl);
        process.stdout.write(
            `dragnet: converted ${converted} raw pages of ${site.name} into the archive in ${join(archiveDir, site.name)}\n`,
        );
        return 0;
    }
    if (flags.route !== undefined) namedRoute(site, flags.route, '--route');
    const warc = flags.warc === undefined ? undefined : await warcPages(flags.warc, site);
    const where = { storageDir: options.storageDir, archiveDir, site, route: flags.route, raw: warc?.pages };
    const result = options.databaseUrl ? await inPostgres(options.databaseUrl, where) : await inStorageDir(where);
    const changes = Object.entries(result.changedByField)
        .sort(([, a], [, b]) => b - a)
        .map(([field, count]) => `${field} ${count}`);
    const files = warc && ` from ${warc.files} WARC file${warc.files === 1 ? '' : 's'}`;
    process.stdout.write(
        [
            `dragnet: re-parsed ${result.pages} pages of ${site.name}${flags.route ? ` (route ${flags.route})` : ''}${files ?? ''}`,
            `  items        ${result.items.before} → ${result.items.after}`,
            `  quarantined  ${result.quarantined.before} → ${result.quarantined.after}`,
            `  dead-letter  ${result.deadLettered.before} → ${result.deadLettered.after}`,
            ...(result.needBrowser > 0
                ? [`  unchanged    ${result.needBrowser} cheap fetches still need the browser`]
                : []),
            ...(result.unparsable > 0
                ? [`  unchanged    ${result.unparsable} pages whose parse throws (a link rule, say)`]
                : []),
            `  changed      ${changes.length > 0 ? changes.join(', ') : 'nothing'}`,
            ...(warc ? skippedLines(warc.pages.skipped) : []),
            '',
        ].join('\n'),
    );
    return 0;
});

interface Where {
    storageDir: string;
    archiveDir: string;
    site: Site;
    route: string | undefined;
    /** A WARC's pages; undefined: the stored raw pages. */
    raw: PageSource | undefined;
}

async function warcPages(path: string, site: Site): Promise<{ pages: WarcPages; files: number }> {
    const files = await warcFilesAt(path).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') throw new ConfigError(`--warc ${path}: no such file or directory`);
        throw error;
    });
    if (files.length === 0) throw new ConfigError(`--warc ${path}: the directory holds no .warc or .warc.gz file`);
    const reading = { decodeBody, checkResponse };
    return {
        pages: new WarcPages({ site, files, reading, examplesPerReason: EXAMPLES_PER_REASON }),
        files: files.length,
    };
}

function skippedLines({ counts, examples }: Skipped): string[] {
    const reasons = Object.entries(counts).sort(([a], [b]) => a.localeCompare(b));
    const total = reasons.reduce((sum, [, count]) => sum + count, 0);
    if (total === 0) return ['  skipped      nothing'];
    return [
        `  skipped      ${total} records: ${reasons.map(([reason, count]) => `${reason} ${count}`).join(', ')}`,
        ...examples.map(({ reason, file, offset, detail }) => `    ${reason.padEnd(12)} ${file}@${offset}  ${detail}`),
    ];
}

/**
 * A plain re-parse of an archive the old raw pages were never converted into would replace the
 * site's results with nothing: refused, saying how to convert them.
 */
async function refuseUnconverted({ storageDir, archiveDir, site }: Where): Promise<void> {
    if (await ArchiveStore.hasPages({ archiveDir, site: site.name })) return;
    if ((await legacySegments(storageDir, site.name)).length === 0) return;
    throw new ConfigError(
        `the raw pages of ${site.name} in ${legacyRawDir(storageDir, site.name)} are in the JSON-lines format that ` +
            `came before the WARC archive: convert them once with \`npm run reparse -- --site ${site.name} ` +
            `--storage-dir ${storageDir} --convert-raw\`, then re-parse`,
    );
}

async function inStorageDir(where: Where): Promise<ReparseResult> {
    const { storageDir, archiveDir, site, route, raw } = where;
    // Opening the stores creates them: a mistyped storage dir would re-parse nothing and say nothing was wrong.
    if (!raw && !(await ArchiveStore.hasPages({ archiveDir, site: site.name }))) {
        await refuseUnconverted(where);
        throw new ConfigError(
            `no raw pages of ${site.name} in ${storageDir}: no run of the site stored any there (see --site, ` +
                `--storage-dir, --archive-dir)`,
        );
    }
    const { config, storage } = openStorage(storageDir);
    try {
        const history = new SqlitePageHistory(storage.db, site.name, new SqliteDatasetClient(storage.db, site.name));
        const archived =
            raw ?? livePages(await ArchiveStore.open({ archiveDir, site: site.name }), await history.removedKeys());
        return await reparse({ site, storageDir, archiveDir, config, route, raw: archived });
    } finally {
        await storage.close();
    }
}

async function inPostgres(databaseUrl: string, where: Where): Promise<ReparseResult> {
    const { archiveDir, site, route } = where;
    if (!where.raw) await refuseUnconverted(where);
    const db = await connectPostgres(databaseUrl);
    try {
        return await reparseSite({
            site,
            raw:
                where.raw ??
                livePages(
                    await IndexedRawPages.open(db, site.name, { archiveDir }),
                    await new PgPageHistory(db, site.name).removedKeys(),
                ),
            results: await pgResults(db, site.name),
            route,
        });
    } finally {
        await db.close();
    }
}

/** Archives the old store's pages (indexed in PostgreSQL with --database-url, as a fleet's are), then removes it. */
async function convertRaw(
    storageDir: string,
    archiveDir: string,
    site: Site,
    databaseUrl: string | undefined,
): Promise<number> {
    if ((await legacySegments(storageDir, site.name)).length === 0) {
        throw new ConfigError(
            `no raw pages of ${site.name} in the JSON-lines format in ${legacyRawDir(storageDir, site.name)}: ` +
                'nothing to convert (see --site, --storage-dir)',
        );
    }
    if (!databaseUrl) {
        const archive = await ArchiveStore.open({ archiveDir, site: site.name });
        return convertLegacyRawPages(storageDir, site.name, archive);
    }
    const db = await connectPostgres(databaseUrl);
    try {
        const archive = await IndexedRawPages.open(db, site.name, { archiveDir, writer: 'converted' });
        return await convertLegacyRawPages(storageDir, site.name, archive);
    } finally {
        await db.close();
    }
}
