/**
 * The run summary (vocabulary/report.ts: the stable JSON contract of DESIGN's "command line and
 * outputs"), built from the run's counters and what the parts report, and a short human-readable
 * version of it. The summary is printed, saved and rendered into the report, so what in it may
 * hold a secret is scrubbed here, once (vocabulary/redact.ts): the storage location (a database
 * URL) and the drift breaker's sample URLs.
 */
import { redactUrl, scrubText } from '../vocabulary/redact.js';
import type {
    ConcurrencyDecision,
    DomainConcurrency,
    ProxyReport,
    RecrawlReport,
    RenderDecision,
    RunSummary,
    SeenSetReport,
    SitemapReport,
    Trip,
} from '../vocabulary/report.js';
import type { RunStats } from './stats.js';

export function buildSummary(
    stats: RunStats,
    context: {
        site: string;
        /** The run's seen-set, which describes itself. */
        seenSet: { describe(): SeenSetReport };
        render: Record<string, RenderDecision>;
        drift: Trip[];
        concurrency?: Record<string, DomainConcurrency>;
        concurrencyChanges?: ConcurrencyDecision[];
        browserAvailable: boolean;
        stopped?: NodeJS.Signals;
        storage: RunSummary['storage'];
        proxies: RunSummary['proxies'];
        /** The run's place in the site's series, when it recrawls. */
        recrawlRun?: number;
    },
): RunSummary {
    const finishedAt = new Date();
    const durationSec = (finishedAt.getTime() - stats.startedAt.getTime()) / 1000;
    const routes = Object.fromEntries(stats.routes);
    return {
        site: context.site,
        startedAt: stats.startedAt.toISOString(),
        finishedAt: finishedAt.toISOString(),
        durationSec: round(durationSec),
        pagesPerSec: round((stats.finished - stats.finishedBefore) / Math.max(durationSec, 0.001)),
        requests: {
            total: stats.admitted,
            succeeded: stats.succeeded,
            retried: stats.retriedRequests,
            deadLettered: stats.deadLettered,
            retries: stats.retries,
            redirects: stats.redirects,
            duplicates: stats.duplicates,
        },
        http: { fetched: stats.httpFetched },
        browser: {
            rendered: stats.browserRendered,
            available: context.browserAvailable,
            direct: stats.directToBrowser,
        },
        items: { stored: stats.itemsStored, invalid: stats.itemsInvalid },
        escalations: {
            total: stats.escalations,
            byRoute: Object.fromEntries([...stats.routes].map(([label, route]) => [label, route.escalations])),
        },
        render: context.render,
        drift: context.drift.map(scrubTrip),
        ...(context.concurrency ? { concurrency: context.concurrency } : {}),
        ...(context.concurrencyChanges ? { concurrencyChanges: context.concurrencyChanges } : {}),
        linksSkipped: { ...stats.linksSkipped },
        sitemaps: { ...stats.sitemaps, reasons: { ...stats.sitemaps.reasons } },
        deadLetterByReason: { ...stats.deadLetterReasons },
        retriesByReason: { ...stats.retryReasons },
        seenSet: context.seenSet.describe(),
        errorsByClass: { ...stats.errorsByClass },
        routes,
        storage: { ...context.storage, dir: redactUrl(context.storage.dir) },
        proxies: context.proxies,
        ...(context.recrawlRun === undefined ? {} : { recrawl: recrawlReport(stats, context.recrawlRun) }),
        ...(context.stopped ? { stopped: context.stopped } : {}),
        ...(stats.sessions > 0
            ? { resumed: { sessions: stats.sessions, firstStartedAt: stats.firstStartedAt.toISOString() } }
            : {}),
    };
}

/**
 * The summary as `npm start` prints it. A stopped run says how to go on: run the same command again,
 * unless it is not `resumable` (the built-in demo starts a new shop, and a fresh run, each time).
 */
export function formatSummary(summary: RunSummary, { resumable = true }: { resumable?: boolean } = {}): string {
    const { requests, items } = summary;
    const resume = resumable
        ? 'run the same command again: it continues where this one stopped'
        : 'the built-in demo starts afresh each time; a run of a site continues where it stopped';
    return [
        `dragnet: ${summary.site} ${summary.stopped ? `stopped by ${summary.stopped}` : 'finished'} ` +
            `in ${summary.durationSec}s (${summary.pagesPerSec} pages/s)` +
            (summary.resumed
                ? `, resuming a run begun ${summary.resumed.firstStartedAt} (session ${summary.resumed.sessions + 1})`
                : ''),
        ...(summary.stopped ? [`  resume     ${resume}`] : []),
        `  requests   ${requests.total} total: ${requests.succeeded} succeeded, ${requests.deadLettered} ` +
            `dead-lettered, ${requests.retried} retried (${requests.retries} retries), ` +
            `${requests.redirects} redirects, ${requests.duplicates} duplicates`,
        `  fetched    ${summary.http.fetched} by HTTP, ${summary.browser.rendered} rendered in the browser ` +
            `(${summary.escalations.total} escalated, ${summary.browser.direct} sent directly` +
            `${summary.browser.available ? '' : '; no working browser'})`,
        `  items      ${items.stored} stored, ${items.invalid} quarantined`,
        ...(summary.recrawl ? [`  changes    ${changeLine(summary.recrawl)}`] : []),
        ...summary.drift.map(
            (trip) =>
                `  STOPPED    route "${trip.route}" by the drift breaker after ${trip.pagesJudged} pages ` +
                `(${Math.round(trip.invalidShare * 100)}% invalid; ` +
                `fields: ${Object.keys(trip.failingFields).join(', ')})`,
        ),
        ...Object.entries(summary.concurrency ?? {}).map(
            ([domain, c]) =>
                `  limit      ${domain}: ${c.limit} requests at once (lowest ${c.lowest}, highest ${c.highest}; ` +
                `lowered ${c.decreases}, raised ${c.increases} times${heldBackText(c)})`,
        ),
        ...(usedProxies(summary.proxies) ? [`  proxies    ${proxyLine(summary.proxies)}`] : []),
        ...(sitemapsTried(summary.sitemaps) ? [`  sitemaps   ${sitemapLine(summary.sitemaps)}`] : []),
        `  links      skipped: ${Object.entries(summary.linksSkipped)
            .map(([why, n]) => `${n} ${why}`)
            .join(', ')}`,
        `  output     ${summary.storage.dir} (dataset ${summary.storage.dataset}, raw ` +
            `pages ${summary.storage.rawPages})`,
        ...(summary.report ? [`  report     ${summary.report}`] : []),
    ].join('\n');
}

/** A recrawl's items by change, in all and by route. */
export function recrawlReport(stats: RunStats, run: number): RecrawlReport {
    return {
        run,
        items: stats.changeTotals() ?? { new: 0, changed: 0, unchanged: 0, removed: 0 },
        byRoute: Object.fromEntries([...stats.changes].map(([label, counts]) => [label, { ...counts }])),
        unchangedPages: { ...stats.unchangedPages },
    };
}

function changeLine({ run, items, unchangedPages }: RecrawlReport): string {
    return (
        `run ${run} of the series: ${items.new} new, ${items.changed} changed, ${items.unchanged} unchanged, ` +
        `${items.removed} removed items; ${unchangedPages.notModified} pages answered 304, ` +
        `${unchangedPages.identicalPayload} sent the same bytes again`
    );
}

/** Whether the run read or tried any sitemap. */
export function sitemapsTried(sitemaps: SitemapReport): boolean {
    return sitemaps.read + sitemaps.failed + sitemaps.skipped > 0;
}

function sitemapLine(sitemaps: SitemapReport): string {
    const reasons = Object.entries(sitemaps.reasons)
        .map(([why, n]) => `${n} ${why}`)
        .join(', ');
    return (
        `${sitemaps.read} read, ${sitemaps.failed} failed, ${sitemaps.skipped} ` +
        `skipped${reasons ? ` (${reasons})` : ''}; ` +
        `${sitemaps.urls} URLs listed, ${sitemaps.queued} queued`
    );
}

/** More than one tier, or an exit that is a proxy: a run that went only by the machine's own address did not. */
export function usedProxies(proxies: ProxyReport): boolean {
    return proxies.tiers.length > 1 || proxies.exits.some((exit) => exit.name !== 'direct');
}

function proxyLine(proxies: ProxyReport): string {
    const tiers = proxies.tiers.map(
        (tier) =>
            `${tier.name} ${tier.requests} requests (${tier.blocked} blocked, ${tier.limited} ` +
            `429s, ${tier.exitFaults} exit faults)`,
    );
    const moves = proxies.tierMoves.length;
    return `${tiers.join(', ')}; ${moves} tier ${moves === 1 ? 'move' : 'moves'}`;
}

function scrubTrip(trip: Trip): Trip {
    return {
        ...trip,
        samples: trip.samples.map((sample) => ({
            ...sample,
            url: redactUrl(sample.url),
            issues: sample.issues.map(scrubText),
        })),
    };
}

function round(value: number): number {
    return Math.round(value * 100) / 100;
}

/** `; held by CPU in 12 windows, latency in 3`: what kept a limit from rising, when anything did. */
function heldBackText({ heldBack }: DomainConcurrency): string {
    const held = Object.entries(heldBack).filter(([, windows]) => windows > 0);
    if (held.length === 0) return '';
    return `; held by ${held.map(([by, windows]) => `${by === 'cpu' ? 'CPU' : by} in ${windows} windows`).join(', ')}`;
}
