import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { load } from 'cheerio';
import { selectAll } from 'css-select';
import { z } from 'zod';

import { compiledSelector, selectUnder } from '../../src/site/selectors.js';
import { defineSite, elementsOf, numberOf, textOf } from '../../src/site/site.js';

const item = z.object({ name: z.string() });

describe('defineSite', () => {
    const site = defineSite({
        name: 'shop-1',
        startUrls: ['http://127.0.0.1/'],
        routes: {
            listing: { match: /\/category\//, enqueue: [{ selector: 'a.product', label: 'product' }] },
            product: {
                match: (url) => url.pathname.startsWith('/products/'),
                schema: item,
                extract: () => ({ name: 'x' }),
            },
            rendered: { schema: item, extract: () => ({ name: 'x' }), render: 'always', minRecords: 5 },
        },
    });

    it('keys routes by label and fills in the label', () => {
        assert.deepEqual([...site.routes.keys()], ['listing', 'product', 'rendered']);
        for (const [label, route] of site.routes) assert.equal(route.label, label);
        assert.equal(site.name, 'shop-1');
        assert.deepEqual(site.startUrls, ['http://127.0.0.1/']);
    });

    it("defaults render to 'auto' and keeps an explicit one", () => {
        assert.equal(site.routes.get('listing')?.render, 'auto');
        assert.equal(site.routes.get('product')?.render, 'auto');
        assert.equal(site.routes.get('rendered')?.render, 'always');
    });

    it('defaults minRecords to 1 with an extractor, 0 without, and keeps an explicit one', () => {
        assert.equal(site.routes.get('product')?.minRecords, 1);
        assert.equal(site.routes.get('listing')?.minRecords, 0);
        assert.equal(site.routes.get('rendered')?.minRecords, 5);
    });

    it('rejects an enqueue rule naming an unknown route', () => {
        assert.throws(
            () =>
                defineSite({
                    name: 'broken',
                    startUrls: [],
                    routes: { listing: { enqueue: [{ selector: 'a', label: 'detail' }] } },
                }),
            /site broken: route "listing" enqueues links to unknown route "detail"/,
        );
    });

    it('rejects a start URL that is not http(s), and a content type that is not a media type', () => {
        for (const url of ['ftp://127.0.0.1/', 'not a url', '127.0.0.1/']) {
            assert.throws(
                () => defineSite({ name: 'shop', startUrls: [url], routes: {} }),
                /site shop: start URL ".*" is not an http:\/\/ or https:\/\/ URL/,
                url,
            );
        }
        assert.doesNotThrow(() => defineSite({ name: 'shop', startUrls: ['HTTPS://127.0.0.1/a'], routes: {} }));
        assert.throws(
            () =>
                defineSite({ name: 'shop', startUrls: [], routes: { page: { contentTypes: ['text/html', 'html'] } } }),
            /site shop: route "page" takes content type "html", which is not a media type \(type\/subtype\)/,
        );
    });

    it('rejects a site name that cannot name a store', () => {
        for (const name of ['My Site', 'Shop', '-shop', 'shop_1', 'shop/1', '']) {
            assert.throws(
                () => defineSite({ name, startUrls: [], routes: {} }),
                /must be lower-case letters, digits and dashes/,
                name,
            );
        }
        assert.doesNotThrow(() => defineSite({ name: '0-shop-2', startUrls: [], routes: {} }));
    });
});

describe('routeFor', () => {
    const site = defineSite({
        name: 'routing',
        startUrls: [],
        routes: {
            // Declared first, so it wins over `anyPage` for /special/ URLs.
            special: { match: (url) => url.pathname.startsWith('/special/') },
            category: { match: /^https?:\/\/[^/]+\/category\// },
            anyPage: { match: /\/[a-z]+\/$/ },
            labelOnly: {},
        },
    });
    const at = (path: string) => new URL(path, 'http://127.0.0.1:8080');

    it('finds a route by its label, whatever the URL', () => {
        assert.equal(site.routeFor('labelOnly', at('/category/x'))?.label, 'labelOnly');
        assert.equal(site.routeFor('category', at('/nothing'))?.label, 'category');
    });

    it('returns undefined for an unknown label rather than falling back to matching', () => {
        assert.equal(site.routeFor('nope', at('/category/x')), undefined);
    });

    it('matches a RegExp against the whole URL', () => {
        assert.equal(site.routeFor(undefined, at('/category/lamps'))?.label, 'category');
        // The pattern is anchored at the scheme, so the path alone would not match it.
        assert.equal(site.routeFor(undefined, at('/x/category/lamps'))?.label, undefined);
    });

    it('matches a function against the parsed URL', () => {
        assert.equal(site.routeFor(undefined, at('/special/7'))?.label, 'special');
    });

    it('tries routes in declaration order: the first match wins', () => {
        assert.equal(site.routeFor(undefined, at('/special/'))?.label, 'special');
        assert.equal(site.routeFor(undefined, at('/other/'))?.label, 'anyPage');
    });

    it('returns undefined when no route matches', () => {
        assert.equal(site.routeFor(undefined, at('/')), undefined);
        assert.equal(site.routeFor(undefined, at('/products/1')), undefined);
    });
});

describe('textOf', () => {
    const $ = load(`
        <h1>  A   Light
            in the <em>Attic</em> </h1>
        <p class="blank">   </p>
        <div class="card"><span class="price">£1</span></div>
        <div class="card"><span class="price">£2</span></div>`);

    it('collapses and trims the text of the first match', () => {
        assert.equal(textOf($, 'h1'), 'A Light in the Attic');
        assert.equal(textOf($, 'span.price'), '£1');
    });

    it('takes the first match in the page of a selector list, and a selector with spaces around it', () => {
        assert.equal(textOf($, 'span.price, h1 em'), 'Attic');
        assert.equal(textOf($, 'h2, div.card span.price'), '£1');
        assert.equal(textOf($, ' div.card  span.price '), '£1');
    });

    it('returns undefined when nothing matched or only blanks', () => {
        assert.equal(textOf($, 'h2'), undefined);
        assert.equal(textOf($, 'p.blank'), undefined);
    });

    it('searches inside a root element', () => {
        const second = $('div.card').get(1);
        assert.ok(second);
        assert.equal(textOf($, 'span.price', second), '£2');
    });

    it(`searches inside a root given as a selection, a list \
of elements or a selector, as $(selector, root) does`, () => {
        assert.equal(textOf($, 'span.price', $('div.card').last()), '£2');
        assert.equal(textOf($, 'span.price', $('div.card').toArray().slice(1)), '£2');
        assert.equal(textOf($, 'span.price', 'div.card:last'), '£2');
        assert.equal(numberOf($, 'span.price', $('div.card').last()), 2);
    });

    it('searches below a root, never the root itself, as $(selector, root) does', () => {
        const cards = $('div.card');
        assert.equal(textOf($, 'div.card', cards), $('div.card', cards).first().text() || undefined);
        assert.equal(textOf($, 'div.card', cards), undefined);
        assert.deepEqual(elementsOf($, 'div.card', cards), []);
    });

    it('reads a page nested deeper than the call stack goes (a recursive walk gives out near 11,000 levels)', () => {
        const depth = 20_000;
        const deep = load(
            `<p class="price">£9</p>${'<div>'.repeat(depth)}<h1 class="title">Deep title</h1>${'</div>'.repeat(depth)}`,
            { _useHtmlParser2: true } as never,
        );
        assert.equal(textOf(deep, 'h1.title'), 'Deep title');
        assert.equal(textOf(deep, 'p.price'), '£9');
        assert.equal(elementsOf(deep, 'h1.title').length, 1);
    });

    it("takes cheerio's own selectors css-select does not know: positional pseudo-classes", () => {
        assert.equal(textOf($, 'span.price:eq(1)'), '£2');
        assert.equal(textOf($, 'div.card:last span'), '£2');
        assert.equal(textOf($, 'div.card:not(:first) span.price'), '£2');
    });
});

describe('elementsOf', () => {
    const $ = load(`
        <nav><a class="menu" href="/m1">M1</a><a class="menu" href="/m2">M2</a></nav>
        <ul><li><a class="item" href="/1">1</a></li><li><a class="item x" href="/2">2</a></li></ul>
        <a class="next" href="/page/2">next</a>`);

    it(`finds what $(selector).toArray() finds, in document order, \
for plain selectors, lists, pseudo-classes and positional ones`, () => {
        for (const selector of [
            'a.item',
            'ul a',
            'a.next, a.menu',
            'li:first-child a',
            'a:not(.x)',
            'a[href^="/page"]',
            'a:contains(M2)',
            'a.item:last',
            'a:eq(2)',
            'a.none',
        ]) {
            assert.deepEqual(elementsOf($, selector), $(selector).toArray(), selector);
        }
        assert.deepEqual(
            elementsOf($, 'a.item', $('li').last()).map((a) => a.attribs.href),
            ['/2'],
        );
    });

    it('searches roots that hold one another once, as $ does', () => {
        const roots = $('ul, li');
        assert.deepEqual(elementsOf($, 'a', roots), $('a', roots).toArray());
        assert.deepEqual(
            elementsOf($, 'a', roots).map((a) => a.attribs.href),
            ['/1', '/2'],
        );
    });

    it('reads a relative selector against the root, as $ does', () => {
        for (const selector of ['> li', ':scope > li', 'li, > li > a']) {
            assert.deepEqual(elementsOf($, selector, $('ul')), $(selector, $('ul')).toArray(), selector);
        }
        assert.equal(elementsOf($, '> li', $('ul')).length, 2);
    });

    it('throws for a selector neither css-select nor cheerio can read, as $ does', () => {
        assert.throws(() => $('a[href'), 'the selector is one $ refuses');
        assert.throws(() => elementsOf($, 'a[href'));
    });
});

describe('selectUnder', () => {
    // A real page saved from books.toscrape.com: ~1,000 nodes, nested lists and forms.
    const html = readFileSync(new URL('../fixtures/books.toscrape.com/index.html', import.meta.url), 'utf8');
    const $ = load(html, { _useHtmlParser2: true } as never);
    const selectors = [
        'a',
        'li',
        'ol.row li article.product_pod h3 a',
        '.price_color',
        'p.star-rating.Three',
        'ul.nav-list > li ul li a',
        'div:has(> form)',
        'a:not([title])',
        'img[src$=".jpg"]',
        'h1, .page-header, li.next a',
        'nothing.here',
    ];

    it("finds on a real page what css-select's selectAll finds, in the same order", () => {
        for (const selector of selectors) {
            const query = compiledSelector(selector);
            assert.ok(query, selector);
            const found = selectUnder(query, $.root().toArray());
            assert.deepEqual(found, selectAll(selector, $.root().toArray()), selector);
            if (selector !== 'nothing.here') assert.ok(found.length > 0, `${selector} finds something on the page`);
        }
        assert.equal(selectUnder(compiledSelector('a')!, $.root().toArray()).length, $('a').length);
    });

    it('stops at its limit, with the first matches in document order', () => {
        const query = compiledSelector('article.product_pod h3 a')!;
        const all = selectUnder(query, $.root().toArray());
        assert.ok(all.length > 3);
        assert.deepEqual(selectUnder(query, $.root().toArray(), 3), all.slice(0, 3));
        assert.deepEqual(selectUnder(query, $.root().toArray(), 0), []);
    });
});
