/**
 * A run's input as an actor takes it (src/options/runInput.ts): a JSON object of options by name from
 * --input, DRAGNET_INPUT or the storage dir's INPUT.json, under flags and variables, read by the
 * options' own schemas — and the CLI run with nothing but an INPUT.json in a fresh storage dir.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseConfig, type Config } from '../../src/options/config.js';
import { ConfigError } from '../../src/options/configError.js';
import { type Shop, startShop } from '../../src/demo/shop.js';
import { inputFileIn } from '../../src/options/runInput.js';
import { assertOneLineError, runScript } from '../helpers/cli.js';

describe('the run input', () => {
    let dir: string;
    const config = (argv: string[], env: NodeJS.ProcessEnv = {}) => parseConfig(argv, env) as Config;
    const inputFile = async (values: unknown, name = 'input.json') => {
        const file = join(dir, name);
        await writeFile(file, JSON.stringify(values));
        return file;
    };

    before(async () => {
        dir = await mkdtemp(join(tmpdir(), 'dragnet-input-'));
    });
    after(() => rm(dir, { recursive: true, force: true }));

    it("reads options by name from --input, each through its option's schema", async () => {
        const file = await inputFile({
            site: 'books-toscrape',
            startUrls: [{ url: 'https://books.toscrape.com/catalogue/page-2.html' }, 'https://books.toscrape.com/'],
            maxConcurrency: 7,
            adaptiveConcurrency: false,
            allowPrivateNetwork: true,
            proxyTiers: [
                { name: 'datacenter', proxyUrls: ['http://127.0.0.1:8001', 'http://127.0.0.1:8002'] },
                'home=direct',
            ],
            maxRequests: null,
        });
        const read = config(['--input', file]);
        assert.equal(read.site, 'books-toscrape');
        assert.deepEqual(read.startUrls, [
            'https://books.toscrape.com/catalogue/page-2.html',
            'https://books.toscrape.com/',
        ]);
        assert.equal(read.maxConcurrency, 7);
        assert.equal(read.adaptiveConcurrency, false);
        assert.equal(read.allowPrivateNetwork, true);
        assert.deepEqual(
            read.proxyTiers.map((tier) => tier.name),
            ['datacenter', 'home'],
        );
        assert.equal(read.maxRequests, undefined);
        assert.equal(read.maxAttempts, config([]).maxAttempts, 'what the input leaves out keeps its default');
    });

    it('lets flags and variables override it', async () => {
        const file = await inputFile({ maxConcurrency: 7, site: 'books-toscrape' });
        assert.equal(config(['--input', file, '--max-concurrency', '3']).maxConcurrency, 3);
        assert.equal(config(['--input', file], { DRAGNET_MAX_CONCURRENCY: '4' }).maxConcurrency, 4);
        assert.equal(
            config(['--input', file], { DRAGNET_MAX_CONCURRENCY: '' }).maxConcurrency,
            7,
            'an empty variable is unset',
        );
    });

    it('takes DRAGNET_INPUT, else the INPUT.json of the storage dir, --input first of all', async () => {
        const storageDir = join(dir, 'storage');
        await mkdir(join(storageDir, 'key_value_stores', 'default'), { recursive: true });
        await writeFile(inputFileIn(storageDir), JSON.stringify({ maxConcurrency: 5 }));
        assert.equal(config(['--storage-dir', storageDir]).maxConcurrency, 5);
        assert.equal(config([], { DRAGNET_STORAGE_DIR: storageDir }).maxConcurrency, 5);
        assert.equal(
            config(['--storage-dir', storageDir], { DRAGNET_INPUT: '{"maxConcurrency": 6}' }).maxConcurrency,
            6,
        );
        assert.equal(
            config(['--storage-dir', storageDir, '--input', await inputFile({ maxConcurrency: 8 })], {
                DRAGNET_INPUT: '{"maxConcurrency": 6}',
            }).maxConcurrency,
            8,
        );
        assert.equal(
            config(['--input', await inputFile({ storageDir })]).storageDir,
            storageDir,
            '--input may choose the storage dir',
        );
        await writeFile(inputFileIn(storageDir), JSON.stringify({ storageDir: '/elsewhere' }));
        assert.throws(
            () => config(['--storage-dir', storageDir]),
            /INPUT\.json: storageDir cannot be set by the input inside the storage dir/,
        );
    });

    it('refuses, in one line naming the key, an unknown key, a bad value, and what is not a JSON object', async () => {
        const refused = (values: unknown, pattern: RegExp) =>
            assert.throws(
                () => config([], { DRAGNET_INPUT: typeof values === 'string' ? values : JSON.stringify(values) }),
                (error: unknown) =>
                    error instanceof ConfigError && pattern.test(error.message) && !error.message.includes('\n'),
            );
        refused({ maxConcurency: 5 }, /^DRAGNET_INPUT: unknown key "maxConcurency"$/);
        refused({ 'max-concurrency': 5 }, /unknown key "max-concurrency" \(did you mean "maxConcurrency"\?\)/);
        refused({ maxConcurrency: 'many' }, /^DRAGNET_INPUT: maxConcurrency must be a number$/);
        refused({ adaptiveConcurrency: 'sometimes' }, /^DRAGNET_INPUT: adaptiveConcurrency must be on or off$/);
        refused({ startUrls: [{ page: 1 }] }, /^DRAGNET_INPUT: startUrls /);
        refused('{"site": ', /^DRAGNET_INPUT: not JSON/);
        refused(['demo-shop'], /^DRAGNET_INPUT: must be a JSON object of options$/);
        assert.throws(
            () => config(['--input', join(dir, 'missing.json')]),
            /--input .*missing\.json: cannot read it \(ENOENT\)/,
        );
    });

    describe('the CLI with only an INPUT.json in a fresh storage dir', () => {
        let shop: Shop;
        let workDir: string;

        before(async () => {
            // No dead links: which 12 requests --max-requests admits depends on the order links are found, and a 404
            // among them would leave 11 succeeded (1 in ~6 runs did).
            shop = await startShop({ seed: 5, products: 30, scriptOnlyRate: 0, notFoundLinks: 0 });
            workDir = await mkdtemp(join(tmpdir(), 'dragnet-input-cli-'));
            await mkdir(join(workDir, 'storage', 'key_value_stores', 'default'), { recursive: true });
        });
        after(async () => {
            await shop.close();
            await rm(workDir, { recursive: true, force: true });
        });

        it('runs the crawl the input describes', async () => {
            const input = {
                startUrls: [`${shop.url}/`],
                allowPrivateNetwork: true,
                maxConcurrency: 4,
                maxRequests: 12,
                summaryJson: 'storage/summary.json',
            };
            await writeFile(inputFileIn(join(workDir, 'storage')), JSON.stringify(input));
            const run = await runScript('src/main.ts', [], {}, workDir);
            assert.equal(run.code, 0, run.stderr);
            const summary = JSON.parse(await readFile(join(workDir, 'storage', 'summary.json'), 'utf8'));
            assert.equal(summary.site, 'demo-shop');
            assert.equal(summary.requests.total, 12, 'maxRequests from the input');
            // An alias whose product is past the budget is dead-lettered as such; nothing else fails.
            assert.equal(summary.requests.succeeded + summary.requests.deadLettered, 12);
            assert.deepEqual(
                Object.keys(summary.deadLetterByReason).filter((reason) => reason !== 'over-budget-redirect'),
                [],
            );
            assert.ok(summary.items.stored > 0);
        });

        it('a bad input is a one-line error naming the key, exit 2', async () => {
            await writeFile(
                inputFileIn(join(workDir, 'storage')),
                JSON.stringify({ startUrls: [`${shop.url}/`], maxConcurency: 4 }),
            );
            assertOneLineError(
                await runScript('src/main.ts', [], {}, workDir),
                2,
                /storage\/key_value_stores\/default\/INPUT\.json: unknown key "maxConcurency"$/,
            );
        });
    });
});
