/**
 * Parsing pages: what parsePage reads out of the HTML, and the parse workers giving the same
 * answers as the crawling thread, surviving a worker that dies, and refusing work once closed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { createPageParser, type PageParser } from '../../src/parse/pageParser.js';
import { parsePage, type PageToParse } from '../../src/parse/parsePage.js';
import { loadSite } from '../../src/site/sites.js';
import { startShop } from '../../src/demo/shop.js';

const page = (html: string, renderer: PageToParse['renderer'] = 'http'): PageToParse => ({
    html,
    finalUrl: 'http://127.0.0.1:9/dir/page',
    renderer,
    userData: {},
});

describe('parsePage', () => {
    it(`parses the HTTP stage's HTML with htmlparser2, as Crawlee's \
CheerioCrawler does, and a browser's DOM with cheerio's default`, async () => {
        const site = await loadSite('demo-shop');
        const route = site.routes.get('category')!;
        // A fragment: parse5 wraps it in <html><body> and moves the
        // link out of the <table>; htmlparser2 keeps it as written.
        const html = '<table><a class="product-link" href="a">A</a></table><a class="next" href="/x?page=2">next</a>';
        const http = parsePage(route, page(html, 'http'));
        assert.deepEqual(http.links, [
            { url: 'a', label: 'product' },
            { url: '/x?page=2', label: 'category' },
        ]);
        assert.equal(http.base, 'http://127.0.0.1:9/dir/page');
        assert.equal(
            parsePage(
                site.routes.get('product')!,
                page('<html><head><base href="/b/"><link rel="canonical" href="/c?utm_source=x"></head></html>'),
            ).canonical,
            'http://127.0.0.1:9/c',
        );
    });
});

describe('parse workers', () => {
    it('give the same records, links and URLs as parsing in the crawling thread', async (t) => {
        const shop = await startShop({ seed: 3, products: 40, scriptOnlyRate: 0, transientFailureRate: 0 });
        const site = await loadSite('demo-shop');
        const workers = createPageParser(site, 2);
        const inThread = createPageParser(site, 0);
        t.after(async () => {
            await workers.close();
            await shop.close();
        });
        const pages = await Promise.all(
            shop.products.slice(0, 10).map(async (product) => ({
                ...page(await (await fetch(`${shop.url}${product.path}`)).text()),
                finalUrl: `${shop.url}${product.path}`,
            })),
        );
        const route = site.routes.get('product')!;
        const fromWorkers = await Promise.all(pages.map((p) => workers.parse(route, p)));
        assert.deepEqual(fromWorkers, await Promise.all(pages.map((p) => inThread.parse(route, p))));
        assert.deepEqual(
            fromWorkers.map((parsed) => parsed.verdict.valid[0]?.title),
            shop.products.slice(0, 10).map((product) => product.title),
        );
        assert.ok(fromWorkers.every((parsed) => parsed.links.length > 0 && parsed.verdict.invalid.length === 0));
    });

    it('fail the pages of a worker that dies, start a new one, and refuse work once closed', async (t) => {
        const site = await loadSite(fileURLToPath(new URL('fixtures/exitingSite.ts', import.meta.url)));
        const parser: PageParser = createPageParser(site, 1);
        t.after(() => parser.close());
        const route = site.routes.get('page')!;
        const at = (query: string): PageToParse => ({
            ...page('<h1>hello</h1>'),
            finalUrl: `http://127.0.0.1:9/${query}`,
        });

        assert.equal((await parser.parse(route, at(''))).verdict.valid[0]?.title, 'hello');
        await assert.rejects(parser.parse(route, at('?exit')), /parse worker exited with code 1/);
        assert.equal(
            (await parser.parse(route, at('?again'))).verdict.valid[0]?.title,
            'hello',
            'a new worker took its place',
        );

        await parser.close();
        await assert.rejects(parser.parse(route, at('')), /closed/);
    });
});
