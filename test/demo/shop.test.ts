import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { load } from 'cheerio';
import siteDefinition from '../../routes/demo-shop.js';
import { startShop, type Shop, type ShopOptions, type ShopStats } from '../../src/demo/shop.js';

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
    assert.notDeepEqual(
        a.products.map((p) => p.title),
        c.products.map((p) => p.title),
    );
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
        assert.ok(
            p.price >= 1 && p.price <= 999.99 && Math.abs(p.price * 100 - Math.round(p.price * 100)) < 1e-6,
            `price ${p.price}`,
        );
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
    const reviews = $('a.product-link.reviews-link')
        .map((_, a) => $(a).attr('href'))
        .get();
    assert.equal(reviews.length, 2);
    for (const href of reviews) assert.match(href, /^\/products\/[a-z0-9-]+-\d+\?ref=category#reviews$/);
});

test('the home page links categories, featured aliases with tracking, /admin/ and a fragment', async (t) => {
    const shop = await openShop(t, { categories: 3 });
    const $ = load(await html(shop, '/'));
    const categoryLinks = $('a.category-link')
        .map((_, a) => $(a).attr('href'))
        .get();
    assert.ok(categoryLinks.includes('/category/kitchen#top'));
    assert.deepEqual(
        categoryLinks.filter((href) => !href.includes('#')),
        shop.listingPaths.filter((p) => !p.includes('?')),
    );
    const featured = $('a.featured-link')
        .map((_, a) => $(a).attr('href'))
        .get();
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
    assert.ok(
        !$s('body')
            .text()
            .includes(`$${scripted.price.toFixed(2)}`),
    );
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
        const first = await get(shop, `${product.path}?utm_source=x`).then(
            (r) => r.status,
            () => 'reset',
        );
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
    const expected: ShopStats = {
        total: 3,
        byPath: { '/': { '200': 1 }, [listing!]: { '200': 1 }, '/nope': { '404': 1 } },
    };
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

test('latencyJitter spreads the delay within latencyMs * (1 ± latencyJitter)', async (t) => {
    const shop = await openShop(t, { products: 10, latencyMs: 200, latencyJitter: 0.5 });
    const took = await Promise.all(
        Array.from({ length: 8 }, async () => {
            const started = performance.now();
            assert.equal((await get(shop, '/')).status, 200);
            return performance.now() - started;
        }),
    );
    assert.ok(Math.min(...took) >= 90, `no response came before 100 ms: ${took}`);
    assert.ok(Math.max(...took) - Math.min(...took) > 5, `the delays differ: ${took}`);
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
    assert.ok(
        answers.filter((a) => a.status === 429).every((a) => a.ms < 140),
        'refusals do not wait for the latency',
    );
    assert.deepEqual(shop.stats().byPath['/'], { '200': 2, '429': 3 });
    // Once those are done there is room again; and the status can be 503.
    assert.equal((await get(shop, '/')).status, 200);
    const unavailable = await openShop(t, {
        products: 10,
        latencyMs: 150,
        rateLimit: { maxConcurrent: 1, status: 503 },
    });
    const statuses = await Promise.all(
        [get(unavailable, '/'), get(unavailable, '/')].map(async (r) => (await r).status),
    );
    assert.deepEqual(statuses.sort(), [200, 503]);
});

test(`pageWeight 'real': a real store's page weight and link \
count around the light shop's links and values`, async (t) => {
    const options = { products: 200, scriptOnlyRate: 0 } satisfies ShopOptions;
    const [light, real] = await Promise.all([openShop(t, options), openShop(t, { ...options, pageWeight: 'real' })]);
    const routes = [...siteDefinition.routes.values()];
    const selectors = [
        ...new Set(
            routes.flatMap((route) =>
                (route.enqueue ?? []).flatMap((rule) => ('selector' in rule ? [rule.selector] : [])),
            ),
        ),
    ];
    assert.ok(selectors.length >= 5, selectors.join(' '));
    const product = light.products[3]!;
    const pages = [
        { path: '/', kb: [8, 16] },
        { path: light.listingPaths[1]!, kb: [20, 27] },
        { path: product.path, kb: [12, 17] },
    ];
    for (const { path, kb } of pages) {
        const [lightHtml, realHtml] = await Promise.all([html(light, path), html(real, path)]);
        const size = Buffer.byteLength(realHtml) / 1024;
        assert.ok(size >= kb[0]! && size <= kb[1]!, `${path}: ${size.toFixed(1)} KB`);
        const [$light, $real] = [load(lightHtml), load(realHtml)];
        const links = $real('a[href]')
            .map((_, a) => $real(a).attr('href')!)
            .get();
        assert.ok(links.length >= 150, `${path}: ${links.length} links`);
        const tracked = links.filter((href) => href.includes('utm_')).length / links.length;
        assert.ok(tracked >= 0.05 && tracked <= 0.2, `${path}: ${(tracked * 100).toFixed(0)}% of links carry utm_*`);
        for (const selector of selectors) {
            const hrefs = ($: typeof $light) =>
                $(selector)
                    .map((_, a) => $(a).attr('href'))
                    .get();
            assert.deepEqual(hrefs($real), hrefs($light), `${path}: the links ${selector} follows`);
        }
    }
    const extract = siteDefinition.routes.get('product')!.extract!;
    const [lightPage, realPage] = await Promise.all([html(light, product.path), html(real, product.path)]);
    assert.deepEqual(extract(load(realPage), {} as never), extract(load(lightPage), {} as never));
    assert.equal((extract(load(realPage), {} as never) as { title?: string }).title, product.title);
});

test('bad options are refused', async () => {
    await assert.rejects(startShop({ products: -1 }), RangeError);
    await assert.rejects(startShop({ categories: 0 }), RangeError);
    await assert.rejects(startShop({ scriptOnlyRate: 1.5 }), RangeError);
    await assert.rejects(startShop({ latencyJitter: -0.1 }), RangeError);
    await assert.rejects(startShop({ rateLimit: { maxConcurrent: 0 } }), RangeError);
    await assert.rejects(startShop({ pageWeight: 'heavy' as never }), RangeError);
});

/** The status of a GET, `'reset'` when the connection dropped, `'timeout'` when nothing came back in `timeoutMs`. */
async function outcome(shop: Shop, path: string, timeoutMs = 300): Promise<number | 'reset' | 'timeout'> {
    try {
        const response = await get(shop, path, { signal: AbortSignal.timeout(timeoutMs) });
        await response.arrayBuffer();
        return response.status;
    } catch (error) {
        return (error as Error).name === 'TimeoutError' ? 'timeout' : 'reset';
    }
}

/** Every product-card href (pathname only) on every listing page. */
async function listingLinks(shop: Shop): Promise<string[]> {
    const links: string[] = [];
    for (const path of shop.listingPaths) {
        const $ = load(await html(shop, path));
        $('article.product-card > a.product-link:not(.reviews-link)').each((_, a) => {
            links.push(new URL($(a).attr('href')!, shop.url).pathname);
        });
    }
    return links;
}

test('default options: the same products fail the same way, and no opt-in failure mode is on', async (t) => {
    const shop = await startShop();
    t.after(() => shop.close());
    const failing = shop.products.filter((p) => p.transientFailure);
    const outcomes = [];
    for (const product of failing) outcomes.push([product.id, await outcome(shop, product.path)]);
    // Pinned from the shop before transientFailureKinds, persistentFailures and retryAfter existed:
    // the options added since must not shift the seeded stream (products, featured, related, failures).
    assert.deepEqual(outcomes, [
        [57, 'reset'],
        [82, 503],
        [136, 503],
        [148, 'reset'],
        [157, 503],
        [171, 'reset'],
    ]);
    assert.deepEqual(
        [shop.products[0]!.title, shop.products[199]!.title],
        ['Sturdy Oak Planter', 'Compact Brass Blanket'],
    );
    assert.equal(
        createHash('sha256').update(JSON.stringify(shop.products)).digest('hex'),
        'a6b6ce488e2bed0f146f60ba597b8c1f24e7fa99791b146237c202b6da0f8a25',
    );
    const $home = load(await html(shop, '/'));
    const featured = $home('a.featured-link')
        .map((_, a) => $home(a).attr('href')!.split('?')[0])
        .get();
    assert.deepEqual(featured, ['/p/121', '/p/111', '/p/105', '/p/200', '/p/73']);
    const $product = load(await html(shop, shop.products[0]!.path));
    const related = $product('a.related-link')
        .map((_, a) => $product(a).attr('href')!.split('?')[0])
        .get();
    assert.deepEqual(related, [
        '/products/everyday-linen-clock-171',
        '/products/deluxe-brass-basket-36',
        '/products/elegant-linen-vase-151',
    ]);
    assert.deepEqual(shop.persistentFailurePaths, []);
    assert.deepEqual(shop.retryAfterPaths, []);
    const links = await listingLinks(shop);
    assert.deepEqual(links.sort(), [...shop.products.map((p) => p.path), ...shop.notFoundPaths].sort());
    for (const product of shop.products.filter((p) => !p.transientFailure)) {
        const response = await get(shop, product.path);
        assert.equal(response.status, 200);
        assert.equal(response.headers.get('retry-after'), null);
        await response.arrayBuffer();
    }
});

test('the opt-in failure modes leave the seeded catalog and its transient failures as they were', async (t) => {
    const options: ShopOptions = {
        seed: 3,
        products: 60,
        categories: 3,
        productsPerPage: 8,
        transientFailureRate: 0.2,
    };
    const [plain, extended] = await Promise.all([
        openShop(t, options),
        openShop(t, {
            ...options,
            transientFailureKinds: ['hang', '503'],
            persistentFailures: 4,
            retryAfter: { rate: 0.25, seconds: 2 },
        }),
    ]);
    assert.deepEqual(extended.products, plain.products);
    assert.deepEqual(extended.notFoundPaths, plain.notFoundPaths);
    assert.deepEqual(extended.listingPaths, plain.listingPaths);
    // A listing page shows the same cards in the same order once the broken ones are taken out.
    const broken = new Set(extended.persistentFailurePaths);
    const cards = async (shop: Shop, path: string) => {
        const $ = load(await html(shop, path));
        return $('article.product-card')
            .map((_, card) => $.html(card))
            .get()
            .filter((card) => ![...broken].some((b) => card.includes(`href="${b}?`)));
    };
    let brokenCards = 0;
    for (const path of plain.listingPaths) {
        const [withBroken, without] = [await cards(extended, path), await cards(plain, path)];
        assert.deepEqual(withBroken, without, path);
        brokenCards += load(await html(extended, path))('article.product-card').length - withBroken.length;
    }
    assert.equal(brokenCards, 4);
});

test(`transientFailureKinds: the failing products cycle through \
the kinds; hang holds the request until the client gives up`, {
    timeout: 10_000,
}, async (t) => {
    const shop = await openShop(t, {
        products: 40,
        transientFailureRate: 0.25,
        transientFailureKinds: ['503', 'reset', 'hang'],
    });
    const failing = shop.products.filter((p) => p.transientFailure);
    assert.equal(failing.length, 10);
    const started = performance.now();
    const first = await Promise.all(
        failing.map((p) => outcome(shop, p.path, 300).then((o) => ({ o, ms: performance.now() - started }))),
    );
    assert.deepEqual(first.map((f) => f.o).sort(), [
        503,
        503,
        503,
        503,
        'reset',
        'reset',
        'reset',
        'timeout',
        'timeout',
        'timeout',
    ]);
    assert.ok(
        first.filter((f) => f.o === 'timeout').every((f) => f.ms >= 290),
        'a hanging request stays open until the client gives up',
    );
    // The failure is the first request's only: every product answers now, the hanging ones too.
    for (const product of failing) assert.equal(await outcome(shop, product.path, 2000), 200, product.path);
    const stats = shop.stats();
    const byPath = failing.map((p) => stats.byPath[p.path]!);
    assert.equal(byPath.filter((o) => o.hang === 1 && o['200'] === 1 && Object.keys(o).length === 2).length, 3);
    assert.equal(byPath.filter((o) => o['503'] === 1 && o['200'] === 1).length, 4);
    assert.equal(byPath.filter((o) => o.reset === 1 && o['200'] === 1).length, 3);
    for (const product of failing) assert.equal(shop.requestTimes(product.path).length, 2);

    // Only hangs: every failing product hangs once, and the same products fail as with the default kinds.
    const hangs = await openShop(t, { products: 40, transientFailureRate: 0.25, transientFailureKinds: ['hang'] });
    assert.deepEqual(hangs.products, shop.products);
    const product = failing[0]!;
    const before = performance.now();
    assert.equal(await outcome(hangs, product.path, 300), 'timeout');
    assert.ok(performance.now() - before >= 290);
    assert.equal(await outcome(hangs, product.path, 2000), 200);
    assert.deepEqual(hangs.stats().byPath[product.path], { hang: 1, '200': 1 });
});

test('a hanging request gets no bytes at all, and close() drops it at once', { timeout: 10_000 }, async (t) => {
    const shop = await startShop({ products: 10, transientFailureRate: 0.5, transientFailureKinds: ['hang'] });
    let closed = false;
    t.after(() => (closed ? undefined : shop.close()));
    const hanging = shop.products.filter((p) => p.transientFailure).slice(0, 3);
    const sockets = hanging.map((product) => {
        const socket = connect(shop.port, '127.0.0.1');
        socket.write(`GET ${product.path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
        const received: Buffer[] = [];
        socket.on('data', (chunk: Buffer) => received.push(chunk));
        socket.on('error', () => {});
        return { socket, received, closed: once(socket, 'close') };
    });
    // Wait until the shop has taken all three in, then a while longer.
    while (shop.stats().total < 3) await sleep(10);
    await sleep(200);
    for (const { socket, received } of sockets) {
        assert.equal(Buffer.concat(received).length, 0, 'no bytes while hanging');
        assert.ok(!socket.destroyed, 'the socket stays open');
    }
    assert.equal(hanging.filter((p) => shop.stats().byPath[p.path]?.hang === 1).length, 3);

    closed = true;
    const closing = shop.close();
    const ending = await Promise.race([
        Promise.all([closing, ...sockets.map((s) => s.closed)]).then(() => 'dropped'),
        sleep(1000).then(() => 'stuck'),
    ]);
    // Whatever happened, let a stuck close() finish.
    for (const { socket } of sockets) socket.destroy();
    await closing;
    assert.equal(ending, 'dropped', 'close() returned and dropped the hanging connections within 1 s');
    for (const { received } of sockets) assert.equal(Buffer.concat(received).length, 0);
});

test('persistentFailures: /products/broken-<n> links on the listing pages always answer 503', async (t) => {
    const shop = await openShop(t, {
        products: 30,
        categories: 2,
        productsPerPage: 5,
        notFoundLinks: 2,
        persistentFailures: 3,
    });
    assert.deepEqual(shop.persistentFailurePaths, ['/products/broken-1', '/products/broken-2', '/products/broken-3']);
    const products = new Set(shop.products.map((p) => p.path));
    for (const path of shop.persistentFailurePaths) {
        assert.ok(!products.has(path) && !shop.notFoundPaths.includes(path));
        // The demo-shop site takes them for product pages, so a crawl retries them.
        assert.equal(siteDefinition.routeFor(undefined, new URL(path, shop.url))?.label, 'product', path);
    }
    // Linked exactly once each from the listing pages, alongside the products and dead links.
    const links = await listingLinks(shop);
    assert.deepEqual(links.sort(), [...products, ...shop.notFoundPaths, ...shop.persistentFailurePaths].sort());

    for (const path of shop.persistentFailurePaths) {
        for (let i = 0; i < 4; i++) assert.equal(await outcome(shop, `${path}?utm_source=x`, 2000), 503, path);
        assert.deepEqual(shop.stats().byPath[path], { '503': 4 });
    }
    shop.resetStats();
    assert.equal(await outcome(shop, shop.persistentFailurePaths[0]!, 2000), 503, 'still failing after resetStats');
    assert.equal(await outcome(shop, '/products/broken-4', 2000), 404);
});

test('retryAfter: the first request of those products gets 429 with Retry-After, later ones 200', async (t) => {
    const shop = await openShop(t, { products: 40, transientFailureRate: 0.25, retryAfter: { rate: 0.2, seconds: 7 } });
    assert.equal(shop.retryAfterPaths.length, 8);
    const productPaths = new Set(shop.products.map((p) => p.path));
    const transient = new Set(shop.products.filter((p) => p.transientFailure).map((p) => p.path));
    assert.equal(new Set(shop.retryAfterPaths).size, 8);
    for (const path of shop.retryAfterPaths) assert.ok(productPaths.has(path) && !transient.has(path), path);

    for (const path of shop.retryAfterPaths) {
        const first = await get(shop, `${path}?utm_source=x`);
        assert.equal(first.status, 429);
        assert.equal(first.headers.get('retry-after'), '7');
        await first.arrayBuffer();
        for (let i = 0; i < 2; i++) {
            const later = await get(shop, path);
            assert.equal(later.status, 200);
            assert.equal(later.headers.get('retry-after'), null);
            await later.arrayBuffer();
        }
        assert.deepEqual(shop.stats().byPath[path], { '429': 1, '200': 2 });
    }
    const others = shop.products.filter((p) => !p.transientFailure && !shop.retryAfterPaths.includes(p.path));
    for (const product of others) {
        const response = await get(shop, product.path);
        assert.equal(response.status, 200, product.path);
        assert.equal(response.headers.get('retry-after'), null);
        await response.arrayBuffer();
    }

    // The status can be 503 and the wait 0; the same seed picks the same products.
    const again = await openShop(t, {
        products: 40,
        transientFailureRate: 0.25,
        retryAfter: { rate: 0.2, seconds: 0, status: 503 },
    });
    assert.deepEqual(again.retryAfterPaths, shop.retryAfterPaths);
    const first = await get(again, again.retryAfterPaths[0]!);
    assert.equal(first.status, 503);
    assert.equal(first.headers.get('retry-after'), '0');
    await first.arrayBuffer();
    assert.equal(await outcome(again, again.retryAfterPaths[0]!, 2000), 200);

    // Never more than the products that do not fail transiently.
    const crowded = await openShop(t, { products: 10, transientFailureRate: 0.5, retryAfter: { rate: 1, seconds: 1 } });
    assert.equal(crowded.retryAfterPaths.length, 5);
});

test('requestTimes: the arrival time of every counted request, in order; resetStats forgets them', async (t) => {
    const shop = await openShop(t, { products: 10, latencyMs: 200, rateLimit: { maxConcurrent: 1 } });
    const sent: number[] = [];
    const done: number[] = [];
    for (const path of ['/', '/?utm_source=x', '/']) {
        sent.push(Date.now());
        assert.equal((await get(shop, path)).status, 200);
        done.push(Date.now());
    }
    const times = shop.requestTimes('/');
    assert.equal(times.length, 3);
    times.forEach((time, i) => {
        assert.ok(time >= sent[i]!, 'not before the request was sent');
        // Taken at arrival, before the 200 ms latency, not when the answer went out.
        assert.ok(time + 190 <= done[i]!, `arrival ${time}, answered ${done[i]}`);
    });
    assert.deepEqual(
        [...times].sort((a, b) => a - b),
        times,
    );

    // Refusals and 404s count, /__stats does not; the result is a copy.
    const [served, refused] = await Promise.all([
        get(shop, '/nope'),
        (async () => {
            await sleep(50);
            return get(shop, '/nope');
        })(),
    ]);
    assert.deepEqual([served.status, refused.status], [404, 429]);
    assert.equal(shop.requestTimes('/nope').length, 2);
    await get(shop, '/__stats');
    assert.deepEqual(shop.requestTimes('/__stats'), []);
    assert.deepEqual(shop.requestTimes('/never'), []);
    shop.requestTimes('/').push(0);
    assert.equal(shop.requestTimes('/').length, 3);

    shop.resetStats();
    assert.deepEqual(shop.requestTimes('/'), []);
    assert.deepEqual(shop.requestTimes('/nope'), []);
    await get(shop, '/');
    assert.equal(shop.requestTimes('/').length, 1);
});

test('bad options for the opt-in failure modes are refused', async () => {
    await assert.rejects(startShop({ transientFailureKinds: [] }), RangeError);
    await assert.rejects(startShop({ transientFailureKinds: ['503', 'timeout' as 'hang'] }), RangeError);
    await assert.rejects(startShop({ persistentFailures: -1 }), RangeError);
    await assert.rejects(startShop({ persistentFailures: 1.5 }), RangeError);
    await assert.rejects(startShop({ retryAfter: { rate: 1.5, seconds: 1 } }), RangeError);
    await assert.rejects(startShop({ retryAfter: { rate: 0.1, seconds: 1.5 } }), RangeError);
    await assert.rejects(startShop({ retryAfter: { rate: 0.1, seconds: -1 } }), RangeError);
    await assert.rejects(startShop({ retryAfter: { rate: 0.1, seconds: 1, status: 500 as 503 } }), RangeError);
});
