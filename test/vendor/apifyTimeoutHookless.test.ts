/**
 * package.json makes vendor/apify-timeout-hookless the `@apify/timeout` of Crawlee, so that its
 * timeouts enter no AsyncLocalStorage, which on Node 20 makes every promise of the process pay
 * for async hooks. This fails if an upgrade gives Crawlee the original again, or starts using a
 * part of the package the stand-in does not have, or if a crawl enters an AsyncLocalStorage.
 * What stops a timed-out attempt instead is tested in attemptChecks.test.ts.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type * as HooklessTimeout from '@apify/timeout';
import { startShop, type Shop } from '../../src/demo/shop.js';
import { type CliResult, runCli } from '../helpers/cli.js';

const projectRoot = fileURLToPath(new URL('../../', import.meta.url));
const vendored = fileURLToPath(new URL('../../vendor/apify-timeout-hookless/index.cjs', import.meta.url));
const RECORD_CONTEXTS = fileURLToPath(new URL('./fixtures/recordAsyncContexts.cjs', import.meta.url));
/** The Crawlee packages dragnet runs that require @apify/timeout. */
const DEPENDENTS = [
    '@crawlee/core',
    '@crawlee/basic',
    '@crawlee/http',
    '@crawlee/browser',
    '@crawlee/browser-pool',
    '@crawlee/playwright',
];

function timeoutOf(dependent: string): string {
    const packageJson = createRequire(join(projectRoot, 'node_modules', 'package.json')).resolve(
        `${dependent}/package.json`,
    );
    return realpathSync(createRequire(packageJson).resolve('@apify/timeout'));
}

/** The names Crawlee's compiled modules read from @apify/timeout (`timeout_1.<name>`). */
async function namesCrawleeUses(): Promise<Set<string>> {
    const names = new Set<string>();
    for (const dependent of DEPENDENTS) {
        const dir = join(projectRoot, 'node_modules', dependent);
        for (const file of await readdir(dir, { recursive: true })) {
            if (!file.endsWith('.js')) continue;
            const source = await readFile(join(dir, file), 'utf8');
            if (!source.includes('require("@apify/timeout")')) continue;
            assert.match(
                source,
                /const timeout_1 = require\("@apify\/timeout"\);/,
                `${dependent}/${file} requires @apify/timeout another way`,
            );
            for (const match of source.matchAll(/timeout_1\.(\w+)/g)) names.add(match[1]!);
        }
    }
    return names;
}

describe("Crawlee's @apify/timeout without AsyncLocalStorage", () => {
    it('every Crawlee package dragnet runs resolves the stand-in', () => {
        for (const dependent of DEPENDENTS)
            assert.equal(timeoutOf(dependent), vendored, `${dependent} resolves ${timeoutOf(dependent)}`);
    });

    it('Crawlee uses no part of the package the stand-in does not have', async () => {
        const used = await namesCrawleeUses();
        assert.deepEqual([...used].sort(), ['TimeoutError', 'addTimeoutToPromise', 'tryCancel']);
        const standIn = createRequire(import.meta.url)(vendored) as Record<string, unknown>;
        for (const name of used) assert.equal(typeof standIn[name], 'function', name);
    });

    it(`times out as the original does: the value, the error, \
or the timeout message, and the handler runs on`, async () => {
        const { addTimeoutToPromise, TimeoutError } = createRequire(import.meta.url)(
            vendored,
        ) as typeof HooklessTimeout;
        assert.equal(await addTimeoutToPromise(async () => 'value', 1000, 'late'), 'value');
        await assert.rejects(
            addTimeoutToPromise(async () => Promise.reject(new RangeError('bad')), 1000, 'late'),
            RangeError,
        );
        let finished = false;
        const slow = () =>
            new Promise<void>((resolve) =>
                setTimeout(() => {
                    finished = true;
                    resolve();
                }, 100),
            );
        await assert.rejects(
            addTimeoutToPromise(slow, 20, 'took too long'),
            (error: Error) => error instanceof TimeoutError && error.message === 'took too long',
        );
        const own = new Error('own error');
        await assert.rejects(addTimeoutToPromise(slow, 20, own), (error) => error === own);
        assert.equal(finished, false);
        await new Promise((resolve) => setTimeout(resolve, 150));
        assert.equal(finished, true);
    });

    describe('a crawl', () => {
        let shop: Shop;
        let dir: string;
        let crawl: CliResult;

        before(async () => {
            shop = await startShop({
                seed: 8,
                products: 20,
                categories: 2,
                scriptOnlyRate: 0,
                transientFailureRate: 0,
                notFoundLinks: 0,
            });
            dir = await mkdtemp(join(tmpdir(), 'dragnet-hookless-'));
            crawl = await runCli(
                ['--site', 'demo-shop', '--start-url', `${shop.url}/`, '--storage-dir', join(dir, 'storage')],
                {
                    NODE_OPTIONS: `--require ${RECORD_CONTEXTS}`,
                    RECORD_CONTEXTS_TO: join(dir, 'crawl.contexts'),
                },
            );
        });
        after(async () => {
            await shop?.close();
            await rm(dir, { recursive: true, force: true });
        });

        it('crawls every product and never enters an AsyncLocalStorage', async () => {
            assert.equal(crawl.code, 0, crawl.stderr);
            for (const product of shop.products) assert.equal(shop.requestTimes(product.path).length, 1, product.path);
            assert.equal(await readFile(join(dir, 'crawl.contexts'), 'utf8').catch(() => ''), '');
        });

        it('would have seen one: the same recorder records an entry', async () => {
            const record = join(dir, 'control.contexts');
            const script = "new (require('node:async_hooks').AsyncLocalStorage)().run({}, () => 1)";
            await promisify(execFile)(process.execPath, ['--require', RECORD_CONTEXTS, '-e', script], {
                env: { ...process.env, RECORD_CONTEXTS_TO: record },
            });
            assert.match(await readFile(record, 'utf8'), /^run /);
        });
    });
});
