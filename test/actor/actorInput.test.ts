/**
 * The actor's input (`Actor.getInput()`, src/runtime/actor.ts) as the run's input: parseConfig takes
 * it from elsewhere than a file, reads it by the options' schemas under flags and variables, in
 * place of the storage dir's INPUT.json, and names it in its messages. The defaults of the
 * generated input schema (.actor/input_schema.json), which the platform and the SDK's local mode
 * add to an input, read as the options' own defaults.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Config, parseConfig } from '../../src/options/config.js';
import { inputFileIn } from '../../src/options/runInput.js';
import { ROOT } from '../helpers/cli.js';

const fromActor = (value: unknown) => ({ source: 'Actor.getInput()', value });

describe("the actor's input as the run's input", () => {
    let storageDir: string;
    const config = (argv: string[], env: NodeJS.ProcessEnv, value: unknown) =>
        parseConfig(['--storage-dir', storageDir, ...argv], env, fromActor(value)) as Config;

    before(async () => {
        storageDir = await mkdtemp(join(tmpdir(), 'dragnet-actor-input-'));
        await mkdir(join(storageDir, 'key_value_stores', 'default'), { recursive: true });
        await writeFile(inputFileIn(storageDir), JSON.stringify({ maxConcurrency: 5, maxAttempts: 9 }));
    });
    after(() => rm(storageDir, { recursive: true, force: true }));

    it("is read by the options' schemas, under flags and variables, in place of the storage dir's INPUT.json", () => {
        const input = {
            startUrls: [{ url: 'http://127.0.0.1:8080/' }],
            maxConcurrency: 7,
            proxyTiers: [{ name: 'datacenter', proxyUrls: ['http://127.0.0.1:8001'] }],
        };
        const read = config([], {}, input);
        assert.deepEqual(read.startUrls, ['http://127.0.0.1:8080/']);
        assert.equal(read.maxConcurrency, 7);
        assert.deepEqual(
            read.proxyTiers.map((tier) => tier.name),
            ['datacenter'],
        );
        assert.equal(
            read.maxAttempts,
            (parseConfig([], {}) as Config).maxAttempts,
            "nothing from INPUT.json: the actor's input takes its place",
        );
        assert.equal(config(['--max-concurrency', '3'], {}, input).maxConcurrency, 3);
        assert.equal(config([], { DRAGNET_MAX_CONCURRENCY: '4' }, input).maxConcurrency, 4);
        assert.equal(
            config([], { DRAGNET_INPUT: '{"maxConcurrency": 6}' }, input).maxConcurrency,
            6,
            'DRAGNET_INPUT, a variable, over it',
        );
    });

    it('may set the storage dir, as --input may', () => {
        assert.equal((parseConfig([], {}, fromActor({ storageDir: '/elsewhere' })) as Config).storageDir, '/elsewhere');
    });

    it("when the actor has none, leaves the storage dir's INPUT.json to be read", () => {
        assert.equal(config([], {}, null).maxConcurrency, 5);
        assert.equal(config([], {}, undefined).maxAttempts, 9);
    });

    it(`is refused in one line naming Actor.getInput() for \
an unknown key, a bad value, or what is not an object`, () => {
        assert.throws(() => config([], {}, { maxConcurency: 5 }), {
            message: 'Actor.getInput(): unknown key "maxConcurency"',
        });
        assert.throws(() => config([], {}, { maxConcurrency: 'many' }), {
            message: 'Actor.getInput(): maxConcurrency must be a number',
        });
        assert.throws(() => config([], {}, 'a text record'), {
            message: 'Actor.getInput(): must be a JSON object of options',
        });
        assert.throws(() => config([], {}, ['demo-shop']), {
            message: 'Actor.getInput(): must be a JSON object of options',
        });
    });

    it("takes the generated input schema's defaults as the options' own", async () => {
        const schema = JSON.parse(await readFile(join(ROOT, '.actor', 'input_schema.json'), 'utf8')) as {
            properties: Record<string, { default?: unknown }>;
        };
        const defaults = Object.fromEntries(
            Object.entries(schema.properties).flatMap(([name, field]) =>
                field.default === undefined ? [] : [[name, field.default]],
            ),
        );
        assert.ok(Object.keys(defaults).length > 10, 'the schema has defaults');
        assert.deepEqual(parseConfig([], {}, fromActor(defaults)), parseConfig([], {}));
    });
});
