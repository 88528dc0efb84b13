/**
 * The fixture shop between runs (`Shop.advance`, src/demo/generations.ts): what advance() says changed
 * is what the shop then serves — new prices on the product pages, removed products gone from every
 * page, moved ones redirected, new ones listed — and with validators, exactly the pages whose bytes
 * changed get a new ETag or Last-Modified.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { load } from 'cheerio';
import siteDefinition from '../../routes/demo-shop.js';
import { buildCatalog } from '../../src/demo/catalog.js';
import { nextCatalog } from '../../src/demo/generations.js';
import { type CatalogChanges, productLastmod, type Shop, type ShopOptions, startShop } from '../../src/demo/shop.js';
import { resolveOptions } from '../../src/demo/shopOptions.js';

async function openShop(t: TestContext, options: ShopOptions = {}): Promise<Shop> {
    const shop = await startShop({ transientFailureRate: 0, scriptOnlyRate: 0, ...options });
    t.after(() => shop.close());
    return shop;
}

function get(shop: Shop, path: string, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(shop.url + path, { headers, redirect: 'manual' });
}

async function html(shop: Shop, path: string): Promise<string> {
    const response = await get(shop, path);
    assert.equal(response.status, 200, path);
    return response.text();
}

/** The fields the demo-shop route extracts from a product page. */
async function extracted(shop: Shop, path: string): Promise<Record<string, unknown>> {
    const extract = siteDefinition.routes.get('product')!.extract!;
    return extract(load(await html(shop, path)), {} as never) as Record<string, unknown>;
}

/** Pathnames of the product links on the listing pages, on the product pages (related, also viewed), and the home's featured aliases. */
async function linkedPaths(shop: Shop): Promise<{ listed: string[]; related: string[]; featured: string[] }> {
    const hrefs = (body: string, selector: string) => {
        const $ = load(body);
        return $(selector)
            .map((_, a) => new URL($(a).attr('href')!, shop.url).pathname)
            .get();
    };
    const listed: string[] = [];
    for (const path of shop.listingPaths) listed.push(...hrefs(await html(shop, path), 'a.product-link'));
    const related: string[] = [];
    for (const { path } of shop.products)
        related.push(...hrefs(await html(shop, path), 'a.related-link, a.also-viewed-link'));
    return { listed, related, featured: hrefs(await html(shop, '/'), 'a.featured-link') };
}

const pathsOf = (changes: CatalogChanges) => [
    ...changes.changed.map((c) => c.path),
    ...changes.removed,
    ...changes.moved.map((m) => m.from),
];

test('advance() changes the documented shares, disjoint, and products becomes the new truth', async (t) => {
    const shop = await openShop(t, { products: 200 });
    const before = shop.products;
    assert.equal(shop.generation, 0);
    const changes = shop.advance();
    assert.equal(shop.generation, 1);
    assert.equal(changes.changed.length, 20);
    assert.equal(changes.added.length, 6);
    assert.equal(changes.removed.length, 4);
    assert.equal(changes.moved.length, 2);
    assert.equal(new Set(pathsOf(changes)).size, 20 + 4 + 2, 'changed, removed and moved are disjoint');

    assert.equal(before.length, 200, 'the old truth is left as it was');
    const now = new Map(shop.products.map((p) => [p.path, p]));
    assert.equal(shop.products.length, 200 - 4 + 6);
    for (const { path, fields } of changes.changed) {
        const old = before.find((p) => p.path === path)!;
        assert.deepEqual(Object.keys(fields), ['price']);
        assert.equal(fields.price!.old, old.price);
        assert.notEqual(fields.price!.new, old.price);
        assert.equal(now.get(path)!.price, fields.price!.new);
    }
    for (const path of changes.removed) assert.equal(now.has(path), false, path);
    for (const { from, to } of changes.moved) {
        assert.equal(now.has(from), false);
        const old = before.find((p) => p.path === from)!;
        assert.deepEqual({ ...now.get(to)!, path: from }, old, 'a move changes the path alone');
    }
    for (const path of changes.added) assert.ok(now.has(path) && !before.some((p) => p.path === path), path);
    assert.deepEqual(
        shop.products.map((p) => p.id),
        [...shop.products.map((p) => p.id)].sort((a, b) => a - b),
        'id order',
    );
});

test('the same seed advances the same way; each generation draws anew', async (t) => {
    const [a, b] = await Promise.all([openShop(t, { seed: 5 }), openShop(t, { seed: 5 })]);
    const [first, second] = [a.advance(), a.advance()];
    assert.deepEqual(b.advance(), first);
    assert.deepEqual(b.advance(), second);
    assert.deepEqual(b.products, a.products);
    assert.equal(await html(a, a.listingPaths[2]!), await html(b, b.listingPaths[2]!));
    const overlap = first.changed.filter((c) => second.changed.some((d) => d.path === c.path));
    assert.ok(overlap.length < first.changed.length / 2, `${overlap.length} of ${first.changed.length} again`);
});

test('the shop serves what advance() says: new prices, 404 and unlinked removals, 301 moves, listed additions', async (t) => {
    const shop = await openShop(t, { products: 120, sitemaps: true, pageWeight: 'real' });
    const advancedAt = Date.now();
    const changes = shop.advance({ priceChangeRate: 0.1, newRate: 0.05, removedRate: 0.05, movedRate: 0.05 });
    assert.ok(changes.removed.length >= 5 && changes.moved.length >= 5 && changes.added.length >= 5);

    for (const { path, fields } of changes.changed)
        assert.equal((await extracted(shop, path)).price, fields.price!.new);
    for (const path of changes.removed) assert.equal((await get(shop, path)).status, 404, path);
    for (const { from, to } of changes.moved) {
        const response = await get(shop, `${from}?utm_source=listing`);
        assert.equal(response.status, 301, from);
        assert.equal(response.headers.get('location'), to);
        const product = shop.products.find((p) => p.path === to)!;
        assert.deepEqual(
            { title: (await extracted(shop, to)).title, sku: (await extracted(shop, to)).sku },
            { title: product.title, sku: product.sku },
        );
        assert.equal((await get(shop, `/p/${product.id}`)).headers.get('location'), to);
    }
    for (const path of changes.added) assert.equal((await extracted(shop, path)).sku !== undefined, true, path);

    const { listed, related, featured } = await linkedPaths(shop);
    const products = shop.products.map((p) => p.path);
    assert.deepEqual([...new Set(listed)].sort(), [...products, ...shop.notFoundPaths].sort());
    const gone = new Set([...changes.removed, ...changes.moved.map((m) => m.from)]);
    for (const path of [...listed, ...related]) assert.ok(!gone.has(path), `${path} is still linked`);
    for (const alias of featured) assert.notEqual((await get(shop, alias)).status, 404, alias);

    const lastmods = new Map<string, string>();
    for (const path of shop.sitemapPaths!.products) {
        const xml = gunzipSync(Buffer.from(await (await get(shop, path)).arrayBuffer())).toString();
        for (const [, loc, lastmod] of xml.matchAll(/<loc>([^<]*)<\/loc><lastmod>([^<]*)<\/lastmod>/g))
            lastmods.set(new URL(loc!).pathname, lastmod!);
    }
    assert.deepEqual([...lastmods.keys()].sort(), [...products].sort());
    // A page the change rewrote says so in its lastmod; the first catalog's lastmods are in 2024.
    for (const path of [...changes.changed.map((c) => c.path), ...changes.added])
        assert.ok(Date.parse(lastmods.get(path)!) >= Math.floor(advancedAt / 1000) * 1000, path);
    const untouched = shop.products.find((p) => p.id === 1 && !pathsOf(changes).includes(p.path));
    if (untouched) assert.equal(lastmods.get(untouched.path), productLastmod(untouched));
});

test('a product moved twice redirects from both old paths to where it is now; a removed one from none', async (t) => {
    const shop = await openShop(t, { products: 40 });
    const moves = { priceChangeRate: 0, newRate: 0, removedRate: 0, movedRate: 0.5 };
    const first = shop.advance(moves);
    const second = shop.advance(moves);
    const twice = second.moved.find((m) => first.moved.some((f) => f.to === m.from));
    assert.ok(twice, 'some product moved in both generations');
    const original = first.moved.find((f) => f.to === twice.from)!.from;
    for (const from of [original, twice.from]) assert.equal((await get(shop, from)).headers.get('location'), twice.to);

    const third = shop.advance({ ...moves, movedRate: 0, removedRate: 1 });
    assert.ok(third.removed.includes(twice.to));
    for (const path of [original, twice.from, twice.to]) assert.equal((await get(shop, path)).status, 404, path);
});

test('with validators, exactly the pages whose bytes changed get a new ETag or Last-Modified', async (t) => {
    const shop = await openShop(t, { products: 150, validators: true, pageWeight: 'real' });
    type Seen = { body: string; etag: string | null; lastModified: string | null };
    const snapshot = async (paths: string[]) => {
        const seen = new Map<string, Seen>();
        for (const path of paths) {
            const response = await get(shop, path);
            assert.equal(response.status, 200, path);
            const { headers } = response;
            seen.set(path, {
                body: await response.text(),
                etag: headers.get('etag'),
                lastModified: headers.get('last-modified'),
            });
        }
        return seen;
    };
    const pages = () => ['/', ...shop.listingPaths, ...shop.products.map((p) => p.path)];
    const before = await snapshot(pages());
    const advancedAt = Date.now();
    shop.advance();
    const after = await snapshot(pages());

    const tally = { etag: { same: 0, changed: 0 }, lastModified: { same: 0, changed: 0 } };
    for (const [path, now] of after) {
        const then = before.get(path);
        if (!then) continue;
        const same = then.body === now.body;
        if (now.etag) {
            tally.etag[same ? 'same' : 'changed']++;
            assert.equal(now.etag === then.etag, same, `${path}: ETag follows the bytes`);
            const status = (await get(shop, path, { 'If-None-Match': then.etag! })).status;
            assert.equal(status, same ? 304 : 200, `${path} with the old ETag`);
        }
        if (now.lastModified) {
            tally.lastModified[same ? 'same' : 'changed']++;
            assert.equal(now.lastModified === then.lastModified, same, `${path}: Last-Modified follows the bytes`);
            if (!same) assert.ok(Date.parse(now.lastModified) >= Math.floor(advancedAt / 1000) * 1000, path);
            const status = (await get(shop, path, { 'If-Modified-Since': then.lastModified! })).status;
            assert.equal(status, same ? 304 : 200, `${path} since the old Last-Modified`);
        }
    }
    for (const [kind, { same, changed }] of Object.entries(tally))
        assert.ok(same >= 5 && changed >= 3, `${kind}: ${same} unchanged, ${changed} changed`);
});

test("changeSet 'fixed' changes the prices of the same products every generation", async (t) => {
    const shop = await openShop(t, { products: 200 });
    const changes = { priceChangeRate: 0.1, newRate: 0, removedRate: 0, movedRate: 0, changeSet: 'fixed' } as const;
    const runs = [shop.advance(changes), shop.advance(changes), shop.advance(changes)];
    const changedPaths = runs.map((run) => run.changed.map((c) => c.path));
    assert.equal(changedPaths[0]!.length, 20);
    assert.deepEqual(changedPaths[1], changedPaths[0]);
    assert.deepEqual(changedPaths[2], changedPaths[0]);
    for (const [i, run] of runs.entries()) {
        if (i === 0) continue;
        for (const [j, { fields }] of run.changed.entries())
            assert.equal(fields.price!.old, runs[i - 1]!.changed[j]!.fields.price!.new, 'each run from the last price');
    }
    const random = shop.advance({ ...changes, changeSet: 'random' }).changed.map((c) => c.path);
    assert.notDeepEqual(random, changedPaths[0]);
});

test('in the hard category, new and moved products stay under /premium/items/', () => {
    const options = { ...resolveOptions({ products: 100 }), retryAfterRate: 0, hardCategory: true };
    const catalog = buildCatalog(options);
    const hard = catalog.categories.at(-1)!;
    const { catalog: next, changes } = nextCatalog(
        catalog,
        { seed: 1, generation: 1, productsPerPage: 20 },
        { newRate: 0.2, movedRate: 0.3, removedRate: 0, priceChangeRate: 0 },
    );
    const inHard = (path: string) => next.products.find((p) => p.path === path)!.category === hard.name;
    const paths = [...changes.added, ...changes.moved.map((m) => m.to)].filter(inHard);
    assert.ok(paths.length >= 4, paths.join(' '));
    for (const path of paths) assert.match(path, /^\/premium\/items\/[a-z0-9-]+-\d+(-v1)?$/);
    const elsewhere = [...changes.added, ...changes.moved.map((m) => m.to)].filter((path) => !inHard(path));
    for (const path of elsewhere) assert.match(path, /^\/products\/[a-z0-9-]+-\d+(-v1)?$/);
});

test('bad changes are refused', async (t) => {
    const shop = await openShop(t, { products: 10 });
    assert.throws(() => shop.advance({ priceChangeRate: 1.5 }), RangeError);
    assert.throws(() => shop.advance({ newRate: -0.1 }), RangeError);
    assert.throws(() => shop.advance({ priceChangeRate: 0.6, removedRate: 0.5 }), RangeError);
    assert.throws(() => shop.advance({ changeSet: 'sometimes' as 'fixed' }), RangeError);
    assert.equal(shop.generation, 0, 'a refused change leaves the shop as it was');
});
