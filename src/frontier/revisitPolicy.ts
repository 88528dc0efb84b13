/**
 * When a known page is next worth fetching, from its own history: how often it was found changed
 * when it was looked at. The rate is Cho & Garcia-Molina's estimator for pages checked at roughly
 * regular intervals ("Estimating frequency of change", 2003):
 *
 *     λ̂ = −ln((n − X + 0.5) / (n + 0.5)) / Ī
 *
 * n checks, X of them found a change, Ī the mean time between checks. Unlike the naive X / (n·Ī)
 * it does not read "changed at every check" as "changes once per check" (a page that changed
 * between every pair of checks may have changed many times), and the ½ terms keep it finite. A
 * page is next due one expected change interval (1/λ̂) after its last check, within
 * `revisitMin`..`revisitMax`. Never seen to change, the estimate is 0 and the interval endless;
 * there the estimate of half a change is taken instead, so the interval grows with each quiet
 * check (2.5 Ī after one, 8.5 Ī after four), as StormCrawler's AdaptiveScheduler lengthens it,
 * rather than jumping to the bound.
 *
 * A page not looked at since its first capture has no interval to measure: it is due. A page not
 * due is due after all when the site's sitemap says it changed since its last check (`<lastmod>`)
 * or that it changes more often than that check is old (`<changefreq>`).
 *
 * Which due pages first, when a budget cannot take them all: the most likely changed since their
 * last check, 1 − e^(−λ̂·t) for a Poisson process at the estimated rate, so in order of λ̂·t (the
 * histories order by it in SQL); pages with no estimate before all.
 */
import type { CheckHistory, RevisitBounds } from '../vocabulary/knownPage.js';

export type { RevisitBounds } from '../vocabulary/knownPage.js';

export const REVISIT_DEFAULTS = { revisitMin: 0, revisitMax: 7 * 24 * 3600 * 1000 } as const;

/** Changes per ms, by the estimator above; undefined with fewer than one interval to judge by. */
export function changeRate(history: CheckHistory): number | undefined {
    const { checks: n, changes } = history;
    const meanInterval = (history.lastCheckedAt - history.firstCheckedAt) / n;
    if (n < 1 || !(meanInterval > 0)) return undefined;
    const x = Math.max(changes, 0.5);
    return -Math.log((n - Math.min(x, n) + 0.5) / (n + 0.5)) / meanInterval;
}

/** When the page is next due (whole ms since the epoch). */
export function nextDueAt(history: CheckHistory, bounds: RevisitBounds = {}): number {
    const { revisitMin, revisitMax } = { ...REVISIT_DEFAULTS, ...bounds };
    const rate = changeRate(history);
    if (rate === undefined) return history.lastCheckedAt;
    const interval = Math.min(Math.max(1 / rate, revisitMin), Math.max(revisitMax, revisitMin));
    return Math.ceil(history.lastCheckedAt + interval);
}

const CHANGEFREQ_MS: Record<string, number> = {
    always: 0,
    hourly: 3_600_000,
    daily: 86_400_000,
    weekly: 7 * 86_400_000,
    monthly: 30 * 86_400_000,
    yearly: 365 * 86_400_000,
};

/** Whether a sitemap's entry says the page has changed since its last check (ms since the epoch: `now`). */
export function sitemapSaysDue(
    history: Pick<CheckHistory, 'lastCheckedAt'>,
    hints: { lastmod?: string; changefreq?: string },
    now: number,
): boolean {
    const lastmod = hints.lastmod === undefined ? Number.NaN : Date.parse(hints.lastmod);
    if (lastmod > history.lastCheckedAt) return true;
    const interval = CHANGEFREQ_MS[hints.changefreq ?? ''];
    return interval !== undefined && history.lastCheckedAt + interval <= now;
}
