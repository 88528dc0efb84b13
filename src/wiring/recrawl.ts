/**
 * A recrawl's two ends (store/pageHistory.ts says what it starts from). At the start, the known
 * pages due by the revisit policy go through the frontier with what the history knows of them
 * (RequestData.known), navigation pages first and the rest most likely changed first, so a request
 * budget is spent where changes are; the ones not due are marked seen, so no link fetches them,
 * unless the site's sitemap says they changed (revisitPolicy.ts, `sitemapSaysDue`).
 * At the end of a recrawl that ran to its end, every live page it did not settle (not due, or out
 * of budget) keeps its items, stored in this run's dataset as unchanged. A page is removed only by
 * what the recrawl saw of it: a 404 or 410, or a redirect to another page.
 *
 * Seeding is idempotent (the seen-set keeps a page from being queued twice), so a resumed recrawl
 * and every worker of a fleet seed alike; carrying is too (a page carried is this run's).
 */
import type { Logger } from 'pino';
import type { Frontier } from '../frontier/frontier.js';
import { normalizeUrl, urlKey } from '../frontier/normalize.js';
import { REVISIT_DEFAULTS, type RevisitBounds, sitemapSaysDue } from '../frontier/revisitPolicy.js';
import type { SitemapHints } from '../frontier/sitemapParser.js';
import type { Link } from '../vocabulary/request.js';
import type { RunStats } from '../monitor/stats.js';
import type { PageHistory, SeriesRun } from '../store/pageHistory.js';
import type { RunStores } from './stores.js';

/** Keys per batch, into the seen-set and through the frontier. */
const BATCH = 1000;

/** What a run that is not resumed starts as: its place in the series, and what to do to the last run's results. */
export interface SeriesStart {
    series: SeriesRun;
    /** `purge`: a first run, the site emptied; `rotate`: the last run's results become `-previous`; `none`. */
    lastResults: 'purge' | 'rotate' | 'none';
}

/**
 * A first run when the history is empty or `fresh`; else a recrawl, one run after the last. A last
 * recrawl that settled no page (it failed before its first outcome) is started again as the same run,
 * so a failed start does not push the results before it out of `-previous`. A last recrawl that did
 * settle pages has what it did not settle carried first (idempotent): if its own end was cut off,
 * its results are made whole before they become `-previous`.
 */
export async function startSeries(
    history: PageHistory,
    last: SeriesRun | undefined,
    { fresh = false }: { fresh?: boolean },
): Promise<SeriesStart> {
    if (fresh || (await history.count()) === 0) return { series: { run: 1, mode: 'first' }, lastResults: 'purge' };
    if (last?.mode === 'recrawl') {
        if (!(await history.settledAny(last.run))) return { series: last, lastResults: 'none' };
        await history.carryUnsettled(last.run);
    }
    return { series: { run: (last?.run ?? 1) + 1, mode: 'recrawl' }, lastResults: 'rotate' };
}

/** Says in the run's first line whether it recrawls and what `--fresh` and `--recrawl` would change. */
export async function logSeries(stores: RunStores, site: string, log: Logger, fresh = false): Promise<void> {
    const { series } = stores;
    if (fresh) {
        log.info({ run: series.run }, `starting ${site} over (--fresh): every page is new`);
        return;
    }
    if (series.mode === 'first') {
        log.info(
            { run: series.run },
            `first run of ${site}: every page is new; the next run recrawls it, fetching known pages ` +
                'conditionally and reporting what changed (--fresh starts over instead)',
        );
        return;
    }
    log.info(
        { run: series.run, known: await stores.history.count() },
        `recrawling ${site} (run ${series.run} of its series): known pages are fetched when due, conditionally, ` +
            `and each item says what changed; the last run's items are kept as ${site}-previous (--fresh starts over)`,
    );
}

/** Puts the known pages due now through the frontier, and marks the rest seen; returns those. */
export async function seedKnownPages(
    { history, series, seenSet }: Pick<RunStores, 'history' | 'series' | 'seenSet'>,
    frontier: Frontier,
    revisit: RevisitBounds,
    log: Logger,
): Promise<NotDuePages> {
    const bounds = { ...REVISIT_DEFAULTS, ...revisit };
    if (series.mode !== 'recrawl') return new NotDuePages([], history, frontier);
    const now = Date.now();
    // A canonical URL a known page claimed stays its own: a link to it is a duplicate, not a new page.
    for (const { key, canonical } of await history.canonicalClaims()) await seenSet.claim(canonical, key);
    const notDue = await history.notDueKeys(now, bounds);
    for (let start = 0; start < notDue.length; start += BATCH) await seenSet.add(notDue.slice(start, start + BATCH));
    const due = await history.dueKeys(now, bounds);
    for (let start = 0; start < due.length; start += BATCH) {
        const pages = await history.pages(due.slice(start, start + BATCH));
        await frontier.enqueue(pages.map((page) => ({ url: page.url, label: page.label, userData: { known: page } })));
    }
    log.info(
        { due: due.length, notDue: notDue.length },
        `${due.length} known pages due now; ${notDue.length} not due keep their items`,
    );
    return new NotDuePages(notDue, history, frontier);
}

/** A recrawl's known pages that were not due when it started, until a sitemap says they changed. */
export class NotDuePages {
    private readonly keys: Set<string>;

    constructor(
        keys: readonly string[],
        private readonly history: RunStores['history'],
        private readonly frontier: Frontier,
    ) {
        this.keys = new Set(keys);
    }

    /**
     * Queues the pages of sitemap links (their `lastmod` and `changefreq` in the links' request data)
     * that are not due but that the sitemap says changed since their last check; returns how many.
     */
    async fromSitemap(links: readonly Link[]): Promise<number> {
        if (this.keys.size === 0) return 0;
        const hinted = new Map<string, SitemapHints>();
        for (const link of links) {
            const key = this.keyOf(link.url);
            if (key !== undefined && this.keys.has(key)) hinted.set(key, (link.userData ?? {}) as SitemapHints);
        }
        if (hinted.size === 0) return 0;
        const now = Date.now();
        const due = (await this.history.pages([...hinted.keys()])).filter((page) =>
            sitemapSaysDue(page, hinted.get(page.key) ?? {}, now),
        );
        for (const page of due) this.keys.delete(page.key);
        return this.frontier.queueKnown(
            due.map((page) => ({ url: page.url, label: page.label, userData: { known: page } })),
        );
    }

    private keyOf(url: string): string | undefined {
        try {
            return urlKey(normalizeUrl(url, { trackingParams: this.frontier.trackingParams }));
        } catch {
            return undefined;
        }
    }
}

/** The end of a recrawl that ran to its end: the pages it did not settle keep their items. */
export async function carryUnsettledPages({ history, series }: RunStores, stats: RunStats): Promise<void> {
    if (series.mode !== 'recrawl') return;
    for (const [label, items] of Object.entries(await history.carryUnsettled(series.run)))
        stats.countCarried(label, items);
}
