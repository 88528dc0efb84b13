/**
 * Three workers of one fleet through the same proxies, against the fixture shop's anti-bot mode:
 * the site's Crawl-delay and each proxy address's 429 budget hold for the fleet as they would for
 * one worker, because the politeness turns and the tier controller's outcomes are shared in Redis.
 * Were each worker spacing its own requests, the shop would see three times the rate, and each
 * address would go over its per-address limit and then its budget.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertEveryProductOnce, assertExited, chromiumPath, type Fleet, startFleet } from '../helpers/fleet.js';
import { peakInWindow } from '../helpers/arrivals.js';
import { startProxyWorld, type ProxyWorld } from '../helpers/proxyWorld.js';

const CRAWL_DELAY_SECS = 0.05;

describe('three workers through the same proxies', { skip: chromiumPath ? false : 'no Chromium found' }, () => {
    let world: ProxyWorld;
    let fleet: Fleet;

    before(async () => {
        world = await startProxyWorld({ datacenter: 3, residential: 1, broken: 0 });
        fleet = await startFleet(
            3,
            {
                seed: 31,
                products: 300,
                categories: 5,
                scriptOnlyRate: 0,
                transientFailureRate: 0,
                notFoundLinks: 0,
                // Three addresses at 10/s each hold 30/s; the site's Crawl-delay allows 20/s for the fleet.
                antiBot: {
                    datacenterAddresses: world.addresses.datacenter,
                    residentialAddresses: world.addresses.residential,
                    ratePerSec: 10,
                    burst: 10,
                    budget: 5,
                    hardCategory: true,
                    crawlDelaySecs: CRAWL_DELAY_SECS,
                },
            },
            // The world refuses addresses, not handshakes: on the fast profile alone the tiers are the two proxy tiers
            // (under auto each would have a chrome rung too; test/fetch/wire/handshakeGate.test.ts tests those).
            { args: () => [...world.tierSpecs().flatMap((spec) => ['--proxy-tier', spec]), '--wire', 'fast'] },
        );
        assertExited(await fleet.results());
    });
    after(async () => {
        await fleet?.close();
        await world?.close();
    });

    it('stores every product once', () => assertEveryProductOnce(fleet));

    it("keeps the site's Crawl-delay and each address's budget for the fleet as one worker would", () => {
        const stats = fleet.shop.antiBotStats();
        for (const [address, counts] of Object.entries(stats.byAddress))
            assert.equal(counts.overBudget, 0, `${address} went over its budget`);
        const peak = peakInWindow(stats.arrivals, 1000);
        const perSecond = 1 / CRAWL_DELAY_SECS;
        assert.ok(peak <= perSecond + 2, `${peak} requests within one second; the Crawl-delay allows ${perSecond}`);
    });

    it('learns the hard section once for the fleet: it is served through the residential tier only', async () => {
        const { servedByCategory } = fleet.shop.antiBotStats();
        const hard = fleet.shop.hardCategorySlug!;
        for (const address of world.addresses.datacenter)
            assert.equal(servedByCategory[address]?.[hard], undefined, `${address} was served the hard category`);
        const summaries = await fleet.summaries();
        assert.ok(summaries.every((summary) => summary.proxies.tiers.length === 2));
        const hardBlocked = Object.values(fleet.shop.antiBotStats().byAddress).reduce(
            (sum, counts) => sum + counts.hardBlocked,
            0,
        );
        const hardPages = fleet.shop.products.filter((product) => product.path.startsWith('/premium/')).length;
        assert.ok(
            hardBlocked < hardPages / 2,
            `${hardBlocked} datacenter requests were refused in the ` +
                `hard category of ${hardPages} pages: the fleet learned it`,
        );
    });
});
