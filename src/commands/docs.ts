/**
 * `npm run docs`: writes what is generated from the option table (src/options.ts): `.env.example`
 * and the README's option table. Run it after changing an option; a test fails until then.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { envExample, withOptionTable } from '../optionDocs.js';
import { runCommand } from './command.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

runCommand(async () => {
    await writeFile(`${ROOT}.env.example`, envExample());
    const readme = `${ROOT}README.md`;
    await writeFile(readme, withOptionTable(await readFile(readme, 'utf8')));
    process.stderr.write('dragnet: wrote .env.example and the README option table from src/options.ts\n');
    return 0;
});
