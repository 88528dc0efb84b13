/**
 * The demo-shop routes against pages fetched from the fixture shop (src/demo/shop.ts), whose
 * catalog is the ground truth for what each product page should yield.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { load, type CheerioAPI } from 'cheerio';
import site from '../../routes/demo-shop.js';
import type { Route } from '../../src/site/site.js';
import { startShop, type ProductTruth, type Shop } from '../../src/demo/shop.js';

let shop: Shop;

before(async () => {
    shop = await startShop({
        products: 40,
        categories: 2,
        productsPerPage: 8,
        scriptOnlyRate: 0.25,
        transientFailureRate: 0,
    });
});
after(() => shop.close());

function route(label: string): Route {
    const found = site.routes.get(label);
    assert.ok(found, `route ${label}`);
    return found;
}

async function fetchPage(path: string): Promise<CheerioAPI> {
    const response = await fetch(shop.url + path);
    assert.equal(response.status, 200, path);
    return load(await response.text());
}

async function extractProduct(product: ProductTruth): Promise<unknown> {
    const $ = await fetchPage(product.path);
    const url = new URL(product.path, shop.url);
    return route('product').extract!($, { url, label: 'product', renderer: 'http', userData: {} });
}

/** The fields the product extractor promises, as the shop's truth has them. */
function expectedRecord(product: ProductTruth) {
    const { title, price, currency, sku, availability, stock, description, category } = product;
    return { title, price, currency, sku, availability, stock, description, category };
}

test('a normal product page yields a record that passes the schema with the true values', async () => {
    const plain = shop.products.filter((p) => !p.scriptOnly);
    assert.ok(
        plain.some((p) => p.availability === 'out_of_stock'),
        'the catalog has an out-of-stock product to check',
    );
    for (const product of plain) {
        const record = await extractProduct(product);
        const parsed = route('product').schema!.safeParse(record);
        assert.ok(parsed.success, `${product.path}: ${parsed.error?.message}`);
        assert.deepEqual(record, expectedRecord(product));
    }
});

test('a script-only product page fails the schema on title and price, and only there', async () => {
    const scripted = shop.products.filter((p) => p.scriptOnly);
    assert.equal(scripted.length, 10);
    for (const product of scripted) {
        const parsed = route('product').schema!.safeParse(await extractProduct(product));
        assert.ok(!parsed.success, product.path);
        assert.deepEqual(parsed.error.issues.map((issue) => issue.path.join('.')).sort(), ['price', 'title']);
    }
});

test('routeFor picks the route by URL', () => {
    const routeAt = (path: string) => site.routeFor(undefined, new URL(path, 'http://127.0.0.1:8080'))?.label;
    assert.equal(routeAt('/'), 'home');
    assert.equal(routeAt('/?utm_source=x'), 'home');
    assert.equal(routeAt('/category/kitchen'), 'category');
    assert.equal(routeAt('/category/kitchen?page=3'), 'category');
    assert.equal(routeAt('/products/rustic-steel-lamp-42'), 'product');
    assert.equal(routeAt('/products/rustic-steel-lamp-42?utm_source=listing'), 'product');
    assert.equal(routeAt('/admin/'), undefined);
    assert.equal(site.routeFor('product', new URL('http://127.0.0.1:8080/p/3'))?.label, 'product');
});

test('the enqueue selectors find the links each page type leads to', async () => {
    const links = ($: CheerioAPI, label: string, to: string) => {
        const rules = route(label).enqueue!.filter((rule) => rule.label === to);
        return rules.flatMap((rule) =>
            'selector' in rule
                ? $(rule.selector)
                      .map((_, a) => $(a).attr('href'))
                      .get()
                : [],
        );
    };
    const home = await fetchPage('/');
    const categories = new Set(links(home, 'home', 'category').map((href) => new URL(href, shop.url).pathname));
    assert.deepEqual(
        [...categories],
        shop.listingPaths.filter((path) => !path.includes('?')),
    );

    const [firstListing, secondListing] = shop.listingPaths;
    const listing = await fetchPage(firstListing!);
    assert.deepEqual(links(listing, 'category', 'category'), [secondListing]);
    assert.ok(links(listing, 'category', 'product').length >= 8);

    const product = await fetchPage(shop.products[0]!.path);
    assert.equal(links(product, 'product', 'product').length, 3);
});
