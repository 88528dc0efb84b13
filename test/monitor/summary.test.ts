/**
 * No secret in the run summary or what is made of it (the printed lines, the JSON, the HTML
 * report): a distributed run's storage location is its database URL, and the drift breaker's
 * samples are page URLs, which may carry a password.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemorySeenSet } from '../../src/frontier/seenSet.js';
import { renderReport } from '../../src/monitor/report.js';
import { RunStats } from '../../src/monitor/stats.js';
import { buildSummary, formatSummary } from '../../src/monitor/summary.js';

describe('the run summary', () => {
    it('names the database and the sample pages without their passwords', () => {
        const summary = buildSummary(new RunStats(), {
            site: 'shop',
            seenSet: new MemorySeenSet(),
            render: {},
            drift: [
                {
                    route: 'product',
                    pagesJudged: 50,
                    invalidShare: 0.6,
                    failingFields: { price: 30 },
                    samples: [{ url: 'http://reader:urlpass@127.0.0.1:9/p/1', rawKey: 'k1', issues: ['price: expected number, got http://cdn:cdnpass@127.0.0.1:9/x'] }],
                    at: new Date(0).toISOString(),
                },
            ],
            browserAvailable: true,
            storage: { dir: 'postgres://dragnet:s3cr3t@127.0.0.1:5432/test', dataset: 'items', quarantine: 'quarantine', deadLetter: 'dead_letter', rawPages: 'raw_pages' },
        });
        const outputs = { json: JSON.stringify(summary), text: formatSummary(summary), report: renderReport(summary, []) };
        for (const [name, output] of Object.entries(outputs)) {
            for (const secret of ['s3cr3t', 'urlpass', 'cdnpass']) assert.ok(!output.includes(secret), `the ${name} holds "${secret}"`);
        }
        assert.equal(summary.storage.dir, 'postgres://dragnet:***@127.0.0.1:5432/test');
        assert.deepEqual(summary.drift[0]!.samples, [{ url: 'http://reader:***@127.0.0.1:9/p/1', rawKey: 'k1', issues: ['price: expected number, got http://cdn:***@127.0.0.1:9/x'] }]);
        assert.match(outputs.text, /output {5}postgres:\/\/dragnet:\*\*\*@127\.0\.0\.1:5432\/test/);
        assert.ok(outputs.report.includes('http://reader:***@127.0.0.1:9/p/1'));
    });

    it('keeps a storage dir that is a path as it is', () => {
        const storage = { dir: './storage', dataset: 'shop', quarantine: 'shop-quarantine', deadLetter: 'shop-dead-letter', rawPages: './storage/raw_pages/shop' };
        const summary = buildSummary(new RunStats(), { site: 'shop', seenSet: new MemorySeenSet(), render: {}, drift: [], browserAvailable: true, storage });
        assert.deepEqual(summary.storage, storage);
    });
});
