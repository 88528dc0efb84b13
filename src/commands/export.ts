/**
 * `npm run export -- --format jsonl|csv [--site S] [--out FILE] [--store items|quarantine|dead-letter]`
 * Streams a site's stored items (or its quarantine or dead-letter) to a file or standard output:
 * from its datasets in the storage dir, or from PostgreSQL when --database-url is set.
 */
import { Dataset } from '@crawlee/core';
import { optionLines, parseCommandLine } from '../options/config.js';
import { ConfigError } from '../options/configError.js';
import { exportDataset, exportRecords, type ExportFormat } from '../store/export.js';
import { hasStoredDataset, openStorage, storeNames } from '../store/datasets.js';
import { iterateItems, type PgStore } from '../store/postgres/reader.js';
import { siteNameOf } from '../site/sites.js';
import { runCommand } from './command.js';
import { connectPostgres } from '../store/postgres/connect.js';

const SHARED = ['site', 'storageDir', 'databaseUrl'] as const;

const HELP = `Usage: npm run export -- --format jsonl|csv [--out FILE] [--store items|quarantine|dead-letter]
                         [--site NAME] [--storage-dir DIR] [--database-url URL]
Writes the site's stored items (default), quarantine or dead-letter, streaming; to standard output without --out.
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

    const count = await (databaseUrl
        ? fromPostgres(databaseUrl, site, store, format, flags.out)
        : fromDatasets(storageDir, site, store, format, flags.out)
    ).catch((error: NodeJS.ErrnoException) => {
        if (flags.out !== undefined && error.path === flags.out)
            throw new ConfigError(`cannot write --out ${flags.out}: ${error.code ?? error.message}`);
        throw error;
    });
    process.stderr.write(
        `dragnet: exported ${count} ${flags.store} of ${site}${flags.out ? ` to ${flags.out}` : ''}\n`,
    );
    return 0;
});

async function fromDatasets(
    storageDir: string,
    site: string,
    store: PgStore,
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
        return await exportDataset({ dataset, format, out });
    } finally {
        await storage.close();
    }
}

async function fromPostgres(
    databaseUrl: string,
    site: string,
    store: PgStore,
    format: ExportFormat,
    out: string | undefined,
): Promise<number> {
    const db = await connectPostgres(databaseUrl);
    try {
        return await exportRecords({ records: () => iterateItems(db, site, store), format, out });
    } finally {
        await db.close();
    }
}
