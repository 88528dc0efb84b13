import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { load, type CheerioAPI } from 'cheerio';
import site from '../../routes/books-toscrape.js';
import type { PageContext, Route } from '../../src/site/site.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/books.toscrape.com/', import.meta.url));
const LIVE = 'https://books.toscrape.com';
const BOOK_PATH = '/catalogue/a-light-in-the-attic_1000/index.html';

function route(label: string): Route {
    const found = site.routes.get(label);
    assert.ok(found, `route ${label}`);
    return found;
}

/** The saved page for a URL path (the tree mirrors URL paths). */
function fixture(path: string): CheerioAPI {
    return load(readFileSync(`${FIXTURES}${path.replace(/^\//, '')}`));
}

function context(path: string, label: string): PageContext {
    return { url: new URL(path, LIVE), label, renderer: 'http', userData: {} };
}

/** The hrefs a route's selector rule for `label` finds on a page. */
function enqueued(from: Route, label: string, $: CheerioAPI): (string | undefined)[] {
    const rule = from.enqueue?.find((r) => r.label === label);
    assert.ok(rule && 'selector' in rule, `a selector rule for ${label}`);
    return $(rule.selector)
        .toArray()
        .map((a) => $(a).attr('href'));
}

// From MANIFEST.md: the product links of listing page 1, in page order.
const PRODUCT_LINKS = [
    'catalogue/a-light-in-the-attic_1000/index.html',
    'catalogue/tipping-the-velvet_999/index.html',
    'catalogue/soumission_998/index.html',
    'catalogue/sharp-objects_997/index.html',
    'catalogue/sapiens-a-brief-history-of-humankind_996/index.html',
    'catalogue/the-requiem-red_995/index.html',
    'catalogue/the-dirty-little-secrets-of-getting-your-dream-job_994/index.html',
    'catalogue/the-coming-woman-a-novel-based-on-the-life-of-the-infamous-feminist-victoria-woodhull_993/index.html',
    'catalogue/the-boys-in-the-boat-nine-americans-and-their-epic-quest-' +
        'for-gold-at-the-1936-berlin-olympics_992/index.html',
    'catalogue/the-black-maria_991/index.html',
    'catalogue/starving-hearts-triangular-trade-trilogy-1_990/index.html',
    'catalogue/shakespeares-sonnets_989/index.html',
    'catalogue/set-me-free_988/index.html',
    'catalogue/scott-pilgrims-precious-little-life-scott-pilgrim-1_987/index.html',
    'catalogue/rip-it-up-and-start-again_986/index.html',
    'catalogue/our-band-could-be-your-life-scenes-from-the-american-indie-underground-1981-1991_985/index.html',
    'catalogue/olio_984/index.html',
    'catalogue/mesaerion-the-best-science-fiction-stories-1800-1849_983/index.html',
    'catalogue/libertarianism-for-beginners_982/index.html',
    'catalogue/its-only-the-himalayas_981/index.html',
];

test('listing: the 20 product links in page order and the next page', () => {
    const listing = route('listing');
    const $ = fixture('/index.html');
    assert.deepEqual(enqueued(listing, 'book', $), PRODUCT_LINKS);
    assert.deepEqual(enqueued(listing, 'listing', $), ['catalogue/page-2.html']);
    assert.equal(listing.extract, undefined, 'navigation only');
    assert.equal(listing.minRecords, 0);
});

test('book: every value the MANIFEST expects from "A Light in the Attic"', () => {
    const book = route('book').extract?.(fixture(BOOK_PATH), context(BOOK_PATH, 'book')) as Record<string, unknown>;
    const { description, ...rest } = book;
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

    const result = route('book').schema?.safeParse(book);
    assert.ok(result?.success, result?.error?.message);
});

test('book: the image URL resolves against the page URL, whatever the host', () => {
    const url = 'http://127.0.0.1:8080/catalogue/a-light-in-the-attic_1000/index.html';
    const book = route('book').extract?.(fixture(BOOK_PATH), { ...context(BOOK_PATH, 'book'), url: new URL(url) });
    assert.equal(
        (book as Record<string, unknown>).imageUrl,
        'http://127.0.0.1:8080/media/cache/fe/72/fe72f0532301ec28892ae79a629a293c.jpg',
    );
});

test('book: the schema rejects a page without title, price or UPC', () => {
    const schema = route('book').schema;
    const good = { title: 'A Light in the Attic', price: 51.77, inStock: true, upc: 'a897fe39b1053632' };
    assert.ok(schema?.safeParse(good).success);
    assert.equal(schema?.safeParse({ ...good, title: '' }).success, false);
    assert.equal(schema?.safeParse({ ...good, price: Number.NaN }).success, false);
    assert.equal(schema?.safeParse({ ...good, upc: '' }).success, false);
    // What the extractor returns for a page that is not a product page at all.
    const empty = route('book').extract?.(fixture('/index.html'), context('/index.html', 'book'));
    assert.equal(schema?.safeParse(empty).success, false);
});

test('routeFor: listing and book URLs', () => {
    const label = (path: string) => site.routeFor(undefined, new URL(path, LIVE))?.label;
    for (const path of [
        '/',
        '/index.html',
        '/catalogue/page-2.html',
        '/catalogue/category/books/poetry_23/index.html',
        '/catalogue/category/books/poetry_23/page-2.html',
        '/catalogue/category/books_1/index.html',
    ]) {
        assert.equal(label(path), 'listing', path);
    }
    assert.equal(label(BOOK_PATH), 'book');
    assert.equal(site.routeFor(undefined, new URL(`http://127.0.0.1:8080${BOOK_PATH}`))?.label, 'book');
    for (const path of [
        '/media/cache/fe/72/x.jpg',
        '/static/oscar/css/styles.css',
        '/catalogue/a-light-in-the-attic_1000/',
    ]) {
        assert.equal(label(path), undefined, path);
    }
});
