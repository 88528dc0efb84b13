/**
 * The proxy world (test/helpers/proxyWorld.ts) in front of the fixture shop's anti-bot mode: each
 * proxy asks for its own credentials and reaches the shop from its own loopback address, over plain
 * HTTP and through CONNECT tunnels; the broken one refuses everything with 407.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { startShop, type Shop } from '../../src/demo/shop.js';
import { startProxyWorld, type ProxyWorld, type ProxyWorldOptions } from '../helpers/proxyWorld.js';
import { CHROME_HEADERS, direct, viaProxy, viaTunnel } from '../helpers/proxyRequest.js';

async function setUp(t: TestContext, options: ProxyWorldOptions = {}): Promise<{ world: ProxyWorld; shop: Shop }> {
    const world = await startProxyWorld(options);
    t.after(() => world.close());
    const shop = await startShop({ products: 20, transientFailureRate: 0, antiBot: { ratePerSec: 100, burst: 100 } });
    t.after(() => shop.close());
    return { world, shop };
}

test(`the default world: 4 datacenter proxies (the last broken) and 2 \
residential, on 127.0.0.2-7, with their own credentials`, async (t) => {
    const { world } = await setUp(t);
    assert.deepEqual(
        world.tiers.map((tier) => [tier.name, tier.proxyUrls.length]),
        [
            ['datacenter', 4],
            ['residential', 2],
        ],
    );
    assert.deepEqual(world.addresses, {
        datacenter: ['127.0.0.2', '127.0.0.3', '127.0.0.4'],
        residential: ['127.0.0.6', '127.0.0.7'],
    });
    const urls = world.tiers.flatMap((tier) => tier.proxyUrls).map((url) => new URL(url));
    assert.deepEqual(
        urls.map((url) => url.username),
        ['dc-1', 'dc-2', 'dc-3', 'dc-4', 'res-1', 'res-2'],
    );
    for (const url of urls) assert.equal(url.hostname, '127.0.0.1');
    assert.equal(new Set(urls.map((url) => url.port)).size, 6);
    assert.deepEqual(
        urls.map((url) => url.password),
        world.secrets,
    );
    assert.equal(new Set(world.secrets).size, 6);
    for (const secret of world.secrets) assert.match(secret, /^[0-9a-f]{24}$/);
    assert.deepEqual(world.brokenUrls, [world.tiers[0]!.proxyUrls[3]]);
    assert.deepEqual(
        world.tierSpecs(),
        world.tiers.map((tier) => `${tier.name}=${tier.proxyUrls.join(',')}`),
    );
    assert.deepEqual(
        world.stats().map((s) => [s.username, s.address, s.broken]),
        [
            ['dc-1', '127.0.0.2', false],
            ['dc-2', '127.0.0.3', false],
            ['dc-3', '127.0.0.4', false],
            ['dc-4', '127.0.0.5', true],
            ['res-1', '127.0.0.6', false],
            ['res-2', '127.0.0.7', false],
        ],
    );
    assert.ok(!JSON.stringify(world.stats()).includes(world.secrets[0]!), 'the stats hold no password');
});

test(`the shop sees each working proxy's own source address, \
over plain HTTP and through a CONNECT tunnel`, async (t) => {
    const { world, shop } = await setUp(t);
    const working = world.tiers.flatMap((tier) => tier.proxyUrls).filter((url) => !world.brokenUrls.includes(url));
    const addresses = [...world.addresses.datacenter, ...world.addresses.residential];
    for (const url of working) {
        assert.equal((await viaProxy(url, `${shop.url}/`, CHROME_HEADERS)).status, 200);
        assert.equal((await viaTunnel(url, `${shop.url}/?via=tunnel`, CHROME_HEADERS)).status, 200);
    }
    assert.equal((await direct(`${shop.url}/`, CHROME_HEADERS)).status, 200);
    const byAddress = shop.antiBotStats().byAddress;
    assert.deepEqual(Object.keys(byAddress).sort(), [...addresses, '127.0.0.1'].sort());
    for (const address of addresses)
        assert.deepEqual([byAddress[address]!.requests, byAddress[address]!.served], [2, 2], address);
    assert.equal(byAddress['127.0.0.1']!.requests, 1);
    for (const stats of world.stats().filter((s) => !s.broken)) {
        assert.deepEqual([stats.requests, stats.tunnels, stats.authFailures], [2, 1, 0], stats.username);
    }
});

test(`the broken proxy answers 407 to requests and CONNECTs whatever \
the credentials, as a working one does to wrong ones`, async (t) => {
    const { world, shop } = await setUp(t, { datacenter: 2, residential: 1, broken: 1 });
    const [broken] = world.brokenUrls;
    const plain = await viaProxy(broken!, `${shop.url}/`, CHROME_HEADERS);
    assert.equal(plain.status, 407);
    assert.match(String(plain.headers['proxy-authenticate']), /^Basic realm=/);
    assert.equal((await viaTunnel(broken!, `${shop.url}/`, CHROME_HEADERS)).status, 407);

    const working = new URL(world.tiers[0]!.proxyUrls[0]!);
    working.password = 'wrong';
    assert.equal((await viaProxy(working.href, `${shop.url}/`, CHROME_HEADERS)).status, 407);
    working.password = '';
    working.username = '';
    assert.equal((await viaTunnel(working.href, `${shop.url}/`, CHROME_HEADERS)).status, 407);

    assert.equal(shop.stats().total, 0, 'nothing reached the shop');
    assert.deepEqual(
        world.stats().map((s) => [s.username, s.authFailures, s.requests]),
        [
            ['dc-1', 2, 0],
            ['dc-2', 2, 0],
            ['res-1', 0, 0],
        ],
    );
    assert.deepEqual(
        world.tiers.map((tier) => tier.proxyUrls.length),
        [2, 1],
    );
    assert.deepEqual(world.addresses, { datacenter: ['127.0.0.2'], residential: ['127.0.0.4'] });
});

test('the proxies forward to 127.0.0.0/8 only', async (t) => {
    const { world, shop } = await setUp(t, { datacenter: 1, residential: 0, broken: 0 });
    const [url] = world.tiers[0]!.proxyUrls;
    // 0.0.0.0 would reach this machine too: refused all the same, and nothing arrives at the shop.
    assert.equal((await viaProxy(url!, `http://0.0.0.0:${shop.port}/`, CHROME_HEADERS)).status, 403);
    assert.equal((await viaTunnel(url!, `http://0.0.0.0:${shop.port}/`, CHROME_HEADERS)).status, 403);
    assert.equal(shop.stats().total, 0);
    assert.equal((await viaProxy(url!, `http://localhost:${shop.port}/`, CHROME_HEADERS)).status, 200);
    assert.deepEqual(Object.keys(shop.antiBotStats().byAddress), ['127.0.0.2']);
    assert.deepEqual(
        world.tiers.map((tier) => tier.name),
        ['datacenter'],
        'an empty tier is left out',
    );
    assert.equal(world.stats()[0]!.refusedTargets, 2);
});

test('bad proxy world options are refused', async () => {
    await assert.rejects(startProxyWorld({ datacenter: 1, broken: 2 }), RangeError);
    await assert.rejects(startProxyWorld({ residential: -1 }), RangeError);
    await assert.rejects(startProxyWorld({ firstAddress: 1 }), RangeError);
});
