/**
 * `npm run export -- --site S --format jsonl|csv [--out FILE] [--store items|quarantine|dead-letter]`
 * Streams a site's stored items (or its quarantine or dead-letter) to a file or standard output.
 */
import { Dataset } from '@crawlee/core';
import { ConfigError } from '../configError.js';
import { exportDataset } from '../store/export.js';
import { openStorage, storeNames } from '../store/datasets.js';
import { parseFlags, required, runCommand } from './command.js';

const HELP = `Usage: npm run export -- --site <name> --format jsonl|csv [--out FILE] [--store items|quarantine|dead-letter]
                         [--storage-dir DIR]
Writes the site's stored items (default), quarantine or dead-letter, streaming; to standard output without --out.
`;

const STORES = { items: 'items', quarantine: 'quarantine', 'dead-letter': 'deadLetter' } as const;

runCommand(async () => {
    const flags = parseFlags(process.argv.slice(2), {
        site: { type: 'string', default: process.env.DRAGNET_SITE },
        format: { type: 'string' },
        out: { type: 'string' },
        store: { type: 'string', default: 'items' },
        'storage-dir': { type: 'string', default: process.env.DRAGNET_STORAGE_DIR ?? './storage' },
        help: { type: 'boolean' },
    });
    if (flags.help) {
        process.stdout.write(HELP);
        return 0;
    }
    const site = required(flags.site, '--site');
    const format = required(flags.format, '--format');
    if (format !== 'jsonl' && format !== 'csv') throw new ConfigError('--format must be jsonl or csv');
    const store = STORES[flags.store as keyof typeof STORES];
    if (!store) throw new ConfigError(`--store must be one of ${Object.keys(STORES).join(', ')}`);

    const { config, storage } = openStorage(flags['storage-dir']!);
    const dataset = await Dataset.open(storeNames(site)[store], { config });
    const count = await exportDataset({ dataset, format, out: flags.out });
    await storage.close();
    process.stderr.write(`dragnet: exported ${count} ${flags.store} of ${site}${flags.out ? ` to ${flags.out}` : ''}\n`);
    return 0;
});
