/**
 * `npm run reparse -- [--site S] [--route R]`: runs the current extractors over the stored raw
 * pages and replaces the dataset and quarantine with the result, without fetching anything.
 */
import { optionLines, parseCommandLine } from '../config.js';
import { reparse } from '../parse/reparse.js';
import { openStorage } from '../store/datasets.js';
import { loadSite } from '../sites.js';
import { runCommand } from './command.js';

const HELP = `Usage: npm run reparse -- [--site NAME|PATH] [--route LABEL] [--storage-dir DIR]
Re-runs the site's extractors over its stored raw pages: items that now pass move from quarantine
to the dataset and back; the versions before are kept as <name>-previous. Nothing is fetched.
${optionLines(['site', 'storageDir'])}
`;

runCommand(async () => {
    const commandLine = parseCommandLine(process.argv.slice(2), process.env, ['site', 'storageDir'], { route: { type: 'string' } });
    if (commandLine === 'help') {
        process.stdout.write(HELP);
        return 0;
    }
    const { options, flags } = commandLine;
    const site = await loadSite(options.site);
    const { storageDir } = options;
    const { config, storage } = openStorage(storageDir);
    const result = await reparse({ site, storageDir, config, route: flags.route });
    await storage.close();
    const changes = Object.entries(result.changedByField)
        .sort(([, a], [, b]) => b - a)
        .map(([field, count]) => `${field} ${count}`);
    process.stdout.write(
        [
            `dragnet: re-parsed ${result.pages} pages of ${site.name}${flags.route ? ` (route ${flags.route})` : ''}`,
            `  items        ${result.items.before} → ${result.items.after}`,
            `  quarantined  ${result.quarantined.before} → ${result.quarantined.after}`,
            ...(result.needBrowser > 0 ? [`  unchanged    ${result.needBrowser} cheap fetches still need the browser`] : []),
            ...(result.unparsable > 0 ? [`  unchanged    ${result.unparsable} pages whose parse throws (a link rule, say)`] : []),
            `  changed      ${changes.length > 0 ? changes.join(', ') : 'nothing'}`,
            '',
        ].join('\n'),
    );
    return 0;
});
