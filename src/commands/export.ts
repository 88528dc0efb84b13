/**
 * `npm run export -- --format jsonl|csv [--site S] [--out FILE] [--store items|quarantine|dead-letter] [--changes]`
 * Streams a site's stored items (or its quarantine or dead-letter) to a file or standard output:
 * from its datasets in the storage dir, or from PostgreSQL when --database-url is set. With
 * --changes, only what the latest run found new, changed or removed (store/changeLog.ts).
 */
import { Dataset } from '@crawlee/core';
import { optionLines, parseCommandLine } from '../options/config.js';
import { ConfigError } from '../options/configError.js';
import { exportDataset, exportRecords, type ExportFormat } from '../store/export.js';
import { datasetItems, hasStoredDataset, openStorage, storeNames } from '../store/datasets.js';
import { changeLog } from '../store/changeLog.js';
import { PgPageHistory } from '../store/postgres/pageHistory.js';
import { SqliteDatasetClient } from '../store/sqlite/datasetClient.js';
import { SqlitePageHistory } from '../store/sqlite/pageHistory.js';
import { iterateItems, type PgStore } from '../store/postgres/reader.js';
import { siteNameOf } from '../site/sites.js';
import { runCommand } from './command.js';
import { connectPostgres } from '../store/postgres/connect.js';

const SHARED = ['site', 'storageDir', 'databaseUrl'] as const;

const HELP = `Usage: npm run export -- --format jsonl|csv [--out FILE] [--store items|quarantine|dead-letter]
                         [--changes] [--site NAME] [--storage-dir DIR] [--database-url URL]
Writes the site's stored items (default), quarantine or dead-letter, streaming; to standard output without --out.
With --changes, writes the change log of the site's latest run instead: the items it found new or changed and
the items of the pages it found gone, each with _change (new, changed with _diff, removed with _removedBecause).
With --database-url, reads them from that PostgreSQL (a distributed crawl's results) instead of the storage dir.
${optionLines(SHARED)}
`;

const STORES = { items: 'items', quarantine: 'quarantine', 'dead-letter': 'deadLetter' } as const satisfies Record<
    string,
    PgStore
>;

runCommand(async () => {
    const commandLine = parseCommandLine(process.argv.slice(2), process.env, SHARED, {
        format: { type: 'string' },
        out: { type: 'string' },
        store: { type: 'string', default: 'items' },
        changes: { type: 'boolean', default: false },
    });
    if (commandLine === 'help') {
        process.stdout.write(HELP);
        return 0;
    }
    const {
        options: { storageDir, databaseUrl },
        flags,
    } = commandLine;
    const site = await siteNameOf(commandLine.options.site);
    const { format } = flags;
    if (format === undefined) throw new ConfigError('--format is required (see --help)');
    if (format !== 'jsonl' && format !== 'csv') throw new ConfigError('--format must be jsonl or csv');
    const store = STORES[flags.store as keyof typeof STORES];
    if (!store) throw new ConfigError(`--store must be one of ${Object.keys(STORES).join(', ')}`);
    if (flags.changes && store !== 'items') throw new ConfigError('--changes is a log of items: leave out --store');
    const what = { store, changes: flags.changes === true };

    const count = await (databaseUrl
        ? fromPostgres(databaseUrl, site, what, format, flags.out)
        : fromDatasets(storageDir, site, what, format, flags.out)
    ).catch((error: NodeJS.ErrnoException) => {
        if (flags.out !== undefined && error.path === flags.out)
            throw new ConfigError(`cannot write --out ${flags.out}: ${error.code ?? error.message}`);
        throw error;
    });
    process.stderr.write(
        `dragnet: exported ${count} ${what.changes ? 'changes' : flags.store} of ${site}` +
            `${flags.out ? ` to ${flags.out}` : ''}\n`,
    );
    return 0;
});

/** Which records: a store, or the change log of its items. */
interface Wanted {
    store: PgStore;
    changes: boolean;
}

async function fromDatasets(
    storageDir: string,
    site: string,
    { store, changes }: Wanted,
    format: ExportFormat,
    out: string | undefined,
): Promise<number> {
    const name = storeNames(site)[store];
    // Opening a dataset creates it: a mistyped site or storage dir would export nothing and say nothing was wrong.
    if (!hasStoredDataset(storageDir, name)) {
        throw new ConfigError(
            `nothing of ${site} in ${storageDir}: no run of the site stored anything there (see --site, --storage-dir)`,
        );
    }
    const { config, storage } = openStorage(storageDir);
    try {
        const dataset = await Dataset.open(name, { config });
        if (!changes) return await exportDataset({ dataset, format, out });
        const history = new SqlitePageHistory(storage.db, site, new SqliteDatasetClient(storage.db, name));
        const series = history.series() ?? { run: 1, mode: 'first' };
        return await exportRecords({ records: () => changeLog(datasetItems(dataset), history, series), format, out });
    } finally {
        await storage.close();
    }
}

async function fromPostgres(
    databaseUrl: string,
    site: string,
    { store, changes }: Wanted,
    format: ExportFormat,
    out: string | undefined,
): Promise<number> {
    const db = await connectPostgres(databaseUrl);
    try {
        if (!changes) return await exportRecords({ records: () => iterateItems(db, site, store), format, out });
        const history = new PgPageHistory(db, site);
        const series = (await history.series()) ?? { run: 1, mode: 'first' };
        return await exportRecords({
            records: () => changeLog(iterateItems(db, site, 'items'), history, series),
            format,
            out,
        });
    } finally {
        await db.close();
    }
}
