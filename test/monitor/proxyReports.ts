/**
 * Proxy reports as fetch/egress/proxyRouting.ts `report()` gives them, for the monitor's tests. The tiered
 * one is made up after the test world of issue 17 (4 datacenter proxies, one of them broken, and 2
 * residential ones; a "hard" section moved to residential): each tier's counters are the sum of its
 * exits', so a table or metric that adds up wrongly shows.
 */
import type { ExitCounters, ProxyReport } from '../../src/vocabulary/report.js';

const zero: ExitCounters = { requests: 0, ok: 0, blocked: 0, limited: 0, exitFaults: 0, bytes: 0 };

/** A run with no proxy configured: one direct tier, one direct exit. */
export function directProxies(requests = 0): ProxyReport {
    const counters = { ...zero, requests, ok: requests, bytes: requests * 10_000 };
    return {
        tiers: [{ name: 'direct', cost: 1, wire: 'fast', ...counters }],
        exits: [{ tier: 'direct', name: 'direct', breakerOpened: 0, ...counters }],
        sessions: { created: 4, retired: { blocked: 0, 'max-uses': 1, errors: 0 } },
        sections: { '*': 'direct' },
        tierMoves: [],
        probes: 0,
        challengesToBrowser: 0,
        politeness: { acquired: requests, spaced: 0, waitedMs: 0, coolings: 0, cooledMs: 0 },
    };
}

/** Two tiers, six exits, one tier move 12 s after `startedAt`. */
export function tieredProxies(startedAt = '2026-11-29T23:18:00.000Z'): ProxyReport {
    const exit = (tier: string, port: number, counts: Partial<ExitCounters>, breakerOpened = 0) => ({
        tier,
        name: `127.0.0.1:${port}`,
        breakerOpened,
        ...zero,
        ...counts,
    });
    const exits = [
        exit('datacenter', 8001, { requests: 300, ok: 280, blocked: 12, limited: 5, bytes: 3_000_000 }),
        exit('datacenter', 8002, { requests: 290, ok: 270, blocked: 11, limited: 6, bytes: 2_900_000 }),
        exit('datacenter', 8003, { requests: 310, ok: 291, blocked: 9, limited: 7, bytes: 3_100_000 }),
        exit('datacenter', 8004, { requests: 40, exitFaults: 40 }, 4),
        exit('residential', 8005, { requests: 70, ok: 68, blocked: 1, bytes: 700_000 }),
        exit('residential', 8006, { requests: 65, ok: 64, bytes: 650_000 }),
    ];
    const tier = (name: string, cost: number) => {
        const sum = { ...zero };
        for (const one of exits.filter((candidate) => candidate.tier === name)) {
            for (const key of Object.keys(zero) as Array<keyof ExitCounters>) sum[key] += one[key];
        }
        return { name, cost, wire: 'fast' as const, ...sum };
    };
    return {
        tiers: [tier('datacenter', 1), tier('residential', 10)],
        exits,
        sessions: { created: 57, retired: { blocked: 33, 'max-uses': 12, errors: 2 } },
        sections: { 'product /lamps': 'datacenter', 'product /hard': 'residential', '*': 'datacenter' },
        tierMoves: [
            {
                section: 'product /hard',
                from: 'datacenter',
                to: 'residential',
                at: new Date(Date.parse(startedAt) + 12_000).toISOString(),
                expectedCosts: [14.2, 10],
            },
        ],
        probes: 9,
        challengesToBrowser: 3,
        politeness: { acquired: 1075, spaced: 400, waitedMs: 61_500, coolings: 2, cooledMs: 4_000 },
    };
}
