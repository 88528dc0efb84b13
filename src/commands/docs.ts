/**
 * `npm run docs`: writes what is generated (authoring/generatedDocs.ts): the configuration page's
 * option table, `.env.example` and the actor definition from the option table, and the API
 * reference (docs/api/) from the TSDoc of what `'dragnet'` exports. Run it after changing an option
 * or an export's doc; the docs test fails until then.
 */
import { readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { API_REFERENCE_DIR, writeApiReference } from '../authoring/apiReference.js';
import { GENERATED_FILES } from '../authoring/generatedDocs.js';
import { parseCommandLine } from '../options/config.js';
import { runCommand } from './command.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const HELP = `Usage: npm run docs
Writes what is generated: ${GENERATED_FILES.map((file) => file.path).join(', ')} and ${API_REFERENCE_DIR}/.
Takes no options.
`;

runCommand(async () => {
    // Any argument but --help is a mistake: say so rather than rewrite the files anyway.
    if (parseCommandLine(process.argv.slice(2), process.env, [], {}) === 'help') {
        process.stdout.write(HELP);
        return 0;
    }
    for (const file of GENERATED_FILES) {
        const path = join(ROOT, file.path);
        const current = await readFile(path, 'utf8').catch(() => '');
        await mkdir(dirname(path), { recursive: true });
        await writeFile(path, await file.content(current, ROOT));
    }
    await rm(join(ROOT, API_REFERENCE_DIR), { recursive: true, force: true });
    await writeApiReference(ROOT, join(ROOT, API_REFERENCE_DIR));
    process.stderr.write(
        `dragnet: wrote ${GENERATED_FILES.map((file) => file.path).join(', ')} and ${API_REFERENCE_DIR}/\n`,
    );
    return 0;
});
