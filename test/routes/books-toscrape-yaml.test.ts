/**
 * routes/books-toscrape.yaml, the declarative twin of routes/books-toscrape.ts: on the saved pages
 * of test/fixtures/books.toscrape.com it finds the same links and reads the same record as the
 * TypeScript site, through the crawl's own parse (src/parse/parsePage.ts), and its schema passes
 * and fails the same records.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { before, describe, it } from 'node:test';
import tsSite from '../../routes/books-toscrape.js';
import { parsePage, type PageToParse } from '../../src/parse/parsePage.js';
import type { Renderer, Route, Site } from '../../src/site/site.js';
import { loadSite } from '../../src/site/sites.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/books.toscrape.com/', import.meta.url));
const YAML_FILE = fileURLToPath(new URL('../../routes/books-toscrape.yaml', import.meta.url));
const LIVE = 'https://books.toscrape.com';
const LISTING_PATH = '/index.html';
const BOOK_PATH = '/catalogue/a-light-in-the-attic_1000/index.html';

/** The saved page for a URL path, as a parser is handed it. */
function page(path: string, renderer: Renderer, origin = LIVE): PageToParse {
    const html = readFileSync(`${FIXTURES}${path.replace(/^\//, '')}`, 'utf8');
    return { html, finalUrl: new URL(path, origin).href, renderer, userData: {} };
}

function route(site: Site, label: string): Route {
    const found = site.routes.get(label);
    assert.ok(found, `route ${label} of ${site.moduleUrl ?? 'the TypeScript site'}`);
    return found;
}

describe('routes/books-toscrape.yaml', () => {
    let yamlSite: Site;
    before(async () => {
        yamlSite = await loadSite(YAML_FILE);
    });

    it('is the site books-toscrape, with the same start URLs and routes as the TypeScript one', () => {
        assert.equal(yamlSite.name, 'books-toscrape');
        assert.deepEqual(yamlSite.startUrls, tsSite.startUrls);
        assert.deepEqual([...yamlSite.routes.keys()], [...tsSite.routes.keys()]);
        const listing = route(yamlSite, 'listing');
        assert.equal(listing.extract, undefined, 'navigation only');
        assert.equal(listing.minRecords, 0);
        assert.equal(route(yamlSite, 'book').render, 'auto');
    });

    for (const renderer of ['http', 'browser'] as const) {
        it(`parses both saved pages as the TypeScript site does (${renderer} HTML)`, () => {
            for (const [path, label] of [
                [LISTING_PATH, 'listing'],
                [BOOK_PATH, 'book'],
            ] as const) {
                assert.deepEqual(
                    parsePage(route(yamlSite, label), page(path, renderer)),
                    parsePage(route(tsSite, label), page(path, renderer)),
                    path,
                );
            }
        });
    }

    it('enqueues the 20 product links in page order and the next page', () => {
        const { links } = parsePage(route(yamlSite, 'listing'), page(LISTING_PATH, 'http'));
        const books = links.filter((link) => link.label === 'book').map((link) => link.url);
        assert.equal(books.length, 20);
        assert.equal(books[0], 'catalogue/a-light-in-the-attic_1000/index.html');
        assert.equal(books[19], 'catalogue/its-only-the-himalayas_981/index.html');
        assert.deepEqual(
            links.filter((link) => link.label === 'listing'),
            [{ url: 'catalogue/page-2.html', label: 'listing' }],
        );
    });

    it('reads every value the MANIFEST expects from "A Light in the Attic", and the record passes its schema', () => {
        const { verdict } = parsePage(route(yamlSite, 'book'), page(BOOK_PATH, 'http'));
        assert.deepEqual(verdict.invalid, []);
        assert.equal(verdict.valid.length, 1);
        const { description, ...rest } = verdict.valid[0]!;
        assert.deepEqual(rest, {
            title: 'A Light in the Attic',
            price: 51.77,
            currency: 'GBP',
            availability: 22,
            inStock: true,
            rating: 3,
            upc: 'a897fe39b1053632',
            category: 'Poetry',
            imageUrl: 'https://books.toscrape.com/media/cache/fe/72/fe72f0532301ec28892ae79a629a293c.jpg',
        });
        assert.ok(String(description).startsWith("It's hard to imagine a world without A Light in the Attic."));
        assert.ok(String(description).endsWith('...more'));
    });

    it('resolves the image URL against the page URL, whatever the host', () => {
        const { verdict } = parsePage(route(yamlSite, 'book'), page(BOOK_PATH, 'http', 'http://127.0.0.1:8080'));
        assert.equal(
            verdict.valid[0]?.imageUrl,
            'http://127.0.0.1:8080/media/cache/fe/72/fe72f0532301ec28892ae79a629a293c.jpg',
        );
    });

    it('has a schema exactly as strict as the TypeScript one', () => {
        const good = {
            title: 'A Light in the Attic',
            price: 51.77,
            currency: 'GBP',
            availability: 22,
            inStock: true,
            rating: 3,
            upc: 'a897fe39b1053632',
            category: 'Poetry',
            description: 'A book.',
            imageUrl: 'https://books.toscrape.com/media/x.jpg',
        };
        const { title, price, inStock, upc } = good;
        const records: Record<string, unknown>[] = [
            good,
            { title, price, inStock, upc },
            ...Object.entries({
                title: ['', 5, undefined],
                price: [0, -1, 10_000, 10_000.01, Number.NaN, Number.POSITIVE_INFINITY, '51.77', undefined],
                currency: ['GB', 'GBPX', 'gbp', 3],
                availability: [0, -1, 1.5, '22'],
                inStock: [false, 'true', undefined],
                rating: [0, 1, 5, 6, 2.5],
                upc: ['A897FE39B1053632', 'a897fe39b105363', 'a897fe39b10536321', 'g897fe39b1053632', '', undefined],
                category: ['', 'Poetry'],
                description: ['', 7],
                imageUrl: ['not a url', '/media/x.jpg', 'http://127.0.0.1:8080/media/x.jpg'],
            }).flatMap(([field, values]) => values.map((value) => ({ ...good, [field]: value }))),
        ];
        const tsSchema = route(tsSite, 'book').schema!;
        const yamlSchema = route(yamlSite, 'book').schema!;
        const verdicts = records.map((record) => {
            const expected = tsSchema.safeParse(record).success;
            assert.equal(yamlSchema.safeParse(record).success, expected, JSON.stringify(record));
            return expected;
        });
        assert.ok(verdicts.includes(true) && verdicts.includes(false), 'records both pass and fail');
        // What the book route reads off a page that is not a product page at all.
        const { verdict } = parsePage(route(yamlSite, 'book'), page(LISTING_PATH, 'http'));
        assert.deepEqual(verdict.valid, []);
    });

    it('routes the same URLs to the same labels', () => {
        const paths = [
            '/',
            '/index.html',
            '/catalogue/page-2.html',
            '/catalogue/category/books/poetry_23/index.html',
            '/catalogue/category/books/poetry_23/page-2.html',
            '/catalogue/category/books_1/index.html',
            BOOK_PATH,
            '/media/cache/fe/72/x.jpg',
            '/static/oscar/css/styles.css',
            '/catalogue/a-light-in-the-attic_1000/',
        ];
        for (const origin of [LIVE, 'http://127.0.0.1:8080']) {
            for (const path of paths) {
                const url = new URL(path, origin);
                assert.equal(
                    yamlSite.routeFor(undefined, url)?.label,
                    tsSite.routeFor(undefined, url)?.label,
                    url.href,
                );
            }
        }
    });
});
