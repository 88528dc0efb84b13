/**
 * The fixture shop's HTTP validators (`validators: true`, src/demo/validators.ts): a third of the pages
 * carry an ETag, a third a Last-Modified, the rest neither, by pathname; conditional GETs on the page's
 * own validator get a counted 304 with no body; bodies are the same bytes on every request.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test, type TestContext } from 'node:test';
import { startShop, type Shop, type ShopOptions } from '../../src/demo/shop.js';

async function openShop(t: TestContext, options: ShopOptions = {}): Promise<Shop> {
    const shop = await startShop({ transientFailureRate: 0, validators: true, ...options });
    t.after(() => shop.close());
    return shop;
}

interface Fetched {
    status: number;
    etag: string | null;
    lastModified: string | null;
    headers: Headers;
    body: string;
}

async function get(shop: Shop, path: string, headers: Record<string, string> = {}): Promise<Fetched> {
    const response = await fetch(shop.url + path, { headers, redirect: 'manual' });
    return {
        status: response.status,
        etag: response.headers.get('etag'),
        lastModified: response.headers.get('last-modified'),
        headers: response.headers,
        body: await response.text(),
    };
}

/** The home page, every listing page and every product page. */
const pagesOf = (shop: Shop) => ['/', ...shop.listingPaths, ...shop.products.map((p) => p.path)];

const sha1Tag = (body: string) => `"${createHash('sha1').update(body).digest('base64url')}"`;

/** A page of each validator kind, found by asking. */
async function pageOfEachKind(shop: Shop): Promise<Record<'etag' | 'lastModified' | 'none', string>> {
    const found: Partial<Record<'etag' | 'lastModified' | 'none', string>> = {};
    for (const path of shop.products.map((p) => p.path)) {
        const page = await get(shop, path);
        found[page.etag ? 'etag' : page.lastModified ? 'lastModified' : 'none'] ??= path;
        if (found.etag && found.lastModified && found.none) return found as Record<keyof typeof found, string>;
    }
    throw new Error(`no page of every kind: ${JSON.stringify(found)}`);
}

test('without the option no page carries a validator, and conditions are ignored', async (t) => {
    const shop = await openShop(t, { products: 30, validators: false });
    for (const path of pagesOf(shop)) {
        const page = await get(shop, path, {
            'If-None-Match': '*',
            'If-Modified-Since': 'Fri, 01 Jan 2100 00:00:00 GMT',
        });
        assert.equal(page.status, 200, path);
        assert.equal(page.etag, null, path);
        assert.equal(page.lastModified, null, path);
    }
});

test('a third of the pages carry an ETag of their bytes, a third a Last-Modified, the rest neither', async (t) => {
    const before = Math.floor(Date.now() / 1000) * 1000;
    const shop = await openShop(t, { products: 300 });
    const counts = { etag: 0, lastModified: 0, none: 0 };
    const kindOfPathname = new Map<string, string>();
    for (const path of pagesOf(shop)) {
        const page = await get(shop, path);
        assert.equal(page.status, 200, path);
        assert.ok(!(page.etag && page.lastModified), `${path} carries one validator at most`);
        const kind = page.etag ? 'etag' : page.lastModified ? 'lastModified' : 'none';
        counts[kind]++;
        if (page.etag) assert.equal(page.etag, sha1Tag(page.body), `${path}: a strong tag of the body's hash`);
        if (page.lastModified) {
            const at = Date.parse(page.lastModified);
            assert.ok(at >= before && at <= Date.now() && at % 1000 === 0, `${path}: the start, ${page.lastModified}`);
        }
        // By pathname: every page of a listing has the kind of its first page.
        const pathname = path.split('?')[0]!;
        assert.equal(kindOfPathname.get(pathname) ?? kind, kind, path);
        kindOfPathname.set(pathname, kind);
    }
    const total = counts.etag + counts.lastModified + counts.none;
    for (const [kind, count] of Object.entries(counts))
        assert.ok(count / total > 0.25 && count / total < 0.42, `${kind}: ${count} of ${total}`);

    const others = ['/robots.txt', '/admin/', '/no/such/page', shop.notFoundPaths[0]!];
    for (const path of others) {
        const page = await get(shop, path, { 'If-None-Match': '*', 'If-Modified-Since': new Date().toUTCString() });
        assert.ok(page.status !== 304 && !page.etag && !page.lastModified, `${path}: ${page.status}`);
    }
});

test('sitemaps and /__stats carry no validators', async (t) => {
    const shop = await openShop(t, { products: 30, sitemaps: true });
    for (const path of [shop.sitemapPaths!.index, ...shop.sitemapPaths!.products, '/__stats']) {
        const page = await get(shop, path, { 'If-None-Match': '*' });
        assert.equal(page.status, 200, path);
        assert.ok(!page.etag && !page.lastModified, path);
    }
});

test('If-None-Match with the current ETag gets a counted 304 with no body; another tag, or a date, does not', async (t) => {
    const shop = await openShop(t, { products: 40 });
    const { etag: path } = await pageOfEachKind(shop);
    shop.resetStats();
    const first = await get(shop, path);
    const etag = first.etag!;
    const notModified = await get(shop, path, { 'If-None-Match': etag });
    assert.equal(notModified.status, 304);
    assert.equal(notModified.body, '');
    assert.equal(notModified.etag, etag);
    assert.equal(notModified.headers.get('content-length'), null);
    assert.equal((await get(shop, path, { 'If-None-Match': `"other", W/${etag}` })).status, 304, 'weak comparison');
    assert.equal((await get(shop, path, { 'If-None-Match': '*' })).status, 304);
    assert.equal((await get(shop, path, { 'If-None-Match': '"other"' })).status, 200);
    const future = new Date(Date.now() + 86_400_000).toUTCString();
    assert.equal((await get(shop, path, { 'If-Modified-Since': future })).status, 200, 'no Last-Modified to compare');
    assert.deepEqual(shop.stats().byPath[path], { '200': 3, '304': 3 });
});

test('If-Modified-Since at or after Last-Modified gets a counted 304; before it, or an ETag, does not', async (t) => {
    const shop = await openShop(t, { products: 40 });
    const { lastModified: path } = await pageOfEachKind(shop);
    shop.resetStats();
    const { lastModified } = await get(shop, path);
    const at = Date.parse(lastModified!);
    const notModified = await get(shop, path, { 'If-Modified-Since': lastModified! });
    assert.equal(notModified.status, 304);
    assert.equal(notModified.body, '');
    assert.equal(notModified.lastModified, lastModified);
    assert.equal(notModified.etag, null);
    const later = new Date(at + 60_000).toUTCString();
    assert.equal((await get(shop, path, { 'If-Modified-Since': later })).status, 304);
    const earlier = new Date(at - 1000).toUTCString();
    assert.equal((await get(shop, path, { 'If-Modified-Since': earlier })).status, 200);
    assert.equal((await get(shop, path, { 'If-Modified-Since': 'not a date' })).status, 200);
    assert.equal((await get(shop, path, { 'If-None-Match': '*' })).status, 200, 'no ETag to match');
    assert.deepEqual(shop.stats().byPath[path], { '200': 4, '304': 2 });
});

test('a page with neither validator never answers 304', async (t) => {
    const shop = await openShop(t, { products: 40 });
    const { none: path } = await pageOfEachKind(shop);
    const conditions: Record<string, string>[] = [
        { 'If-None-Match': '*' },
        { 'If-Modified-Since': new Date(Date.now() + 86_400_000).toUTCString() },
        { 'If-None-Match': '*', 'If-Modified-Since': new Date(Date.now() + 86_400_000).toUTCString() },
    ];
    for (const headers of conditions) {
        const page = await get(shop, path, headers);
        assert.equal(page.status, 200, JSON.stringify(headers));
        assert.ok(page.body.includes('</html>'));
    }
});

test('a 304 pays the same latency as a 200', async (t) => {
    const shop = await openShop(t, { products: 40, latencyMs: 150 });
    const { etag: path } = await pageOfEachKind(shop);
    const { etag } = await get(shop, path);
    const started = performance.now();
    assert.equal((await get(shop, path, { 'If-None-Match': etag! })).status, 304);
    assert.ok(performance.now() - started >= 145, `${(performance.now() - started).toFixed(0)} ms`);
});

test('every page is the same bytes on every request, in both page weights', async (t) => {
    for (const pageWeight of ['light', 'real'] as const) {
        const shop = await openShop(t, { products: 60, scriptOnlyRate: 0.2, pageWeight, sitemaps: true });
        for (const path of pagesOf(shop)) {
            const [a, b] = [await get(shop, path), await get(shop, path)];
            assert.equal(a.status, 200, path);
            assert.equal(b.body, a.body, `${pageWeight} ${path}`);
            assert.equal(b.etag, a.etag, path);
            assert.equal(b.lastModified, a.lastModified, path);
        }
    }
});
