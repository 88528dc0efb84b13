/**
 * `npm run docs`: writes what is generated from the option table (src/options/options.ts): `.env.example`,
 * the README's option table, and the actor definition `.actor/actor.json` and
 * `.actor/input_schema.json`. Run it after changing an option; a test fails until then.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { actorInputSchema, actorJson } from '../options/actorFiles.js';
import { parseCommandLine } from '../options/config.js';
import { envExample, withOptionTable } from '../options/optionDocs.js';
import { runCommand } from './command.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const HELP = `Usage: npm run docs
Writes what is generated from the option table (src/options/options.ts): .env.example, the README's option
table, and the actor definition .actor/actor.json and .actor/input_schema.json. Takes no options.
`;

runCommand(async () => {
    // Any argument but --help is a mistake: say so rather than rewrite the files anyway.
    if (parseCommandLine(process.argv.slice(2), process.env, [], {}) === 'help') {
        process.stdout.write(HELP);
        return 0;
    }
    await writeFile(`${ROOT}.env.example`, envExample());
    const readme = `${ROOT}README.md`;
    await writeFile(readme, withOptionTable(await readFile(readme, 'utf8')));
    const { version } = JSON.parse(await readFile(`${ROOT}package.json`, 'utf8')) as { version: string };
    await mkdir(`${ROOT}.actor`, { recursive: true });
    await writeFile(`${ROOT}.actor/actor.json`, `${JSON.stringify(actorJson(version), null, 4)}\n`);
    await writeFile(`${ROOT}.actor/input_schema.json`, `${JSON.stringify(actorInputSchema(), null, 4)}\n`);
    process.stderr.write(
        'dragnet: wrote .env.example, the README option table and .actor/ from src/options/options.ts\n',
    );
    return 0;
});
