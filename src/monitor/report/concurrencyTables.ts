/**
 * The run report's HTTP width (fetch/pacing/concurrencyController.ts): each domain's limit, how far
 * it moved and what held it back, and every change with why, so a width that stopped at 300 says
 * whether the site, the response times or this machine stopped it. The chart of the limit over time
 * is report.ts's.
 */
import type { ConcurrencyDecision, ReportSummary } from '../../vocabulary/report.js';
import { grid } from './reportTables.js';

/** A long run's changes: its first ones (how the width was found) and its last ones (where it ended). */
const FIRST_CHANGES = 20;
const LAST_CHANGES = 40;

const WHY: Record<ConcurrencyDecision['reason'], string> = {
    errors: 'cut: transient failures climbed',
    blocks: 'cut: blocked responses climbed',
    ambient: 'raised back: the errors are the site’s ambient rate',
    clean: 'raised: a clean window at flat response times',
};

export function concurrencyTables(summary: ReportSummary): string[] {
    const domains = Object.entries(summary.concurrency ?? {});
    if (domains.length === 0) return [];
    const startedAt = Date.parse(summary.startedAt);
    const changes = summary.concurrencyChanges ?? [];
    const shown =
        changes.length > FIRST_CHANGES + LAST_CHANGES
            ? [...changes.slice(0, FIRST_CHANGES), undefined, ...changes.slice(-LAST_CHANGES)]
            : changes;
    const hidden = changes.length - FIRST_CHANGES - LAST_CHANGES;
    return [
        grid(
            'HTTP concurrency per domain',
            [
                'domain',
                'limit',
                'lowest',
                'highest',
                'raised',
                'lowered',
                'held by latency',
                'held by CPU',
                'held by memory',
            ],
            domains.map(([domain, c]) => [
                domain,
                c.limit,
                c.lowest,
                c.highest,
                c.increases,
                c.decreases,
                c.heldBack.latency,
                c.heldBack.cpu,
                c.heldBack.memory,
            ]),
            'none',
            'Held: clean windows that used the limit but did not raise it, and what stopped them.',
        ),
        grid(
            'HTTP concurrency changes',
            ['time', 'domain', 'from', 'to', 'why', 'error rate', 'median response'],
            shown.map((change) =>
                change
                    ? [
                          `${((change.at - startedAt) / 1000).toFixed(1)} s`,
                          change.domain,
                          change.from,
                          change.to,
                          WHY[change.reason],
                          `${(change.errorRate * 100).toFixed(1)}%`,
                          change.latencyMs === null ? '' : `${change.latencyMs} ms`,
                      ]
                    : [`… ${hidden} more`, '', '', '', '', '', ''],
            ),
            'the limit never moved',
        ),
    ];
}
