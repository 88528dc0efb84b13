/**
 * What the sitemaps gave, in the run's counters and everything made of them: the summary JSON
 * beside the other fields, its printed line, the report's table, and a resumed run's counters.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderReport } from '../../src/monitor/report/report.js';
import { RunStats } from '../../src/monitor/stats.js';
import { formatSummary } from '../../src/monitor/summary.js';
import { shopSummary } from './shopSummary.js';

describe('the sitemap counters', () => {
    it('are in the summary as `sitemaps`, all zero and not printed for a run that read none', () => {
        const summary = shopSummary(new RunStats());
        assert.deepEqual(summary.sitemaps, { read: 0, failed: 0, skipped: 0, urls: 0, queued: 0, reasons: {} });
        assert.ok(!formatSummary(summary).includes('sitemaps'));
        assert.ok(!renderReport(summary, []).includes('sitemap URLs'));
    });

    it('are printed and tabled when sitemaps were read, and count on in a resumed run', () => {
        const stats = new RunStats();
        Object.assign(stats.sitemaps, {
            read: 3,
            failed: 2,
            skipped: 1,
            urls: 20_000,
            queued: 19_990,
            reasons: { malformed: 1, 'http-404': 1, 'too-deep': 1 },
        });
        const summary = shopSummary(stats);
        assert.deepEqual(summary.sitemaps, stats.sitemaps);
        assert.notEqual(summary.sitemaps.reasons, stats.sitemaps.reasons, 'a copy, not the live counters');
        assert.match(
            formatSummary(summary),
            new RegExp(
                String.raw`\n {2}sitemaps {3}3 read, 2 failed, 1 skipped ` +
                    String.raw`\(1 malformed, 1 http-404, 1 too-deep\); 20000 URLs listed, 19990 queued\n`,
            ),
        );
        const report = renderReport(summary, []);
        for (const row of ['sitemaps read', 'sitemaps failed or skipped: too-deep', 'sitemap URLs queued'])
            assert.ok(report.includes(row), row);

        const resumed = RunStats.resume(JSON.parse(JSON.stringify(stats.snapshot())));
        resumed.sitemaps.read += 1;
        resumed.sitemaps.reasons.malformed! += 1;
        assert.deepEqual(resumed.sitemaps, {
            read: 4,
            failed: 2,
            skipped: 1,
            urls: 20_000,
            queued: 19_990,
            reasons: { malformed: 2, 'http-404': 1, 'too-deep': 1 },
        });
    });
});
