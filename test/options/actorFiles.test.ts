/**
 * The actor definition (src/options/actorFiles.ts): `.actor/input_schema.json` lists every option of the
 * table with its default, in the shape Apify's input schema specification asks, and is what
 * `npm run docs` writes — a stale copy fails here — and the input a runner sends from its defaults
 * is read as the command line's defaults.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { actorInputSchema, actorJson, type InputProperty } from '../../src/options/actorFiles.js';
import { parseConfig } from '../../src/options/config.js';
import { OPTIONS } from '../../src/options/options.js';
import { ROOT } from '../helpers/cli.js';

const readJson = async (path: string) =>
    JSON.parse(await readFile(join(ROOT, path), 'utf8')) as Record<string, unknown>;

/** What differs between two input schemas' properties, by option name. */
function propertyDifferences(onDisk: Record<string, unknown>, generated: Record<string, unknown>): string[] {
    const a = (onDisk.properties ?? {}) as Record<string, unknown>;
    const b = (generated.properties ?? {}) as Record<string, unknown>;
    return [...new Set([...Object.keys(a), ...Object.keys(b)])].filter(
        (name) => JSON.stringify(a[name]) !== JSON.stringify(b[name]),
    );
}

describe('the actor definition', () => {
    it('.actor/input_schema.json is what `npm run docs` writes, and a stale copy is told apart', async () => {
        const onDisk = await readJson('.actor/input_schema.json');
        const generated = actorInputSchema();
        assert.deepEqual(
            propertyDifferences(onDisk, generated),
            [],
            '.actor/input_schema.json is stale: run npm run docs',
        );
        assert.deepEqual(onDisk, generated);
        const { maxConcurrency: _, ...withoutOne } = onDisk.properties as Record<string, unknown>;
        const stale = {
            ...onDisk,
            properties: { ...withoutOne, site: { ...(withoutOne.site as object), default: 'books-toscrape' } },
        };
        assert.deepEqual(propertyDifferences(stale, generated).sort(), ['maxConcurrency', 'site']);
    });

    it("lists every option, with its default, in the specification's shape", () => {
        const properties = actorInputSchema().properties as Record<string, InputProperty>;
        assert.deepEqual(Object.keys(properties).sort(), Object.keys(OPTIONS).sort());
        for (const [name, property] of Object.entries(properties)) {
            const spec = OPTIONS[name as keyof typeof OPTIONS];
            assert.ok(property.title && property.description.includes(`--${spec.flag}`), name);
            if (property.type === 'string' || property.type === 'array')
                assert.ok(property.editor, `${name}: a ${property.type} needs an editor`);
            if (property.editor === 'select')
                assert.ok(property.enum?.includes(String(property.default ?? property.enum[0])), name);
            if (spec.default === undefined) assert.equal(property.default, undefined, name);
            else assert.notEqual(property.default, undefined, `${name} has its default`);
            if (property.isSecret)
                assert.ok(
                    property.editor === 'textfield' || property.editor === 'json',
                    `${name}: a secret ${property.type} can only be a textfield or json`,
                );
        }
        const captions = Object.values(properties).flatMap((property) =>
            property.sectionCaption ? [property.sectionCaption] : [],
        );
        assert.ok(captions.length >= 5, captions.join(', '));
    });

    it("a runner's input of every default reads as the command line's defaults", () => {
        const properties = actorInputSchema().properties as Record<string, InputProperty>;
        const defaults = Object.fromEntries(
            Object.entries(properties).flatMap(([name, property]) =>
                property.default === undefined ? [] : [[name, property.default]],
            ),
        );
        assert.deepEqual(parseConfig([], { DRAGNET_INPUT: JSON.stringify(defaults) }), parseConfig([], {}));
    });

    it('.actor/actor.json names the input schema and the Dockerfile that exist, at the package version', async () => {
        const onDisk = await readJson('.actor/actor.json');
        const { version } = await readJson('package.json');
        assert.deepEqual(onDisk, actorJson(String(version)));
        assert.equal(onDisk.actorSpecification, 1);
        assert.ok(existsSync(join(ROOT, '.actor', String(onDisk.input))));
        assert.ok(existsSync(join(ROOT, '.actor', String(onDisk.dockerfile))));
        assert.match(String(onDisk.version), /^\d+\.\d+$/);
    });
});
