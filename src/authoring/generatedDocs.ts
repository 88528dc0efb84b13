/**
 * Every file, or block of a file, that is made rather than written: from the option table (the
 * configuration page's table, `.env.example`, the actor definition), from the benchmarks' results
 * (the benchmarks page's tables, the README's headline figures) and from the public API's TSDoc
 * (docs/api/, apiReference.ts). `npm run docs` writes them all (commands/docs.ts); the docs test
 * fails when one is not what its generator makes today.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { actorInputSchema, actorJson } from '../options/actorFiles.js';
import { envExample, withOptionTable } from '../options/optionDocs.js';
import { withHeadline } from './benchmarkHeadline.js';
import { updateBenchmarksPage } from './benchmarkPage.js';
import { readResults } from './benchmarkResults.js';

export interface GeneratedFile {
    /** Relative to the project root. */
    path: string;
    /**
     * What the file should hold, given what it holds now: a whole file, or the file with its generated
     * blocks remade.
     */
    content(current: string, root: string): Promise<string> | string;
}

const json = (value: unknown) => `${JSON.stringify(value, null, 4)}\n`;

async function packageVersion(root: string): Promise<string> {
    return (JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string }).version;
}

export const GENERATED_FILES: readonly GeneratedFile[] = [
    { path: '.env.example', content: () => envExample() },
    { path: 'docs/configuration.md', content: (current) => withOptionTable(current, 'docs/configuration.md') },
    { path: '.actor/actor.json', content: async (_, root) => json(actorJson(await packageVersion(root))) },
    { path: '.actor/input_schema.json', content: () => json(actorInputSchema()) },
    {
        path: 'docs/benchmarks.md',
        content: async (current, root) => updateBenchmarksPage(current, await readResults(root)),
    },
    { path: 'README.md', content: async (current, root) => withHeadline(current, await readResults(root)) },
];
