/**
 * The fixture shop's sitemaps (`sitemaps: true`): robots.txt names the index, the index is sent
 * gzip-encoded to a client that accepts it, the two gzip files list every product once with its
 * lastmod, and the malformed one is cut off mid-entry.
 */
import assert from 'node:assert/strict';
import { get } from 'node:http';
import { test, type TestContext } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { productLastmod, type Shop, type ShopOptions, startShop } from '../../src/demo/shop.js';

async function openShop(t: TestContext, options: ShopOptions): Promise<Shop> {
    const shop = await startShop({ transientFailureRate: 0, ...options });
    t.after(() => shop.close());
    return shop;
}

/** The raw response, undecoded, with the headers it came with. */
function fetchRaw(
    url: string,
    headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
    return new Promise((resolve, reject) => {
        get(url, { headers }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () =>
                resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }),
            );
        }).on('error', reject);
    });
}

const locs = (xml: string) => [...xml.matchAll(/<loc>([^<]*)<\/loc>/g)].map((match) => match[1]!);

test('without the option the shop has no sitemaps', async (t) => {
    const shop = await openShop(t, { products: 10 });
    assert.equal(shop.sitemapPaths, undefined);
    assert.doesNotMatch((await fetchRaw(`${shop.url}/robots.txt`)).body.toString(), /Sitemap:/);
    assert.equal((await fetchRaw(`${shop.url}/sitemap.xml`)).status, 404);
});

test('robots.txt names the index, which names the two gzip product sitemaps, gzip-encoded when asked', async (t) => {
    const shop = await openShop(t, { products: 11, sitemaps: true });
    const paths = shop.sitemapPaths!;
    assert.match(
        (await fetchRaw(`${shop.url}/robots.txt`)).body.toString(),
        new RegExp(`\\nSitemap: ${shop.url}${paths.index}\\n`),
    );
    const encoded = await fetchRaw(`${shop.url}${paths.index}`, { 'accept-encoding': 'gzip, br' });
    assert.equal(encoded.headers['content-encoding'], 'gzip');
    const plain = await fetchRaw(`${shop.url}${paths.index}`);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(gunzipSync(encoded.body).toString(), plain.body.toString());
    assert.match(plain.body.toString(), /^<\?xml[^>]*>\s*<sitemapindex /);
    assert.deepEqual(
        locs(plain.body.toString()),
        paths.products.map((path) => `${shop.url}${path}`),
    );
});

test('the product sitemaps list every product once, split in two, each with its lastmod', async (t) => {
    const shop = await openShop(t, { products: 11, sitemaps: true });
    const listed: string[] = [];
    for (const path of shop.sitemapPaths!.products) {
        const response = await fetchRaw(`${shop.url}${path}`, { 'accept-encoding': 'gzip' });
        assert.equal(response.headers['content-type'], 'application/gzip');
        assert.equal(response.headers['content-encoding'], undefined, 'a gzip file, not an encoding');
        const xml = gunzipSync(response.body).toString();
        assert.match(xml, /<urlset [^>]*>[\s\S]*<\/urlset>\s*$/);
        const entries = [...xml.matchAll(/<url><loc>([^<]*)<\/loc><lastmod>([^<]*)<\/lastmod>/g)];
        for (const [, loc, lastmod] of entries) {
            const product = shop.products.find((p) => `${shop.url}${p.path}` === loc)!;
            assert.equal(lastmod, productLastmod(product));
        }
        listed.push(...entries.map(([, loc]) => loc!));
    }
    assert.deepEqual(
        listed,
        shop.products.map((p) => `${shop.url}${p.path}`),
    );
    assert.equal(productLastmod({ id: 1 }), '2024-01-01T10:30:00+01:00');
    assert.equal(
        new Date(productLastmod({ id: 61 })).toISOString(),
        '2024-01-01T10:30:00.000Z',
        'an hour later, in UTC',
    );
});

test('the malformed sitemap holds one whole entry and is cut off in the next', async (t) => {
    const shop = await openShop(t, { products: 5, sitemaps: true });
    const xml = (await fetchRaw(`${shop.url}${shop.sitemapPaths!.malformed}`)).body.toString();
    assert.ok(xml.includes(`<url><loc>${shop.url}${shop.products[0]!.path}</loc>`));
    assert.ok(!xml.includes('</urlset>'));
    assert.match(xml, /<url><loc>[^<]*$/, 'cut inside the second <loc>');
});
