/**
 * The rungs the tier controller climbs: each proxy tier on each wire profile it may use, cheapest
 * first. With `auto` (and a Chromium to send with) every tier is tried on `fast` first and on
 * `chrome` above it, so a section whose blocks stop on `chrome` moves there, as it would move to a
 * dearer proxy tier, and probes back down (tierController.ts). A tier or a choice that names one
 * profile is that one rung.
 */
import type { ProxyTier } from '../egress/proxyTiers.js';
import type { WireChoice, WireProfile } from '../../vocabulary/wire.js';

/**
 * A `chrome` rung costs its tier's cost times this: the tier controller's price for the real
 * handshake, dearer in CPU (docs/identities.md) but cheaper than the next proxy tier (10x by default).
 */
export const CHROME_RUNG_COST_FACTOR = 2;

/** A rung: a tier on one wire profile. */
export type Rung = ProxyTier & { wire: WireProfile };

/**
 * The rungs of `tiers` for the run's `choice`; `chromeAvailable` says whether there is a
 * Chromium to send `chrome` requests with. A tier that takes both profiles names its chrome rung `NAME+chrome`.
 */
export function wireRungs(tiers: readonly ProxyTier[], choice: WireChoice, chromeAvailable: boolean): Rung[] {
    const rungs = tiers.flatMap((tier): Rung[] => {
        if (tier.wire) return [{ ...tier, wire: tier.wire }];
        if (choice !== 'auto') return [{ ...tier, wire: choice }];
        if (!chromeAvailable) return [{ ...tier, wire: 'fast' }];
        return [
            { ...tier, wire: 'fast' },
            { ...tier, name: `${tier.name}+chrome`, wire: 'chrome', cost: tier.cost * CHROME_RUNG_COST_FACTOR },
        ];
    });
    // Stable: rungs of equal cost keep the order the tiers were given in.
    return rungs.sort((a, b) => a.cost - b.cost);
}
