/**
 * `npm run export -- --format jsonl|csv [--site S] [--out FILE] [--store items|quarantine|dead-letter]`
 * Streams a site's stored items (or its quarantine or dead-letter) to a file or standard output.
 */
import { Dataset } from '@crawlee/core';
import { optionLines, parseCommandLine } from '../config.js';
import { ConfigError } from '../configError.js';
import { exportDataset } from '../store/export.js';
import { openStorage, storeNames } from '../store/datasets.js';
import { runCommand } from './command.js';

const HELP = `Usage: npm run export -- --format jsonl|csv [--out FILE] [--store items|quarantine|dead-letter]
                         [--site NAME] [--storage-dir DIR]
Writes the site's stored items (default), quarantine or dead-letter, streaming; to standard output without --out.
${optionLines(['site', 'storageDir'])}
`;

const STORES = { items: 'items', quarantine: 'quarantine', 'dead-letter': 'deadLetter' } as const;

runCommand(async () => {
    const commandLine = parseCommandLine(process.argv.slice(2), process.env, ['site', 'storageDir'], {
        format: { type: 'string' },
        out: { type: 'string' },
        store: { type: 'string', default: 'items' },
    });
    if (commandLine === 'help') {
        process.stdout.write(HELP);
        return 0;
    }
    const { options: { site, storageDir }, flags } = commandLine;
    const { format } = flags;
    if (format === undefined) throw new ConfigError('--format is required (see --help)');
    if (format !== 'jsonl' && format !== 'csv') throw new ConfigError('--format must be jsonl or csv');
    const store = STORES[flags.store as keyof typeof STORES];
    if (!store) throw new ConfigError(`--store must be one of ${Object.keys(STORES).join(', ')}`);

    const { config, storage } = openStorage(storageDir);
    const dataset = await Dataset.open(storeNames(site)[store], { config });
    const count = await exportDataset({ dataset, format, out: flags.out });
    await storage.close();
    process.stderr.write(`dragnet: exported ${count} ${flags.store} of ${site}${flags.out ? ` to ${flags.out}` : ''}\n`);
    return 0;
});
