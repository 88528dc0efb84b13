/**
 * Reparse goes through the crawl's own parse (src/parse/parsePage.ts), so re-parsing the raw pages
 * a crawl stored, with the same extractors, gives back exactly the items the crawl stored, byte for
 * byte: for pages fetched over HTTP (parsed with htmlparser2, as the crawl parses them) and for
 * pages rendered in the browser (their serialized DOM, parsed as the browser stage parses it).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import booksSite from '../../routes/books-toscrape.js';
import demoSite from '../../routes/demo-shop.js';
import { findChromium } from '../../src/fetch/browser/chromium.js';
import { createLogger } from '../../src/monitor/logger.js';
import { reparse } from '../../src/parse/reparse.js';
import { crawl } from '../../src/run.js';
import { defineSite, textOf, type Site } from '../../src/site/site.js';
import { openStorage, storeNames } from '../../src/store/datasets.js';
import type { StoredItem } from '../../src/store/records.js';
import { crawlShop } from '../helpers/crawlShop.js';
import { readDataset } from '../helpers/stores.js';
import { withExtractor } from '../helpers/withExtractor.js';
import { startStaticSite, type StaticSite } from '../site/static.js';

const chromiumPath = findChromium();

/** The dataset's items as their JSON text, sorted: the crawl and reparse store them in different orders. */
async function itemsAsStored(storageDir: string, site: Site): Promise<string[]> {
    return (await readDataset<StoredItem>(storageDir, storeNames(site.name).items))
        .map((item) => JSON.stringify(item))
        .sort();
}

/** Re-parses the site's raw pages in `storageDir` with `site`'s extractors. */
async function reparseStored(storageDir: string, site: Site) {
    const { config, storage } = openStorage(storageDir);
    try {
        return await reparse({ site, storageDir, config });
    } finally {
        await storage.close();
    }
}

describe('reparse of stored raw pages', () => {
    describe('fetched over HTTP', () => {
        // Written against the HTML as served: the book's UPC is the first row of a table with no
        // <tbody>. htmlparser2, which the crawl's HTTP stage parses with, keeps the rows where the
        // page has them; parse5 (cheerio's default) inserts the <tbody> a browser would, and
        // `table > tr` then finds nothing.
        const site = withExtractor(booksSite, 'book', (original) => ($, page) => ({
            ...(original($, page) as object),
            upc: textOf($, 'td', $('table.table-striped > tr').first()),
        }));
        let server: StaticSite;
        let storageDir: string;
        let crawled: string[];

        before(async () => {
            server = await startStaticSite('test/fixtures/books.toscrape.com');
            storageDir = await mkdtemp(join(tmpdir(), 'dragnet-reparse-http-'));
            await crawl({
                site,
                startUrls: [`${server.url}/catalogue/a-light-in-the-attic_1000/index.html`],
                storageDir,
                chromiumPath: undefined,
                progressIntervalSecs: 3600,
                log: createLogger({ level: 'silent' }),
            });
            crawled = await itemsAsStored(storageDir, site);
        });

        after(async () => {
            await server?.close();
            await rm(storageDir, { recursive: true, force: true });
        });

        it("reproduces the crawl's items, even where the HTML parsers disagree", async () => {
            assert.equal(crawled.length, 1);
            assert.equal(
                JSON.parse(crawled[0]!).upc,
                'a897fe39b1053632',
                'the crawl read the UPC from the rows as served',
            );
            const result = await reparseStored(storageDir, site);
            assert.deepEqual(await itemsAsStored(storageDir, site), crawled);
            assert.deepEqual(
                { needBrowser: result.needBrowser, unparsable: result.unparsable, changed: result.changedByField },
                { needBrowser: 0, unparsable: 0, changed: {} },
            );
        });

        it('fails a page whose link rule throws, as the crawl would, not the whole reparse', async () => {
            const throwing = defineSite({
                ...site,
                routes: Object.fromEntries(
                    [...site.routes].map(([label, route]) => [
                        label,
                        {
                            ...route,
                            enqueue: [
                                {
                                    label,
                                    links: () => {
                                        throw new Error('a broken rule');
                                    },
                                },
                            ],
                        },
                    ]),
                ),
            });
            const result = await reparseStored(storageDir, throwing);
            assert.deepEqual(
                { pages: result.pages, unparsable: result.unparsable, after: result.items.after },
                { pages: 0, unparsable: 1, after: 0 },
            );
        });
    });

    it('reproduces the items of pages rendered in the browser and of those fetched beside them', {
        skip: chromiumPath ? false : 'no Chromium found',
    }, async () => {
        const run = await crawlShop(
            { seed: 5, products: 40, scriptOnlyRate: 0.25, transientFailureRate: 0, notFoundLinks: 0 },
            { chromiumPath },
        );
        try {
            const crawled = await itemsAsStored(run.storageDir, demoSite);
            const renderers = new Set(crawled.map((item) => (JSON.parse(item) as StoredItem)._renderer));
            assert.deepEqual([...renderers].sort(), ['browser', 'http'], 'the crawl stored items of both renderers');
            assert.equal(crawled.length, run.shop.products.length);

            const result = await reparseStored(run.storageDir, demoSite);
            assert.deepEqual(await itemsAsStored(run.storageDir, demoSite), crawled);
            assert.deepEqual(result.changedByField, {});
        } finally {
            await run.close();
        }
    });
});
