/**
 * The fixture shop's anti-bot mode (src/demo/antiBot.ts), reached through the proxy world
 * (test/helpers/proxyWorld.ts) so each proxy is a client address of its own: rate limit and budget,
 * browser headers, address-bound sessions, the JS challenge (solved by a real Chromium), the hard
 * category and Crawl-delay, and the answers dragnet's classifier must read as it reads Cloudflare's.
 */
import { before, after, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { load } from 'cheerio';
import siteDefinition from '../../routes/demo-shop.js';
import { startShop, type Shop, type ShopOptions } from '../../src/demo/shop.js';
import type { AntiBotOptions } from '../../src/demo/antiBotOptions.js';
import { CHROMIUM_ARGS, findChromium } from '../../src/fetch/browser/chromium.js';
import { checkResponse, detectBlock } from '../../src/fetch/failures/responseCheck.js';
import { startProxyWorld, type ProxyWorld } from '../helpers/proxyWorld.js';
import { type Answer, CHROME_HEADERS, direct, viaProxy } from '../helpers/proxyRequest.js';

let world: ProxyWorld;
/** Two datacenter proxies' URLs and addresses, and a residential one. */
let [dc1, dc2, res1] = ['', '', ''];
let [dc1Address, dc2Address, res1Address] = ['', '', ''];

before(async () => {
    world = await startProxyWorld();
    [dc1, dc2, res1] = [world.tiers[0]!.proxyUrls[0]!, world.tiers[0]!.proxyUrls[1]!, world.tiers[1]!.proxyUrls[0]!];
    [dc1Address, dc2Address] = [world.addresses.datacenter[0]!, world.addresses.datacenter[1]!];
    res1Address = world.addresses.residential[0]!;
});
after(() => world.close());

async function openShop(t: TestContext, antiBot: AntiBotOptions, options: ShopOptions = {}): Promise<Shop> {
    const shop = await startShop({ products: 20, categories: 2, transientFailureRate: 0, ...options, antiBot });
    t.after(() => shop.close());
    return shop;
}

const get = (shop: Shop, proxyUrl: string, path: string, headers: Record<string, string> = CHROME_HEADERS) =>
    viaProxy(proxyUrl, shop.url + path, headers);

/** Asserts the answer is the 1020 refusal, and that dragnet's classifier calls it a block by a bot manager. */
function assertRefused(answer: Answer, message?: string): void {
    assert.equal(answer.status, 403, message);
    assert.match(answer.body, /<title>Attention Required! \| Cloudflare<\/title>/, message);
    assert.match(answer.body, /Sorry, you have been blocked/);
    assert.equal(answer.headers.server, 'cloudflare');
    assert.match(String(answer.headers['cf-ray']), /^[0-9a-f]{16}-LHR$/);
    const verdict = detectBlock({ status: answer.status, headers: answer.headers, body: answer.body });
    assert.equal(verdict?.reason, 'http-403-blocked', message);
}

const FIREFOX_HEADERS: Record<string, string> = {
    'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0',
    accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
    'accept-language': 'en-US,en;q=0.5',
};

const sidOf = (answer: Answer) => /^sid=([0-9a-f]+); Path=\/$/.exec(answer.headers['set-cookie']?.[0] ?? '')?.[1];

test(`past the rate an address gets 429 with Retry-After and \
a small page; after the wait it is served again`, async (t) => {
    const shop = await openShop(t, { ratePerSec: 2, burst: 3, retryAfterSecs: 1, budget: 5 });
    for (let i = 0; i < 3; i++) assert.equal((await get(shop, dc1, '/')).status, 200);
    const limited = await get(shop, dc1, '/');
    assert.equal(limited.status, 429);
    assert.equal(limited.headers['retry-after'], '1');
    assert.match(limited.body, /Too Many Requests/);
    assert.ok(limited.body.length < 500);
    assert.equal(
        checkResponse(429, 'text/html', { headers: limited.headers, body: limited.body })?.failureClass,
        'transient',
    );
    assert.equal((await get(shop, dc2, '/')).status, 200, 'another address has a bucket of its own');
    await sleep(1000);
    assert.equal((await get(shop, dc1, '/')).status, 200);
    const stats = shop.antiBotStats().byAddress;
    assert.deepEqual(
        [
            stats[dc1Address]!.requests,
            stats[dc1Address]!.served,
            stats[dc1Address]!.limited,
            stats[dc1Address]!.overBudget,
        ],
        [5, 4, 1, 0],
    );
    assert.deepEqual(shop.stats().byPath['/'], { '200': 5, '429': 1 });
});

test(`an address that has received budget 429s is refused for \
good, robots.txt too; other addresses are not`, async (t) => {
    const shop = await openShop(t, { ratePerSec: 1, burst: 1, budget: 2 });
    assert.deepEqual(
        [(await get(shop, dc1, '/')).status, (await get(shop, dc1, '/')).status, (await get(shop, dc1, '/')).status],
        [200, 429, 429],
    );
    assertRefused(await get(shop, dc1, '/'));
    await sleep(1100);
    assertRefused(await get(shop, dc1, '/'), 'still refused once the bucket has refilled');
    assertRefused(await get(shop, dc1, '/robots.txt', {}));
    assert.equal((await get(shop, dc2, '/')).status, 200);
    const stats = shop.antiBotStats();
    assert.deepEqual([stats.byAddress[dc1Address]!.limited, stats.byAddress[dc1Address]!.overBudget], [2, 3]);
    assert.equal(stats.byAddress[dc2Address]!.overBudget, 0);
    assert.deepEqual(stats.blockedAddresses, [dc1Address]);
});

test(`browser headers: missing or inconsistent ones are refused, \
consistent ones served, robots.txt exempt`, async (t) => {
    const shop = await openShop(t, { ratePerSec: 100, burst: 100 });
    const { 'sec-ch-ua': _hints, ...withoutHints } = CHROME_HEADERS;
    const { 'accept-language': _language, ...withoutLanguage } = CHROME_HEADERS;
    const { accept: _accept, ...withoutAccept } = CHROME_HEADERS;
    const refused: Record<string, Record<string, string>> = {
        'no headers': {},
        curl: { 'user-agent': 'curl/8.5.0', accept: '*/*', 'accept-language': 'en' },
        'no accept-language': withoutLanguage,
        'no accept': withoutAccept,
        'Chrome without client hints': withoutHints,
        'client hints of another version': {
            ...CHROME_HEADERS,
            'sec-ch-ua': '"Chromium";v="119", "Google Chrome";v="119"',
        },
        'client hints of another brand only': { ...CHROME_HEADERS, 'sec-ch-ua': '"Not_A Brand";v="120"' },
    };
    for (const [name, headers] of Object.entries(refused)) assertRefused(await get(shop, dc1, '/', headers), name);
    const served: Record<string, Record<string, string>> = {
        Chrome: CHROME_HEADERS,
        'Firefox (no client hints to check)': FIREFOX_HEADERS,
        'HeadlessChrome with its Chromium brand': {
            ...CHROME_HEADERS,
            'user-agent':
                'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 ' +
                '(KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36',
            'sec-ch-ua': '"Chromium";v="120", "Not(A:Brand";v="24"',
        },
    };
    for (const [name, headers] of Object.entries(served))
        assert.equal((await get(shop, dc1, '/', headers)).status, 200, name);
    assert.equal((await get(shop, dc1, '/robots.txt', {})).status, 200);
    assert.deepEqual(shop.antiBotStats().byAddress[dc1Address]!.badHeaders, 7);
});

test(`a session cookie works from the address it was issued \
to only; user agents are recorded per session`, async (t) => {
    const shop = await openShop(t, { ratePerSec: 100, burst: 100 });
    const first = await get(shop, dc1, '/');
    const sid = sidOf(first);
    assert.ok(sid, `Set-Cookie: ${first.headers['set-cookie']}`);
    const again = await get(shop, dc1, '/', { ...CHROME_HEADERS, cookie: `sid=${sid}` });
    assert.equal(again.status, 200);
    assert.equal(again.headers['set-cookie'], undefined, 'a known sid is not replaced');
    assertRefused(await get(shop, dc2, '/', { ...CHROME_HEADERS, cookie: `sid=${sid}` }));
    const forged = await get(shop, dc2, '/', { ...CHROME_HEADERS, cookie: 'sid=0123456789abcdef' });
    assert.equal(forged.status, 200, 'an unknown sid is no theft: it is replaced');
    assert.ok(sidOf(forged) && sidOf(forged) !== sid);

    assert.equal((await get(shop, dc1, '/', { ...FIREFOX_HEADERS, cookie: `sid=${sid}` })).status, 200);
    const stats = shop.antiBotStats();
    assert.deepEqual(stats.userAgentsBySession[sid], [CHROME_HEADERS['user-agent'], FIREFOX_HEADERS['user-agent']]);
    assert.deepEqual(stats.userAgentsBySession[sidOf(forged)!], [CHROME_HEADERS['user-agent']]);
    assert.deepEqual([stats.byAddress[dc1Address]!.stolenSession, stats.byAddress[dc2Address]!.stolenSession], [0, 1]);
});

test('the JS challenge: its page, then a pass with the js_ok its script sets, from that address only', async (t) => {
    const shop = await openShop(t, { ratePerSec: 100, burst: 100, jsChallenge: true });
    const challenge = await get(shop, dc1, '/');
    assert.equal(challenge.status, 403);
    assert.equal(challenge.headers['cf-mitigated'], 'challenge');
    assert.match(challenge.body, /<title>Just a moment\.\.\.<\/title>/);
    assert.equal(detectBlock({ status: 403, headers: challenge.headers, body: challenge.body })?.reason, 'challenge');
    const script = load(challenge.body)('script').text();
    const token = /document\.cookie = "js_ok=([0-9a-f]{64}); path=\/"; location\.reload\(\);/.exec(script)?.[1];
    assert.ok(token, script);
    const sid = sidOf(challenge);
    assert.ok(sid, 'the challenge page sets the session cookie too');

    const passed = await get(shop, dc1, '/', { ...CHROME_HEADERS, cookie: `sid=${sid}; js_ok=${token}` });
    assert.equal(passed.status, 200);
    assert.match(passed.body, /Pinewood Supply Co\./);
    assert.equal(
        (await get(shop, dc1, shop.listingPaths[0]!, { ...CHROME_HEADERS, cookie: `js_ok=${token}` })).status,
        200,
    );
    const elsewhere = await get(shop, dc2, '/', { ...CHROME_HEADERS, cookie: `js_ok=${token}` });
    assert.equal(elsewhere.status, 403, 'a js_ok from another address is no pass');
    assert.equal(elsewhere.headers['cf-mitigated'], 'challenge');
    assert.equal((await get(shop, dc2, '/robots.txt', {})).status, 200, 'robots.txt is never challenged');
    assert.equal((await direct(`${shop.url}/__stats`)).status, 200);

    const stats = shop.antiBotStats();
    assert.deepEqual([stats.byAddress[dc1Address]!.challenged, stats.byAddress[dc1Address]!.challengesSolved], [1, 1]);
    assert.deepEqual([stats.byAddress[dc2Address]!.challenged, stats.byAddress[dc2Address]!.challengesSolved], [1, 0]);
    assert.deepEqual(stats.challengeSolvers, { [dc1Address]: [CHROME_HEADERS['user-agent']] });
});

test('a real Chromium behind a proxy passes the header check and solves the challenge', {
    timeout: 60_000,
}, async (t) => {
    const executablePath = findChromium();
    if (!executablePath) return t.skip('no Chromium on this machine');
    const shop = await openShop(t, { ratePerSec: 100, burst: 100, jsChallenge: true });
    const { chromium } = await import('playwright');
    const { username, password, host } = new URL(res1);
    const browser = await chromium.launch({
        executablePath,
        args: CHROMIUM_ARGS,
        proxy: { server: `http://${host}`, username, password },
    });
    t.after(() => browser.close());
    const page = await browser.newPage();
    await page.goto(`${shop.url}/`);
    await page.waitForFunction(() => document.title.includes('Pinewood'), null, { timeout: 15_000 });
    const stats = shop.antiBotStats();
    assert.deepEqual(Object.keys(stats.byAddress), [res1Address], 'every request came through the proxy');
    assert.deepEqual(
        [stats.byAddress[res1Address]!.challenged, stats.byAddress[res1Address]!.challengesSolved],
        [1, 1],
    );
    assert.equal(stats.byAddress[res1Address]!.badHeaders, 0);
    assert.match(stats.challengeSolvers[res1Address]![0]!, /HeadlessChrome\/\d+/);
    const sessions = Object.values(stats.userAgentsBySession);
    assert.equal(sessions.length, 1, 'the browser kept the one sid the challenge page set');
});

test(`hard category: under /premium/, refused to datacenter addresses \
without taking a token, served to residential ones`, async (t) => {
    const options: ShopOptions = { seed: 4, products: 30, categories: 3, productsPerPage: 5 };
    const shop = await openShop(
        t,
        { ratePerSec: 0.5, burst: 7, budget: 1, hardCategory: true, residentialAddresses: [res1Address] },
        options,
    );
    const plain = await startShop({ ...options, transientFailureRate: 0 });
    t.after(() => plain.close());
    const slug = shop.hardCategorySlug!;
    assert.equal(
        slug,
        load(await (await fetch(`${plain.url}/`)).text())('a.category-link')
            .last()
            .attr('href')!
            .split('/')
            .pop(),
    );
    const hard = shop.products.filter((p) => p.path.startsWith('/premium/items/'));
    assert.equal(hard.length, 10);
    shop.products.forEach((product, i) => {
        const before = plain.products[i]!;
        const expected = hard.includes(product) ? `/premium/items/${before.slug}-${before.id}` : before.path;
        assert.deepEqual(product, { ...before, path: expected });
    });
    assert.ok(shop.listingPaths.includes(`/premium/${slug}`) && shop.listingPaths.includes(`/premium/${slug}?page=2`));
    assert.equal(siteDefinition.routeFor(undefined, new URL(`/premium/${slug}?page=2`, shop.url))?.label, 'category');
    assert.equal(siteDefinition.routeFor(undefined, new URL(hard[0]!.path, shop.url))?.label, 'product');

    for (let i = 0; i < 5; i++) assertRefused(await get(shop, dc1, i % 2 ? hard[i]!.path : `/premium/${slug}`));
    assertRefused(await direct(`${shop.url}/premium/${slug}`, CHROME_HEADERS), '127.0.0.1 is datacenter');
    for (let i = 0; i < 7; i++) assert.equal((await get(shop, dc1, '/')).status, 200, 'no token was taken');
    assert.equal((await get(shop, dc1, '/')).status, 429, 'the eighth request finds the bucket empty');

    const home = load((await get(shop, res1, '/')).body);
    assert.ok(
        home('a.category-link')
            .map((_, a) => home(a).attr('href'))
            .get()
            .includes(`/premium/${slug}`),
    );
    const listing = await get(shop, res1, `/premium/${slug}`);
    assert.equal(listing.status, 200);
    const $listing = load(listing.body);
    const links = $listing('a.product-link')
        .map((_, a) => $listing(a).attr('href')!.split('?')[0])
        .get();
    assert.ok(links.includes(hard[0]!.path), 'the listing links its products at their premium paths');
    assert.equal((await get(shop, res1, hard[0]!.path)).status, 200);
    assert.equal((await get(shop, res1, plain.products[0]!.path)).status, 200);

    const stats = shop.antiBotStats();
    assert.deepEqual([stats.byAddress[dc1Address]!.hardBlocked, stats.byAddress[dc1Address]!.limited], [5, 1]);
    assert.equal(stats.byAddress['127.0.0.1']!.hardBlocked, 1);
    assert.deepEqual(stats.servedByCategory[res1Address], {
        [slug]: { listings: 1, products: 1 },
        [plain.products[0]!.category.toLowerCase()]: { listings: 0, products: 1 },
    });
    assert.equal(stats.servedByCategory[dc1Address], undefined);
});

test('robots.txt: Crawl-delay when asked for, next to the Disallow it always has', async (t) => {
    const shop = await openShop(t, { crawlDelaySecs: 2 });
    assert.equal((await get(shop, dc1, '/robots.txt')).body, 'User-agent: *\nCrawl-delay: 2\nDisallow: /admin/\n');
    const without = await openShop(t, {});
    assert.equal((await get(without, dc1, '/robots.txt')).body, 'User-agent: *\nDisallow: /admin/\n');
});

test(`stats: /__stats serves them under antiBot with every \
arrival; resetStats zeroes them but not the policy`, async (t) => {
    const shop = await openShop(t, { ratePerSec: 1, burst: 1, budget: 1 });
    const started = Date.now();
    await get(shop, dc1, '/');
    await get(shop, dc1, '/');
    await get(shop, dc2, '/nope');
    const served = (await (await fetch(`${shop.url}/__stats`)).json()) as { total: number; antiBot: unknown };
    const stats = shop.antiBotStats();
    assert.deepEqual(served.antiBot, stats);
    assert.equal(served.total, 3);
    assert.equal(stats.arrivals.length, 3, '/__stats is not counted');
    assert.ok(stats.arrivals.every((at, i) => at >= started && at <= Date.now() && at >= (stats.arrivals[i - 1] ?? 0)));
    assert.deepEqual(stats.byAddress[dc2Address], {
        requests: 1,
        served: 0,
        limited: 0,
        overBudget: 0,
        badHeaders: 0,
        stolenSession: 0,
        challenged: 0,
        challengesSolved: 0,
        hardBlocked: 0,
    });

    shop.resetStats();
    assert.deepEqual(shop.antiBotStats(), {
        byAddress: {},
        servedByCategory: {},
        userAgentsBySession: {},
        challengeSolvers: {},
        blockedAddresses: [dc1Address],
        arrivals: [],
    });
    assertRefused(await get(shop, dc1, '/'), 'still over budget after the reset');

    const off = await startShop({ products: 5 });
    t.after(() => off.close());
    assert.equal((await direct(`${off.url}/`)).status, 200, 'without antiBot nothing is asked of a client');
    assert.equal('antiBot' in (await (await fetch(`${off.url}/__stats`)).json()), false);
    assert.deepEqual(off.antiBotStats().byAddress, {});
});

test('bad anti-bot options are refused', async () => {
    for (const antiBot of [
        { ratePerSec: 0 },
        { burst: 0 },
        { budget: 0 },
        { retryAfterSecs: 1.5 },
        { crawlDelaySecs: -1 },
        { datacenterAddresses: ['127.0.0.2'], residentialAddresses: ['127.0.0.2'] },
    ]) {
        await assert.rejects(startShop({ antiBot }), RangeError, JSON.stringify(antiBot));
    }
});
