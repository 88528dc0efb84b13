import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { load } from 'cheerio';
import { startShop, type Shop, type ShopOptions, type ShopStats } from './site/shop.js';

/** A shop that closes when the test ends. No transient failures unless the test asks for them. */
async function openShop(t: TestContext, options: ShopOptions = {}): Promise<Shop> {
    const shop = await startShop({ transientFailureRate: 0, ...options });
    t.after(() => shop.close());
    return shop;
}

function get(shop: Shop, path: string, init?: RequestInit): Promise<Response> {
    return fetch(shop.url + path, init);
}

async function html(shop: Shop, path: string): Promise<string> {
    const response = await get(shop, path);
    assert.equal(response.status, 200, path);
    return response.text();
}

test('the same seed gives the same catalog, another seed a different one', async (t) => {
    const [a, b, c] = await Promise.all([openShop(t, { seed: 7 }), openShop(t, { seed: 7 }), openShop(t, { seed: 8 })]);
    assert.deepEqual(a.products, b.products);
    assert.deepEqual(a.notFoundPaths, b.notFoundPaths);
    assert.notDeepEqual(a.products.map((p) => p.title), c.products.map((p) => p.title));
    assert.equal(await html(a, a.listingPaths[1]!), await html(b, b.listingPaths[1]!));
});

test('the catalog has the documented shape and defaults', async (t) => {
    const shop = await startShop();
    t.after(() => shop.close());
    assert.equal(shop.products.length, 200);
    assert.equal(shop.products.filter((p) => p.scriptOnly).length, 20);
    assert.equal(shop.products.filter((p) => p.transientFailure).length, 6);
    assert.equal(shop.notFoundPaths.length, 5);
    assert.equal(shop.listingPaths.length, 5 * 2); // 40 products per category, 20 per page
    shop.products.forEach((p, i) => {
        assert.equal(p.id, i + 1);
        assert.equal(p.path, `/products/${p.slug}-${p.id}`);
        assert.match(p.sku, /^SKU-\d{6}$/);
        assert.ok(p.price >= 1 && p.price <= 999.99 && Math.abs(p.price * 100 - Math.round(p.price * 100)) < 1e-6, `price ${p.price}`);
        assert.equal(p.availability === 'out_of_stock', p.stock === 0);
        assert.match(p.description, /^[A-Z][^.]*\.( [A-Z][^.]*\.){0,2}$/);
    });
});

test('the listing pages, followed through their next links, show every product exactly once', async (t) => {
    const shop = await openShop(t, { products: 45, categories: 3, productsPerPage: 4, notFoundLinks: 4 });
    const seen: string[] = [];
    const visited: string[] = [];
    for (const category of new Set(shop.listingPaths.map((path) => path.split('?')[0]!))) {
        let next: string | undefined = category;
        while (next) {
            visited.push(next);
            const $ = load(await html(shop, next));
            const cards = $('article.product-card');
            $('article.product-card > a.product-link:not(.reviews-link)').each((_, a) => {
                const href = new URL($(a).attr('href')!, shop.url);
                assert.equal(href.searchParams.get('utm_source'), 'listing');
                seen.push(href.pathname);
            });
            assert.ok(cards.length >= 1 && cards.length <= 4 + 4);
            next = $('nav.pagination a.next[rel=next]').attr('href');
        }
    }
    assert.deepEqual(visited, shop.listingPaths);
    const expected = [...shop.products.map((p) => p.path), ...shop.notFoundPaths];
    assert.deepEqual([...seen].sort(), expected.sort());
});

test('listing pages: ?page=1 is page 1, pages past the end are 404, every 4th card links twice', async (t) => {
    const shop = await openShop(t, { products: 20, categories: 1, productsPerPage: 8, notFoundLinks: 0 });
    const [first, second] = shop.listingPaths;
    assert.equal(await html(shop, `${first}?page=1`), await html(shop, first!));
    assert.equal((await get(shop, `${first}?page=4`)).status, 404);
    assert.equal((await get(shop, `${first}?page=0`)).status, 404);

    const $ = load(await html(shop, second!));
    assert.equal($('a.prev[rel=prev]').attr('href'), `${first}?page=1`);
    assert.equal($('a.next[rel=next]').attr('href'), `${first}?page=3`);
    const reviews = $('a.product-link.reviews-link').map((_, a) => $(a).attr('href')).get();
    assert.equal(reviews.length, 2);
    for (const href of reviews) assert.match(href, /^\/products\/[a-z0-9-]+-\d+\?ref=category#reviews$/);
});

test('the home page links categories, featured aliases with tracking, /admin/ and a fragment', async (t) => {
    const shop = await openShop(t, { categories: 3 });
    const $ = load(await html(shop, '/'));
    const categoryLinks = $('a.category-link').map((_, a) => $(a).attr('href')).get();
    assert.ok(categoryLinks.includes('/category/kitchen#top'));
    assert.deepEqual(categoryLinks.filter((href) => !href.includes('#')), shop.listingPaths.filter((p) => !p.includes('?')));
    const featured = $('a.featured-link').map((_, a) => $(a).attr('href')).get();
    assert.equal(featured.length, 5);
    for (const href of featured) assert.match(href, /^\/p\/\d+\?utm_source=home&utm_medium=featured$/);
    assert.equal($('a[href="/admin/"]').length, 1);
});

test('/p/<id> answers 301 to the canonical product path', async (t) => {
    const shop = await openShop(t, { products: 10 });
    const response = await get(shop, '/p/3?utm_source=home&utm_medium=featured', { redirect: 'manual' });
    assert.equal(response.status, 301);
    assert.equal(response.headers.get('location'), shop.products[2]!.path);
    assert.equal((await get(shop, '/p/11', { redirect: 'manual' })).status, 404);
});

test('robots.txt disallows /admin/, which still answers', async (t) => {
    const shop = await openShop(t);
    const robots = await get(shop, '/robots.txt');
    assert.match(robots.headers.get('content-type')!, /^text\/plain/);
    assert.equal(await robots.text(), 'User-agent: *\nDisallow: /admin/\n');
    assert.equal((await get(shop, '/admin/')).status, 200);
});

test('product pages carry the truth; script-only pages leave title and price to a script', async (t) => {
    const shop = await openShop(t, { products: 30, scriptOnlyRate: 0.5 });
    const plain = shop.products.find((p) => !p.scriptOnly)!;
    const scripted = shop.products.find((p) => p.scriptOnly)!;

    const $ = load(await html(shop, plain.path));
    assert.equal($('link[rel=canonical]').attr('href'), shop.url + plain.path);
    assert.equal($('h1.product-title').text(), plain.title);
    assert.equal($('span.price[data-currency=USD]').first().text(), `$${plain.price.toFixed(2)}`);
    assert.equal($('span.sku').text(), plain.sku);
    assert.equal($('a.related-link[href$="?ref=related"]').length, 3);

    const raw = await html(shop, scripted.path);
    const $s = load(raw);
    assert.equal($s('h1.product-title').text(), '');
    assert.equal($s('.buy-box .price').text(), '');
    assert.ok(!$s('body').text().includes(`$${scripted.price.toFixed(2)}`));
    assert.ok(raw.includes(JSON.stringify(scripted.title)), 'the script holds the title');
    assert.equal($s('span.sku').text(), scripted.sku);
    assert.equal($s('.description p').text(), scripted.description);
    assert.equal($s('p.availability').length, 1);
});

test('a transiently failing product fails its first request only (503 or reset), and stats count it', async (t) => {
    const shop = await openShop(t, { products: 40, transientFailureRate: 0.25 });
    const failing = shop.products.filter((p) => p.transientFailure);
    assert.equal(failing.length, 10);
    for (const product of failing) {
        const first = await get(shop, `${product.path}?utm_source=x`).then((r) => r.status, () => 'reset');
        assert.ok(first === 503 || first === 'reset', `first request: ${first}`);
        assert.equal((await get(shop, product.path)).status, 200);
        assert.equal((await get(shop, product.path)).status, 200);
    }
    const stats = shop.stats();
    const outcomes = failing.map((p) => stats.byPath[p.path]!);
    for (const outcome of outcomes) assert.equal(outcome['200'], 2);
    assert.equal(outcomes.filter((o) => o['503'] === 1).length, 5);
    assert.equal(outcomes.filter((o) => o.reset === 1).length, 5);
    const healthy = shop.products.find((p) => !p.transientFailure)!;
    assert.equal((await get(shop, healthy.path)).status, 200);
});

test('dead links answer 404, the last one 410 Gone; unknown paths 404', async (t) => {
    const shop = await openShop(t, { products: 10, notFoundLinks: 3 });
    const statuses = await Promise.all(shop.notFoundPaths.map(async (path) => (await get(shop, path)).status));
    assert.deepEqual(statuses, [404, 404, 410]);
    assert.equal((await get(shop, '/no/such/page')).status, 404);
    assert.equal((await get(shop, '/products/not-a-product-1')).status, 404);

    const single = await openShop(t, { products: 10, notFoundLinks: 1 });
    assert.equal((await get(single, single.notFoundPaths[0]!)).status, 404);
});

test('stats count by pathname and status; /__stats serves them uncounted; resetStats zeroes them', async (t) => {
    const shop = await openShop(t, { products: 10 });
    const [listing] = shop.listingPaths;
    await get(shop, '/');
    await get(shop, `${listing}?page=1`);
    await get(shop, '/nope');
    const expected: ShopStats = { total: 3, byPath: { '/': { '200': 1 }, [listing!]: { '200': 1 }, '/nope': { '404': 1 } } };
    assert.deepEqual(shop.stats(), expected);
    assert.deepEqual(await (await get(shop, '/__stats')).json(), expected);
    assert.deepEqual(await (await get(shop, '/__stats')).json(), expected);

    shop.resetStats();
    assert.deepEqual(shop.stats(), { total: 0, byPath: {} });
    assert.deepEqual(await (await get(shop, '/__stats')).json(), { total: 0, byPath: {} });
});

test('latencyMs delays every response', async (t) => {
    const shop = await openShop(t, { products: 10, latencyMs: 150 });
    const started = performance.now();
    assert.equal((await get(shop, '/')).status, 200);
    assert.ok(performance.now() - started >= 140, 'the response took the latency');
});

test('rateLimit refuses, at once and counted, the requests beyond maxConcurrent in progress', async (t) => {
    const shop = await openShop(t, { products: 10, latencyMs: 150, rateLimit: { maxConcurrent: 2 } });
    const started = performance.now();
    const answers = await Promise.all(
        Array.from({ length: 5 }, async () => {
            const response = await get(shop, '/');
            return { status: response.status, ms: performance.now() - started };
        }),
    );
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 200, 429, 429, 429]);
    assert.ok(answers.filter((a) => a.status === 429).every((a) => a.ms < 140), 'refusals do not wait for the latency');
    assert.deepEqual(shop.stats().byPath['/'], { '200': 2, '429': 3 });
    // Once those are done there is room again; and the status can be 503.
    assert.equal((await get(shop, '/')).status, 200);
    const unavailable = await openShop(t, { products: 10, latencyMs: 150, rateLimit: { maxConcurrent: 1, status: 503 } });
    const statuses = await Promise.all([get(unavailable, '/'), get(unavailable, '/')].map(async (r) => (await r).status));
    assert.deepEqual(statuses.sort(), [200, 503]);
});

test('bad options are refused', async () => {
    await assert.rejects(startShop({ products: -1 }), RangeError);
    await assert.rejects(startShop({ categories: 0 }), RangeError);
    await assert.rejects(startShop({ scriptOnlyRate: 1.5 }), RangeError);
    await assert.rejects(startShop({ rateLimit: { maxConcurrent: 0 } }), RangeError);
});
