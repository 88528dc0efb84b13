/**
 * A declarative site runs through the same pipeline as a TypeScript one: crawling the local copy
 * of books.toscrape.com (test/fixtures/books.toscrape.com, served by test/site/static.ts) with
 * routes/books-toscrape.yaml stores the items routes/books-toscrape.ts stores, whether its pages are
 * parsed in the crawling thread or in a parse worker (which loads the site from its `moduleUrl`),
 * and re-parsing the raw pages it stored gives them back.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import tsSite from '../../../routes/books-toscrape.js';
import { createLogger } from '../../../src/monitor/logger.js';
import { createPageParser } from '../../../src/parse/pageParser.js';
import { parsePage } from '../../../src/parse/parsePage.js';
import { ParseWorkerPool } from '../../../src/parse/parseWorkerPool.js';
import { reparse } from '../../../src/parse/reparse.js';
import { crawl } from '../../../src/run.js';
import type { Site } from '../../../src/site/site.js';
import { loadSite } from '../../../src/site/sites.js';
import { openStorage, storeNames } from '../../../src/store/datasets.js';
import type { StoredItem } from '../../../src/store/records.js';
import type { RunSummary } from '../../../src/vocabulary/report.js';
import { readDataset } from '../../helpers/stores.js';
import { startStaticSite, type StaticSite } from '../static.js';

const YAML_FILE = fileURLToPath(new URL('../../../routes/books-toscrape.yaml', import.meta.url));
const BOOK_PATH = '/catalogue/a-light-in-the-attic_1000/index.html';

interface Run {
    storageDir: string;
    summary: RunSummary;
    /** The stored items as JSON text without their fetch time, sorted. */
    items: string[];
}

async function storedItems(storageDir: string, site: Site): Promise<string[]> {
    const items = await readDataset<StoredItem>(storageDir, storeNames(site.name).items);
    return items.map(({ _fetchedAt, ...item }) => JSON.stringify(item)).sort();
}

describe('a declarative site crawled', () => {
    let server: StaticSite;
    let yamlSite: Site;
    let fromTs: Run;
    /** By parse workers: 0 parses in the crawling thread. */
    const fromYaml = new Map<number, Run>();

    /** A crawl of the local copy from its first listing page (its other books and pages are 404s). */
    async function crawlWith(site: Site, parseWorkers: number): Promise<Run> {
        const storageDir = await mkdtemp(join(tmpdir(), 'dragnet-declarative-'));
        const { summary } = await crawl({
            site,
            startUrls: [`${server.url}/index.html`],
            storageDir,
            parseWorkers,
            chromiumPath: undefined,
            progressIntervalSecs: 3600,
            log: createLogger({ level: 'silent' }),
        });
        return { storageDir, summary, items: await storedItems(storageDir, site) };
    }

    before(async () => {
        server = await startStaticSite('test/fixtures/books.toscrape.com');
        yamlSite = await loadSite(YAML_FILE);
        fromTs = await crawlWith(tsSite, 0);
        for (const parseWorkers of [0, 1]) fromYaml.set(parseWorkers, await crawlWith(yamlSite, parseWorkers));
    });

    after(async () => {
        await server?.close();
        for (const run of [fromTs, ...fromYaml.values()])
            if (run) await rm(run.storageDir, { recursive: true, force: true });
    });

    it('stores what the TypeScript site stores, parsed in the crawling thread and in a parse worker', () => {
        assert.equal(fromTs.items.length, 1);
        assert.equal(JSON.parse(fromTs.items[0]!).upc, 'a897fe39b1053632');
        assert.equal(fromTs.summary.requests.deadLettered, 20, 'the 19 other books and page 2 are not in the copy');
        for (const [parseWorkers, run] of fromYaml) {
            assert.deepEqual(run.items, fromTs.items, `parse workers: ${parseWorkers}`);
            assert.deepEqual(
                { requests: run.summary.requests, items: run.summary.items },
                { requests: fromTs.summary.requests, items: fromTs.summary.items },
                `parse workers: ${parseWorkers}`,
            );
        }
    });

    it('parses in a worker that loads the site from its module URL, as in the crawling thread', async () => {
        assert.match(yamlSite.moduleUrl ?? '', /siteModule\.ts\?file=/);
        const parser = createPageParser(yamlSite, 1);
        try {
            assert.ok(parser instanceof ParseWorkerPool);
            const book = yamlSite.routes.get('book')!;
            const html = readFileSync(`test/fixtures/books.toscrape.com${BOOK_PATH}`, 'utf8');
            const page = { html, finalUrl: `${server.url}${BOOK_PATH}`, renderer: 'http' as const, userData: {} };
            assert.deepEqual(await parser.parse(book, page), parsePage(book, page));
        } finally {
            await parser.close();
        }
    });

    it('re-parses the raw pages it stored into the same items', async () => {
        const crawled = fromYaml.get(0)!;
        const { config, storage } = openStorage(crawled.storageDir);
        try {
            const result = await reparse({ site: yamlSite, storageDir: crawled.storageDir, config });
            assert.deepEqual(
                {
                    pages: result.pages,
                    unparsable: result.unparsable,
                    items: result.items,
                    changed: result.changedByField,
                },
                { pages: 1, unparsable: 0, items: { before: 1, after: 1 }, changed: {} },
            );
        } finally {
            await storage.close();
        }
        assert.deepEqual(await storedItems(crawled.storageDir, yamlSite), crawled.items);
    });
});
