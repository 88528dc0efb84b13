/**
 * The `auto` wire profile against a bot manager that refuses every handshake that is not Chrome's
 * on one section of a shop (test/helpers/handshakeGate.ts): the fixture shop, its last category
 * under `/premium/`, behind an HTTPS front that blocks a ClientHello without GREASE there. Node's
 * client (`fast`) has none, Chromium's network stack (`chrome`) has it, so the tier controller must
 * move that section, and only it, to the `direct+chrome` rung. With `wire: 'fast'` the same world
 * dead-letters the section as blocked: the gate is real.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { findChromium } from '../../../src/fetch/browser/chromium.js';
import type { LookupFunction } from '../../../src/fetch/egress/egress.js';
import type { CrawlOptions } from '../../../src/options/crawlOptions.js';
import { crawlShop, type ShopCrawl } from '../../helpers/crawlShop.js';
import { type HandshakeGate, startHandshakeGate } from '../../helpers/handshakeGate.js';

/** The front's name: clients send SNI as to a site, and Chromium's egress proxy resolves it through the run's lookup. */
const HOST = 'shop.test';
const GATED_PREFIX = '/premium/';
const GATED_SECTION = 'product /premium';
const executablePath = findChromium();

/** shop.test is the front on loopback, for the HTTP client and the egress proxy Chromium goes through. */
const lookup: LookupFunction = (hostname, options, callback) => {
    if (hostname !== HOST)
        return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
    if (typeof options === 'object' && options.all === true) callback(null, [{ address: '127.0.0.1', family: 4 }]);
    else callback(null, '127.0.0.1', 4);
};

type GatedRun = ShopCrawl & { gate: HandshakeGate };

/** 4 categories of 20 products, the last under `/premium/`, crawled through the gate. */
async function crawlGatedShop(options: Partial<CrawlOptions>): Promise<GatedRun> {
    let gate!: HandshakeGate;
    const run = await crawlShop(
        {
            seed: 49,
            products: 80,
            categories: 4,
            scriptOnlyRate: 0,
            transientFailureRate: 0,
            notFoundLinks: 0,
            // Only for its `/premium/` category: 127.0.0.1 (the gate) is let through everything, at any rate.
            antiBot: {
                hardCategory: true,
                residentialAddresses: ['127.0.0.1'],
                requireBrowserHeaders: false,
                ratePerSec: 10_000,
                burst: 10_000,
            },
        },
        { dnsLookup: lookup, chromiumPath: executablePath, ...options },
        {
            front: async (shop) =>
                (gate = await startHandshakeGate({ upstream: shop.url, gatedPrefix: GATED_PREFIX, hostname: HOST })),
        },
    );
    return { ...run, gate };
}

/** The figures the lead quotes: per rung, per section of the gate, the moves. */
function figures(run: GatedRun) {
    const { proxies } = run.summary;
    return {
        seconds: Math.round(run.seconds * 10) / 10,
        rungs: proxies.tiers.map(({ name, wire, cost, requests, ok, blocked }) => ({
            name,
            wire,
            cost,
            requests,
            ok,
            blocked,
        })),
        sections: proxies.sections,
        tierMoves: proxies.tierMoves.map(({ section, from, to, expectedCosts }) => ({
            section,
            from,
            to,
            expectedCosts,
        })),
        probes: proxies.probes,
        gate: run.gate.counts,
        stored: run.items.length,
        deadLettered: run.deadLetters.length,
    };
}

const pathOf = (url: string) => new URL(url).pathname;

describe('a shop whose /premium/ refuses any handshake but Chrome’s', {
    skip: executablePath ? false : 'no Chromium on this machine',
}, () => {
    describe('crawled on the auto wire profile', () => {
        let run: GatedRun;
        before(async () => {
            run = await crawlGatedShop({});
            console.log('auto:', JSON.stringify(figures(run), null, 2));
        });
        after(() => run?.close());

        it('stores every product and dead-letters nothing', () => {
            assert.deepEqual(
                run.deadLetters.map((entry) => `${entry.reason} ${entry.url}`),
                [],
            );
            const stored = new Set(run.items.map((item) => pathOf(item._url)));
            const missing = run.shop.products.filter((product) => !stored.has(product.path)).map((p) => p.path);
            assert.deepEqual(missing, []);
            assert.equal(run.items.length, run.shop.products.length);
        });

        it('moves the gated section, and only it, to the chrome rung, and fetches its products there', () => {
            const { proxies } = run.summary;
            assert.equal(proxies.sections[GATED_SECTION], 'direct+chrome');
            assert.ok(
                proxies.tierMoves.some((move) => move.section === GATED_SECTION && move.to === 'direct+chrome'),
                'the move is counted',
            );
            for (const [section, rung] of Object.entries(proxies.sections))
                if (!section.endsWith(' /premium')) assert.equal(rung, 'direct', `${section} stays on fast`);

            const premium = run.shop.products.filter((product) => product.path.startsWith(GATED_PREFIX));
            assert.ok(premium.length >= 15, `${premium.length} products in the gated section`);
            const gated = run.gate.counts['/premium']!;
            // Every request the gate let into /premium/ came with GREASE: each product at least once, on chrome.
            assert.equal(gated.passed, gated.grease);
            assert.ok(gated.passed >= premium.length + 1, `${gated.passed} passed for ${premium.length} products`);
            assert.ok(gated.gated > 0, 'the fast rung was tried there, and refused');
            const chrome = proxies.tiers.find((rung) => rung.name === 'direct+chrome')!;
            assert.equal(chrome.blocked, 0, 'no handshake of the chrome rung was refused');
        });

        it('loses no attempt but those the gate refused', () => {
            const { errorsByClass, proxies } = run.summary;
            assert.equal(errorsByClass.blocked, run.gate.counts['/premium']!.gated);
            assert.equal(errorsByClass.transient, 0, 'attempts failed in a world that fails nothing');
            for (const rung of proxies.tiers)
                assert.equal(rung.requests, rung.ok + rung.blocked, `${rung.name}: every attempt answered`);
        });

        it('keeps most of the other sections on the fast rung', () => {
            const others = Object.entries(run.gate.counts).filter(([section]) => section !== '/premium');
            const requests = others.reduce((sum, [, counts]) => sum + counts.requests, 0);
            const grease = others.reduce((sum, [, counts]) => sum + counts.grease, 0);
            const open = run.shop.products.filter((product) => !product.path.startsWith(GATED_PREFIX));
            assert.ok(requests >= open.length, `${requests} requests outside /premium/`);
            assert.ok(
                (requests - grease) / requests >= 0.8,
                `${requests - grease} of ${requests} requests outside /premium/ without GREASE`,
            );
            assert.ok(others.every(([, counts]) => counts.gated === 0));
        });
    });

    describe('crawled on the fast wire profile only', () => {
        let run: GatedRun;
        before(async () => {
            run = await crawlGatedShop({
                proxies: { wire: 'fast' },
                retry: { maxAttempts: 2, baseDelaySecs: 0.05, maxDelaySecs: 0.1 },
            });
            console.log('fast:', JSON.stringify(figures(run), null, 2));
        });
        after(() => run?.close());

        it('stores none of the gated section, dead-letters what it found of it as blocked, and stores the rest', () => {
            const stored = run.items.map((item) => pathOf(item._url));
            assert.deepEqual(
                stored.filter((path) => path.startsWith(GATED_PREFIX)),
                [],
            );
            const open = run.shop.products.filter((product) => !product.path.startsWith(GATED_PREFIX));
            assert.equal(run.items.length, open.length);

            assert.ok(run.deadLetters.length > 0);
            for (const entry of run.deadLetters) {
                assert.ok(pathOf(entry.url).startsWith(GATED_PREFIX), entry.url);
                assert.equal(entry.failureClass, 'blocked', `${entry.url}: ${entry.reason}`);
            }
            assert.deepEqual(
                run.summary.proxies.tiers.map((rung) => rung.name),
                ['direct'],
            );
            const gated = run.gate.counts['/premium']!;
            assert.deepEqual([gated.passed, gated.grease], [0, 0]);
            assert.equal(gated.gated, gated.requests);
        });
    });
});
