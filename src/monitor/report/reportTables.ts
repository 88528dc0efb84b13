/**
 * The run report's tables: the summary's numbers in full, for the reader who wants more than
 * the headline and the charts. Every string from the data is escaped.
 */
import { emptyState, escapeHtml, formatNumber } from './charts.js';
import { sitemapsTried } from '../summary.js';
import type { RecrawlReport, ReportSummary, SitemapReport } from '../../vocabulary/report.js';

/** A recrawl's items by change, per route, and the known pages that needed no parse. */
function recrawlTable(recrawl: RecrawlReport): string {
    const { notModified, identicalPayload } = recrawl.unchangedPages;
    return grid(
        `Changes per route (run ${recrawl.run} of the series)`,
        ['route', 'new', 'changed', 'unchanged', 'removed'],
        Object.entries(recrawl.byRoute).map(([route, counts]) => [
            route,
            counts.new,
            counts.changed,
            counts.unchanged,
            counts.removed,
        ]),
        'no item yet',
        `items by what the check of their page found; ${notModified} known pages answered 304 and ` +
            `${identicalPayload} sent the same bytes again, none of them parsed`,
    );
}

/** The summary's tables, each in its panel. */
export function summaryTables(summary: ReportSummary): string[] {
    const { requests } = summary;
    const byReason = summary.deadLetterByReason;
    const routes = Object.entries(summary.routes);
    const renders = Object.entries(summary.render);
    const seen = summary.seenSet;
    return [
        keyValues('Requests', [
            ['admitted', requests.total],
            ['succeeded', requests.succeeded],
            ['dead-lettered', requests.deadLettered],
            ['retried requests', requests.retried],
            ['retries', requests.retries],
            ['redirects', requests.redirects],
            ['duplicates', requests.duplicates],
            ['fetched by HTTP', summary.http.fetched],
            ['rendered in the browser', summary.browser.rendered],
            ['sent to the browser directly', summary.browser.direct],
        ]),
        keyValues('Items', [
            ['stored', summary.items.stored],
            ['quarantined', summary.items.invalid],
        ]) + keyValues('Errors by class', Object.entries(summary.errorsByClass)),
        byReason && Object.keys(byReason).length > 0
            ? keyValues(
                  'Dead-letter by reason',
                  Object.entries(byReason).sort(([, a], [, b]) => b - a),
              )
            : section(
                  'Dead-letter by reason',
                  requests.deadLettered === 0
                      ? emptyState('nothing was dead-lettered')
                      : emptyState(
                            `${requests.deadLettered} entries; reasons are in the ` +
                                `dataset ${summary.storage.deadLetter}`,
                        ),
              ),
        grid(
            'Pages, items and escalations per route',
            ['route', 'pages', 'stored', 'quarantined', 'escalated'],
            routes.map(([route, stats]) => [
                route,
                stats.pages,
                stats.itemsStored,
                stats.itemsInvalid,
                stats.escalations,
            ]),
        ),
        ...(summary.recrawl ? [recrawlTable(summary.recrawl)] : []),
        grid(
            'Render decisions per route',
            ['route', 'mode', 'samples', 'needed browser', 'direct', 'probes', 'switches'],
            renders.map(([route, decision]) => [
                route,
                decision.mode,
                decision.samples,
                `${(decision.neededBrowserShare * 100).toFixed(0)}%`,
                decision.directToBrowser,
                decision.probes,
                decision.switches,
            ]),
            'no route with render: auto was fetched',
        ),
        keyValues('Seen-set and links', [
            ['kind', seen.kind],
            ['URLs held', seen.urls],
            ...(seen.expectedSkipped !== undefined
                ? ([['expected wrongly skipped', seen.expectedSkipped]] as const)
                : []),
            ...(seen.falsePositiveRate !== undefined
                ? ([['false-positive rate', seen.falsePositiveRate.toExponential(2)]] as const)
                : []),
            ...(seen.bytes !== undefined ? ([['memory', `${formatNumber(seen.bytes / 1024)} KiB`]] as const) : []),
            ...Object.entries(summary.linksSkipped).map(([why, count]) => [`links skipped: ${why}`, count] as const),
            ...(sitemapsTried(summary.sitemaps) ? sitemapRows(summary.sitemaps) : []),
        ]),
        keyValues('Storage', Object.entries(summary.storage)),
    ];
}

function sitemapRows(sitemaps: SitemapReport): ReadonlyArray<readonly [string, number]> {
    return [
        ['sitemaps read', sitemaps.read],
        ['sitemaps failed', sitemaps.failed],
        ['sitemaps skipped', sitemaps.skipped],
        ...Object.entries(sitemaps.reasons).map(
            ([why, count]) => [`sitemaps failed or skipped: ${why}`, count] as const,
        ),
        ['sitemap URLs listed', sitemaps.urls],
        ['sitemap URLs queued', sitemaps.queued],
    ];
}

/** A titled table panel; `body` is markup, `caption` text. */
export function section(title: string, body: string, caption?: string): string {
    const note = caption ? `<p class="caption">${escapeHtml(caption)}</p>` : '';
    return `<div class="panel table"><h3>${escapeHtml(title)}</h3>${note}${body}</div>`;
}

export function keyValues(title: string, rows: ReadonlyArray<readonly [string, string | number]>): string {
    const body = rows.map(([key, value]) => `<tr><th>${escapeHtml(key)}</th><td>${cell(value)}</td></tr>`).join('');
    return section(title, `<table>${body}</table>`);
}

/** A table with a header row; each row's first value is its heading. */
export function grid(
    title: string,
    headers: string[],
    rows: Array<Array<string | number>>,
    emptyText = 'none',
    caption?: string,
): string {
    if (rows.length === 0) return section(title, emptyState(emptyText), caption);
    const head = `<tr>${headers.map((header) => `<th>${escapeHtml(header)}</th>`).join('')}</tr>`;
    const body = rows.map((row) => {
        const cells = row.map((value, index) => (index === 0 ? `<th>${cell(value)}</th>` : `<td>${cell(value)}</td>`));
        return `<tr>${cells.join('')}</tr>`;
    });
    return section(
        title,
        `<table class="grid-table"><thead>${head}</thead><tbody>${body.join('')}</tbody></table>`,
        caption,
    );
}

function cell(value: string | number): string {
    return typeof value === 'number'
        ? `<span class="num">${escapeHtml(value.toLocaleString('en-US'))}</span>`
        : escapeHtml(value);
}

/** `part` of `whole` as `12.5%` (`0%` and `100%` without decimals). */
export function percent(part: number, whole: number): string {
    return whole === 0 ? '0%' : `${((part / whole) * 100).toFixed(part === whole || part === 0 ? 0 : 1)}%`;
}
