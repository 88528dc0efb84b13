/**
 * Wiring, part of step 2 (build.ts): how the site's requests leave. Its tiers (the command line's,
 * else the site's, else direct), the exits' breaker, the sessions, the tier controller and the
 * politeness limiter, the breaker's verdicts and the last two shared through Redis by a distributed
 * fleet.
 */
import type { Logger } from 'pino';
import { ConfigError } from '../options/configError.js';
import type { ProxyOptions } from '../options/crawlOptions.js';
import { chromeRelease, FALLBACK_RELEASE } from '../fetch/egress/chromeRelease.js';
import { ExitBreaker } from '../fetch/egress/exitBreaker.js';
import { Identities } from '../fetch/egress/identities.js';
import { SitePoliteness } from '../fetch/pacing/politeness.js';
import { ProxyRouting } from '../fetch/egress/proxyRouting.js';
import { type ProxyTier, resolveTiers } from '../fetch/egress/proxyTiers.js';
import { INSTALL_HINT } from '../fetch/browser/chromium.js';
import { type Rung, wireRungs } from '../fetch/wire/wireRungs.js';
import { RedisExitVerdicts } from '../fetch/egress/redisExitVerdicts.js';
import { RedisTierCounts } from '../fetch/egress/redisTierCounts.js';
import { TIER_DEFAULTS, TierController } from '../fetch/egress/tierController.js';
import type { RobotsPolicy } from '../frontier/robots.js';
import type { Site } from '../site/site.js';
import type { RunStores } from './stores.js';

/** `robots`: the run's robots policy, once there is one (it fetches through this routing's cheapest tier). */
/**
 * `maxRetryAfterSecs`: the retry policy's, the longest a 429's
 * Retry-After cools the site (ProxyRoutingOptions.maxCoolMs).
 */
export async function buildRouting(
    site: Site,
    options: ProxyOptions,
    stores: RunStores,
    robots: () => RobotsPolicy | undefined,
    log: Logger,
    chromiumPath: string | undefined,
    maxRetryAfterSecs?: number,
): Promise<ProxyRouting> {
    const tiers = rungsOf(site, options, chromiumPath, log);
    // Sessions claim the release of the Chromium the browser stage renders with and the chrome profile sends by.
    const release = (chromiumPath && (await chromeRelease(chromiumPath))) || FALLBACK_RELEASE;
    const verdicts = stores.shared
        ? new RedisExitVerdicts({ redis: stores.shared.redis, key: `${stores.shared.keyPrefix}:exits` })
        : undefined;
    const breaker = new ExitBreaker({ onVerdict: verdicts?.publish });
    await verdicts?.follow(breaker);
    const halfLifeMillis = (options.tierController?.halfLifeSecs ?? TIER_DEFAULTS.halfLifeSecs) * 1000;
    const counts = stores.shared
        ? new RedisTierCounts({ redis: stores.shared.redis, key: `${stores.shared.keyPrefix}:tiers`, halfLifeMillis })
        : undefined;
    const politeness = new SitePoliteness({
        maxRate: options.maxRate ?? site.maxRate,
        crawlDelay: options.crawlDelay,
        maxCrawlDelaySecs: options.maxCrawlDelaySecs,
        crawlDelaySecs: (url) => robots()?.crawlDelaySecs(url),
        store: stores.shared ?? 'memory',
    });
    return new ProxyRouting({
        tiers,
        breaker,
        identities: new Identities({ tiers, breaker, maxUses: options.sessionMaxUses, release }),
        controller: new TierController(tiers, { ...options.tierController, counts, log }),
        politeness,
        maxCoolMs: maxRetryAfterSecs === undefined ? undefined : maxRetryAfterSecs * 1000,
        close: async () => {
            politeness.close();
            await Promise.all([counts?.close(), verdicts?.close()]);
        },
        log,
    });
}

/** The tiers in force on their wire profiles, checked; a mistake in them is the user's (one line, exit 2). */
function rungsOf(site: Site, options: ProxyOptions, chromiumPath: string | undefined, log: Logger): Rung[] {
    let tiers: ProxyTier[];
    try {
        tiers = resolveTiers(options.tiers ?? site.proxyTiers ?? [], options.tierCosts);
    } catch (error) {
        throw new ConfigError(
            `${options.tiers ? '--proxy-tier' : `site ${site.name}'s proxyTiers`}: ${(error as Error).message}`,
        );
    }
    const choice = options.wire ?? site.wire ?? 'auto';
    const rungs = wireRungs(tiers, choice, chromiumPath !== undefined);
    if (chromiumPath === undefined && rungs.some((rung) => rung.wire === 'chrome'))
        throw new ConfigError(
            `the chrome wire profile (${options.wire ? '--wire' : `site ${site.name}`}) sends with Chromium, and ` +
                `there is none: ${INSTALL_HINT}`,
        );
    if (choice === 'auto' && chromiumPath === undefined)
        log.info('no Chromium: every request goes out on the fast wire profile (docs/identities.md)');
    return rungs;
}
