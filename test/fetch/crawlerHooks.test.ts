/**
 * The HTTP stage sends with Crawlee's `_requestFunction` less its import of got-scraping
 * (src/fetch/crawlerHooks.ts): a crawl never loads got-scraping, and an upgrade that changes the
 * method this copies, or renames one the stage's crawler overrides or calls, fails here.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { HttpCrawler } from '@crawlee/http';
import { startShop, type Shop } from '../../src/demo/shop.js';
import { type CliResult, runCli } from '../helpers/cli.js';

const RECORD_IMPORTS = new URL('./fixtures/recordImports.mjs', import.meta.url).href;

/** Crawlee 3.18.1's `HttpCrawler.prototype._requestFunction`, its whitespace collapsed, hashed. */
const COPIED_REQUEST_FUNCTION_SHA256 = '29a4ac0bfbd24ec7ed089f2c9e7b6583337092c0cafde4a9666cd3009a9212a3';

async function importsRecorded(file: string): Promise<string[]> {
    const text = await readFile(file, 'utf8').catch(() => '');
    return text.split('\n').filter(Boolean);
}

describe('the HTTP stage without got-scraping', () => {
    let shop: Shop;
    let dir: string;
    let crawl: CliResult;

    before(async () => {
        shop = await startShop({
            seed: 5,
            products: 20,
            categories: 2,
            scriptOnlyRate: 0,
            transientFailureRate: 0,
            notFoundLinks: 0,
        });
        dir = await mkdtemp(join(tmpdir(), 'dragnet-no-got-'));
        crawl = await runCli(
            ['--site', 'demo-shop', '--start-url', `${shop.url}/`, '--storage-dir', join(dir, 'storage')],
            {
                NODE_OPTIONS: `--import ${RECORD_IMPORTS}`,
                RECORD_IMPORTS_OF: 'got-scraping',
                RECORD_IMPORTS_TO: join(dir, 'crawl.imports'),
            },
        );
    });
    after(async () => {
        await shop?.close();
        await rm(dir, { recursive: true, force: true });
    });

    it('crawls every product and never imports got-scraping', async () => {
        assert.equal(crawl.code, 0, crawl.stderr);
        for (const product of shop.products) assert.equal(shop.requestTimes(product.path).length, 1, product.path);
        assert.deepEqual(await importsRecorded(join(dir, 'crawl.imports')), []);
    });

    it('would have seen the import: the same recorder records one', async () => {
        const record = join(dir, 'control.imports');
        await promisify(execFile)(
            process.execPath,
            ['--import', RECORD_IMPORTS, '--input-type=module', '-e', "await import('got-scraping')"],
            {
                env: { ...process.env, RECORD_IMPORTS_OF: 'got-scraping', RECORD_IMPORTS_TO: record },
            },
        );
        assert.equal((await importsRecorded(record)).length, 1);
    });

    it(`overrides and calls only methods Crawlee's HttpCrawler has, \
so an upgrade that renames one cannot leave an override dead`, () => {
        const names = [
            '_requestFunction',
            '_abortDownloadOfBody',
            '_parseResponse',
            '_runRequestHandler',
            '_requestFunctionErrorHandler',
            '_canRequestBeRetried',
            '_getRequestOptions',
            'isProxyError',
            '_getMessageFromError',
            '_applyCookies',
        ];
        for (const name of names)
            assert.equal(typeof Reflect.get(HttpCrawler.prototype, name), 'function', `HttpCrawler.prototype.${name}`);
    });

    it("copies Crawlee's _requestFunction as it is in this version", () => {
        const source = String(Reflect.get(HttpCrawler.prototype, '_requestFunction')).replace(/\s+/g, ' ');
        const sha256 = createHash('sha256').update(source).digest('hex');
        assert.equal(
            sha256,
            COPIED_REQUEST_FUNCTION_SHA256,
            "Crawlee's HttpCrawler._requestFunction changed: compare it with " +
                'HttpCrawlerReadingBodies._requestFunction (src/fetch/crawlerHooks.ts), mend the copy, then this hash',
        );
    });
});
