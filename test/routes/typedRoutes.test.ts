import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT, TSC } from '../helpers/cli.js';

const SITE = join(ROOT, 'test/routes/typedSite.ts');

/** tsc's errors for the typed site with its `@ts-expect-error` directives removed, as `line: message`. */
async function errorsWithoutDirectives(): Promise<string[]> {
    const dir = await mkdtemp(join(ROOT, 'test/routes/.typed-'));
    try {
        const source = await readFile(SITE, 'utf8');
        await writeFile(
            join(dir, 'site.ts'),
            source.replace(/\/\/ @ts-expect-error.*$/gm, '//').replaceAll("'../../src/", "'../../../src/"),
        );
        await writeFile(
            join(dir, 'tsconfig.json'),
            JSON.stringify({ extends: '../../../tsconfig.json', include: ['site.ts'] }),
        );
        const result = await promisify(execFile)(process.execPath, [TSC, '--noEmit', '-p', dir], { cwd: ROOT }).then(
            () => '',
            (error: { stdout: string }) => error.stdout,
        );
        return [...result.matchAll(/site\.ts\((\d+),\d+\): error TS\d+: (.*)/g)].map(
            ([, line, message]) => `${line}: ${message}`,
        );
    } finally {
        await rm(dir, { recursive: true, force: true });
    }
}

test(`defineSite rejects, at compile time, an extractor that breaks its \
own schema: a wrong type and a stray field, nothing else`, async () => {
    const lines = (await readFile(SITE, 'utf8')).split('\n');
    const expected = lines.flatMap((line, index) => (line.trim().startsWith('// @ts-expect-error') ? [index + 2] : []));
    assert.equal(expected.length, 2);
    const errors = await errorsWithoutDirectives();
    assert.deepEqual(
        errors.map((error) => Number(error.split(':')[0])),
        expected,
        errors.join('\n'),
    );
    assert.match(errors[0]!, /price/);
    assert.match(errors[1]!, /titel/);
});
