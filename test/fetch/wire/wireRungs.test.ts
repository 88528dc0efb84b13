import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveTiers } from '../../../src/fetch/egress/proxyTiers.js';
import { CHROME_RUNG_COST_FACTOR, wireRungs } from '../../../src/fetch/wire/wireRungs.js';

const DC = 'http://user:pass@127.0.0.1:8001';
const RES = 'http://user:pass@127.0.0.1:8002';
const tiers = (residentialWire?: 'fast' | 'chrome') =>
    resolveTiers([
        { name: 'dc', proxyUrls: [DC] },
        { name: 'res', proxyUrls: [RES], ...(residentialWire ? { wire: residentialWire } : {}) },
    ]);
const shown = (rungs: ReturnType<typeof wireRungs>) => rungs.map(({ name, wire, cost }) => `${name}:${wire}:${cost}`);

describe('wireRungs', () => {
    it('climbs each tier on fast, then on chrome at twice its cost, below the next tier', () => {
        assert.equal(CHROME_RUNG_COST_FACTOR, 2);
        assert.deepEqual(shown(wireRungs(tiers(), 'auto', true)), [
            'dc:fast:1',
            'dc+chrome:chrome:2',
            'res:fast:10',
            'res+chrome:chrome:20',
        ]);
        const [, chrome] = wireRungs(tiers(), 'auto', true);
        assert.deepEqual(chrome?.proxyUrls, [DC], 'a chrome rung leaves by its tier’s proxies');
    });

    it('is one rung per tier on the profile chosen, and fast under auto without a Chromium', () => {
        assert.deepEqual(shown(wireRungs(tiers(), 'chrome', true)), ['dc:chrome:1', 'res:chrome:10']);
        assert.deepEqual(shown(wireRungs(tiers(), 'fast', true)), ['dc:fast:1', 'res:fast:10']);
        assert.deepEqual(shown(wireRungs(tiers(), 'auto', false)), ['dc:fast:1', 'res:fast:10']);
    });

    it('keeps a tier’s own profile whatever the run chose', () => {
        assert.deepEqual(shown(wireRungs(tiers('chrome'), 'auto', true)), [
            'dc:fast:1',
            'dc+chrome:chrome:2',
            'res:chrome:10',
        ]);
        assert.deepEqual(shown(wireRungs(tiers('fast'), 'chrome', true)), ['dc:chrome:1', 'res:fast:10']);
    });

    it('refuses a tier whose wire is no profile', () => {
        assert.throws(
            () => resolveTiers([{ name: 'dc', proxyUrls: [DC], wire: 'curl' as 'fast' }]),
            /proxy tier dc: wire must be one of fast, chrome/,
        );
    });
});
