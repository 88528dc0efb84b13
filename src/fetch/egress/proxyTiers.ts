/**
 * Proxy tiers: the exits a site's requests may leave by, cheapest first. A tier is a list of
 * proxy URLs, or `direct` (the machine's own address). No tiers: one direct tier, as without
 * proxies. The tier controller (tierController.ts) decides which tier a request takes.
 */
import type { ProxyTierDefinition } from '../../site/site.js';
import { redactUrl } from '../../vocabulary/redact.js';
import { WIRE_PROFILES, type WireProfile } from '../../vocabulary/wire.js';

export type { ProxyTierDefinition };

export interface ProxyTier {
    name: string;
    /** Empty for a direct tier. */
    proxyUrls: readonly string[];
    cost: number;
    /** The tier's own wire profile; undefined: the run's choice (wire/wireRungs.ts). */
    wire?: WireProfile;
}

/** Each tier costs this many times the one before, unless told otherwise. */
export const TIER_COST_FACTOR = 10;

const TIER_NAME = /^[a-z0-9][a-z0-9_-]*$/i;

/** How to write a password holding the spec's separators. */
const ENCODE_HINT = 'a , or = in a password is written %2C, %3D';

/**
 * `NAME=URL[,URL...]`, `NAME=direct` or `direct` (a tier named `direct`), as `--proxy-tier` takes it.
 * A spec that does not parse is never echoed: a password cut by a separator would show.
 */
export function parseTierSpec(spec: string): ProxyTierDefinition {
    const text = spec.trim();
    if (text === 'direct') return { name: 'direct', proxyUrls: 'direct' };
    const equals = text.indexOf('=');
    const name = text.slice(0, Math.max(equals, 0));
    if (equals <= 0 || !TIER_NAME.test(name))
        throw new Error(`must be NAME=URL[,URL...] or direct, its NAME letters, digits, - and _ (${ENCODE_HINT})`);
    const urls = text
        .slice(equals + 1)
        .split(',')
        .map((url) => url.trim())
        .filter(Boolean);
    if (urls.length === 0) throw new Error(`tier ${name} names no proxy URL (write ${name}=direct for none)`);
    return { name, proxyUrls: urls.length === 1 && urls[0] === 'direct' ? 'direct' : urls };
}

/** `NAME=COST`, as `--proxy-tier-cost` takes it. */
export function parseTierCost(spec: string): { name: string; cost: number } {
    const [, name, given] = /^([^=]+)=(.+)$/.exec(spec.trim()) ?? [];
    const cost = Number(given);
    if (name === undefined || !(cost > 0 && Number.isFinite(cost)))
        throw new Error(`"${spec}" is not NAME=COST with a cost above 0`);
    return { name, cost };
}

/**
 * The tiers in order, each URL checked and each cost filled in (`costs` by name override the
 * definitions' own). Throws on a bad name, URL or duplicate, naming URLs without their passwords.
 */
export function resolveTiers(
    definitions: readonly ProxyTierDefinition[],
    costs: Readonly<Record<string, number>> = {},
): ProxyTier[] {
    const unknownCost = Object.keys(costs).find((name) => !definitions.some((definition) => definition.name === name));
    if (unknownCost !== undefined)
        throw new Error(`--proxy-tier-cost names tier ${unknownCost}, which is not configured`);
    if (definitions.length === 0) return [{ name: 'direct', proxyUrls: [], cost: 1 }];
    const names = new Set<string>();
    let previousCost = 0;
    const tiers = definitions.map((definition) => {
        const { name } = definition;
        if (!TIER_NAME.test(name)) throw new Error(`proxy tier name "${name}" must be letters, digits, - and _`);
        if (names.has(name)) throw new Error(`proxy tier ${name} is given twice`);
        names.add(name);
        const given = definition.proxyUrls === 'direct' ? undefined : definition.proxyUrls;
        // A tier named `direct` is the machine's own address, whatever else it says.
        if (name === 'direct' && given?.length)
            throw new Error("a tier named direct takes no proxy URLs (it is the machine's own address)");
        const proxyUrls = (given ?? []).map((url) => checkedProxyUrl(name, url));
        const cost = costs[name] ?? definition.cost ?? (previousCost === 0 ? 1 : previousCost * TIER_COST_FACTOR);
        if (!(cost > 0 && Number.isFinite(cost))) throw new Error(`proxy tier ${name}: cost must be above 0`);
        previousCost = cost;
        if (definition.wire !== undefined && !(WIRE_PROFILES as readonly string[]).includes(definition.wire))
            throw new Error(`proxy tier ${name}: wire must be one of ${WIRE_PROFILES.join(', ')}`);
        return { name, proxyUrls, cost, ...(definition.wire ? { wire: definition.wire } : {}) };
    });
    return tiers;
}

function checkedProxyUrl(tier: string, url: string): string {
    let parsed: URL;
    try {
        parsed = new URL(url);
    } catch {
        throw new Error(`proxy tier ${tier}: one of its proxies is not a URL (${ENCODE_HINT})`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
        throw new Error(`proxy tier ${tier}: ${redactUrl(url)} must be an http:// or https:// proxy`);
    }
    return parsed.href.replace(/\/$/, '');
}

/** A proxy's name where it is shown: host and port, never its credentials. `direct` for none. */
export function exitName(proxyUrl: string | undefined): string {
    if (!proxyUrl) return 'direct';
    const { host } = new URL(proxyUrl);
    return host;
}
