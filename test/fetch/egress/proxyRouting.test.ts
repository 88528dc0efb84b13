/**
 * ProxyRouting.begin: a request waits for the site's turn before its tier is chosen, so the tier
 * follows what the site's outcomes say when it leaves. (No request is sent: begin only picks.)
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { ExitBreaker } from '../../../src/fetch/egress/exitBreaker.js';
import { Identities } from '../../../src/fetch/egress/identities.js';
import { SitePoliteness } from '../../../src/fetch/pacing/politeness.js';
import { ProxyRouting } from '../../../src/fetch/egress/proxyRouting.js';
import { resolveTiers } from '../../../src/fetch/egress/proxyTiers.js';
import { sectionOf, TierController } from '../../../src/fetch/egress/tierController.js';

describe('ProxyRouting.begin', () => {
    it(`chooses the tier once the turn comes: blocks seen while \
a request waited for it move that request up`, async () => {
        const tiers = resolveTiers([
            { name: 'dc', proxyUrls: ['http://127.0.0.1:9'] },
            { name: 'res', proxyUrls: ['http://127.0.0.1:10'] },
        ]);
        const breaker = new ExitBreaker();
        const controller = new TierController(tiers, { random: () => 1 });
        const politeness = new SitePoliteness({ maxRate: 4, jitter: 0 });
        const routing = new ProxyRouting({
            tiers,
            breaker,
            controller,
            politeness,
            identities: new Identities({ tiers, breaker }),
            close: async () => politeness.close(),
            log: pino({ level: 'silent' }),
        });
        const request = (n: number) => ({
            url: `http://127.0.0.1:8/premium/items/${n}`,
            label: 'product',
            userData: {},
        });
        const first = await routing.begin(request(1), 'http');
        assert.equal(first.tier, 0, 'no outcomes yet: the cheapest tier');
        // The next turn is 250 ms off; while the second request waits for it, its section is blocked again and again.
        const second = routing.begin(request(2), 'http');
        const section = sectionOf('product', new URL(request(2).url));
        for (let i = 0; i < 20; i++) controller.record(section, 0, 'blocked');
        assert.equal((await second).tier, 1, 'the tier it leaves on is the one the blocks call for');
        await routing.close();
    });
});
