/**
 * Which proxy tier a site's requests take: the one with the lowest expected cost per stored page.
 * It learns from the failure classifier's outcomes (a success or a block on a tier), never from
 * retry counts, and forgets with a half-life, so a site that stopped blocking is seen to.
 *
 * A page tried first on tier t costs `cost(t)`, and when blocked there (share `b(t)`) is retried
 * one tier up, after the block itself cost something too (time, a retry, the exit's standing with
 * the site: `blockPenalty`, by default the next tier's cost): E(t) = cost(t) + b(t) × (penalty +
 * E(t + 1)), with E(last) = cost(last). The cheapest start wins: with each tier 10x the one before,
 * a section moves up once about half its requests are blocked below, and stays at 20%. Each
 * *section* of a site (a route and the URL's first path segment) learns on its own, falling back on
 * the whole site's figures while it has few of its own, so a section that blocks every datacenter
 * address goes up without dragging the rest of the site along. A small share of requests probes the
 * tier below, so a section comes back down when it can.
 */
import type { Logger } from 'pino';
import type { TierMove } from '../../vocabulary/report.js';
import type { ProxyTier } from './proxyTiers.js';

export interface TierControllerOptions {
    /** Share of a section's requests sent one tier below its own, to see whether that works again. Default: 0.05. */
    probeShare?: number;
    /** Outcomes count half as much after this many seconds. Default: 120. */
    halfLifeSecs?: number;
    /** A section's own outcomes on a tier outweigh the site's once there are this many. Default: 10. */
    sectionWeight?: number;
    /** What a block costs beyond its request, as a multiple of the next tier's cost. Default: 1. */
    blockPenalty?: number;
    /**
     * A section moves only when the new tier is at least this
     * much cheaper (a share of the current cost). Default: 0.05.
     */
    hysteresis?: number;
    /** Where the outcomes are kept: this process, or shared by the fleet (redisTierCounts.ts). Default: in memory. */
    counts?: TierCounts;
    log?: Logger;
    now?: () => number;
    random?: () => number;
}

export const TIER_DEFAULTS = {
    probeShare: 0.05,
    halfLifeSecs: 120,
    sectionWeight: 10,
    blockPenalty: 1,
    hysteresis: 0.05,
};

/** Outcomes on a tier, decayed to now. */
export interface TierTally {
    ok: number;
    blocked: number;
}

/** The store of outcomes by key (a section, or the site) and tier. */
export interface TierCounts {
    add(key: string, tier: number, outcome: keyof TierTally, now: number): void;
    get(key: string, tier: number, now: number): TierTally;
}

/** The key the whole site's outcomes are kept under. */
const SITE = '*';
/** With no outcomes at all a tier is taken to block this share: cheap tiers are tried first. */
const PRIOR_BLOCK_RATE = 0.05;

export class TierController {
    private readonly tiers: readonly ProxyTier[];
    private readonly probeShare: number;
    private readonly sectionWeight: number;
    private readonly hysteresis: number;
    private readonly blockPenalty: number;
    private readonly counts: TierCounts;
    private readonly log?: Logger;
    private readonly now: () => number;
    private readonly random: () => number;
    private readonly current = new Map<string, number>();
    readonly moves: TierMove[] = [];
    /** Requests sent below their section's tier. */
    probes = 0;

    constructor(tiers: readonly ProxyTier[], options: TierControllerOptions = {}) {
        this.tiers = tiers;
        this.probeShare = options.probeShare ?? TIER_DEFAULTS.probeShare;
        this.sectionWeight = options.sectionWeight ?? TIER_DEFAULTS.sectionWeight;
        this.hysteresis = options.hysteresis ?? TIER_DEFAULTS.hysteresis;
        this.blockPenalty = options.blockPenalty ?? TIER_DEFAULTS.blockPenalty;
        this.counts =
            options.counts ?? new MemoryTierCounts((options.halfLifeSecs ?? TIER_DEFAULTS.halfLifeSecs) * 1000);
        this.log = options.log;
        this.now = options.now ?? Date.now;
        this.random = options.random ?? Math.random;
    }

    /** The tier for a request of `section` that may not go below `floor` (it was blocked lower down). */
    tierFor(section: string, floor = 0): { tier: number; probe: boolean } {
        // The counts may have changed since this worker last recorded (a fleet's are shared; all decay).
        this.reconsiderWithSite(section, this.now());
        const own = this.current.get(section) ?? this.current.get(SITE) ?? 0;
        if (own > floor && this.random() < this.probeShare) {
            this.probes += 1;
            return { tier: own - 1, probe: true };
        }
        return { tier: Math.max(own, floor), probe: false };
    }

    /**
     * A request of `section` on `tier` got a usable page, or was blocked.
     * Exit faults and 429s are not the tier's doing: not recorded.
     */
    record(section: string, tier: number, outcome: keyof TierTally): void {
        const now = this.now();
        this.counts.add(section, tier, outcome, now);
        this.counts.add(SITE, tier, outcome, now);
        this.reconsiderWithSite(section, now);
    }

    /** Each known section's tier, by name. */
    sections(): Record<string, string> {
        return Object.fromEntries([...this.current].map(([section, tier]) => [section, this.tierAt(tier).name]));
    }

    private reconsiderWithSite(section: string, now: number): void {
        this.reconsider(SITE, now);
        this.reconsider(section, now);
    }

    /** Moves the section to the tier with the lowest expected cost, when that is clearly cheaper. */
    private reconsider(section: string, now: number): void {
        const from = this.current.get(section) ?? (section === SITE ? 0 : (this.current.get(SITE) ?? 0));
        const costs = this.expectedCosts(section, now);
        const cheapest = Math.min(...costs);
        const best = costs.indexOf(cheapest);
        const fromCost = costs[from];
        if (best === from || fromCost === undefined || cheapest > fromCost * (1 - this.hysteresis)) return;
        this.current.set(section, best);
        const move: TierMove = {
            section: section === SITE ? 'the site' : section,
            from: this.tierAt(from).name,
            to: this.tierAt(best).name,
            at: new Date(now).toISOString(),
            expectedCosts: costs.map(round),
        };
        this.moves.push(move);
        const rates = this.tiers
            .map((tier, index) => `${tier.name} ${Math.round(this.blockRate(section, index, now) * 100)}%`)
            .join(', ');
        this.log?.info(
            { tierMove: move },
            `proxy tier of ${move.section}: ${move.from} → ${move.to} (blocked: ${rates}; expected cost per ` +
                `page: ${move.expectedCosts.join(' / ')})`,
        );
    }

    /** E(t) for each tier t, cheapest start first. */
    private expectedCosts(section: string, now: number): number[] {
        const costs = new Array<number>(this.tiers.length);
        // From the top tier down: E(top) is its cost; below it, a block costs the penalty and a start one tier up.
        let above: ProxyTier | undefined;
        let expectedAbove = 0;
        for (let tier = this.tiers.length - 1; tier >= 0; tier--) {
            const own = this.tierAt(tier);
            const penalty = above ? this.blockPenalty * above.cost : 0;
            const expected = above
                ? own.cost + this.blockRate(section, tier, now) * (penalty + expectedAbove)
                : own.cost;
            costs[tier] = expected;
            above = own;
            expectedAbove = expected;
        }
        return costs;
    }

    private tierAt(index: number): ProxyTier {
        const tier = this.tiers[index];
        if (!tier) throw new RangeError(`no proxy tier ${index} of ${this.tiers.length}`);
        return tier;
    }

    /** The section's block rate on a tier, shrunk toward the site's while it has few outcomes there. */
    private blockRate(section: string, tier: number, now: number): number {
        // The site's figures start from a prior worth a section's weight, so one early block does not move the site.
        const site = this.counts.get(SITE, tier, now);
        const siteRate =
            (site.blocked + PRIOR_BLOCK_RATE * this.sectionWeight) / (site.ok + site.blocked + this.sectionWeight);
        if (section === SITE) return siteRate;
        const own = this.counts.get(section, tier, now);
        return (own.blocked + siteRate * this.sectionWeight) / (own.ok + own.blocked + this.sectionWeight);
    }
}

/** The section of a request: its route and the first segment of its path (`detail /products`). */
export function sectionOf(label: string | undefined, url: URL): string {
    const first = url.pathname.split('/')[1] ?? '';
    return `${label ?? '?'} /${first}`;
}

/** Outcomes in this process, each decayed by its age. */
export class MemoryTierCounts implements TierCounts {
    private readonly tallies = new Map<string, { ok: number; blocked: number; at: number }>();

    constructor(private readonly halfLifeMillis: number) {}

    /** The tallies of a Redis hash as redisTierCounts.ts stores them: `<field>:ok`, `:blocked`, `:at`, flattened. */
    static fromTable(table: readonly string[], halfLifeMillis: number): MemoryTierCounts {
        const counts = new MemoryTierCounts(halfLifeMillis);
        for (let index = 0; index + 1 < table.length; index += 2) {
            const [, field, part] = /^(.*):(ok|blocked|at)$/.exec(table[index] ?? '') ?? [];
            if (!field || !part) continue;
            let tally = counts.tallies.get(field);
            if (!tally) {
                tally = { ok: 0, blocked: 0, at: 0 };
                counts.tallies.set(field, tally);
            }
            tally[part as 'ok' | 'blocked' | 'at'] = Number(table[index + 1]);
        }
        return counts;
    }

    add(key: string, tier: number, outcome: keyof TierTally, now: number): void {
        this.decayed(`${key}|${tier}`, now)[outcome] += 1;
    }

    /** Adds outcomes to a field (`<key>|<tier>`). */
    addTally(field: string, { ok, blocked }: TierTally, now: number): void {
        const tally = this.decayed(field, now);
        tally.ok += ok;
        tally.blocked += blocked;
    }

    get(key: string, tier: number, now: number): TierTally {
        const { ok, blocked } = this.decayed(`${key}|${tier}`, now);
        return { ok, blocked };
    }

    private decayed(field: string, now: number): { ok: number; blocked: number; at: number } {
        let tally = this.tallies.get(field);
        if (!tally) {
            tally = { ok: 0, blocked: 0, at: now };
            this.tallies.set(field, tally);
        }
        const factor = 0.5 ** ((now - tally.at) / this.halfLifeMillis);
        tally.ok *= factor;
        tally.blocked *= factor;
        tally.at = now;
        return tally;
    }
}

const round = (value: number) => Math.round(value * 100) / 100;
