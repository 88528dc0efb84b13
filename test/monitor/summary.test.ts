/**
 * No secret in the run summary or what is made of it (the printed lines, the JSON, the HTML
 * report): a distributed run's storage location is its database URL, and the drift breaker's
 * samples are page URLs, which may carry a password.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemorySeenSet } from '../../src/frontier/seenSet.js';
import { renderReport } from '../../src/monitor/report/report.js';
import { RunStats } from '../../src/monitor/stats.js';
import { buildSummary, formatSummary } from '../../src/monitor/summary.js';
import type { ProxyReport } from '../../src/vocabulary/report.js';
import { directProxies, tieredProxies } from './proxyReports.js';
import { SHOP_STORAGE, shopSummary } from './shopSummary.js';

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
                    samples: [
                        {
                            url: 'http://reader:urlpass@127.0.0.1:9/p/1',
                            rawKey: 'k1',
                            issues: ['price: expected number, got http://cdn:cdnpass@127.0.0.1:9/x'],
                        },
                    ],
                    at: new Date(0).toISOString(),
                },
            ],
            browserAvailable: true,
            storage: {
                dir: 'postgres://dragnet:s3cr3t@127.0.0.1:5432/test',
                dataset: 'items',
                quarantine: 'quarantine',
                deadLetter: 'dead_letter',
                rawPages: 'raw_pages',
            },
            proxies: directProxies(),
        });
        const outputs = {
            json: JSON.stringify(summary),
            text: formatSummary(summary),
            report: renderReport(summary, []),
        };
        for (const [name, output] of Object.entries(outputs)) {
            for (const secret of ['s3cr3t', 'urlpass', 'cdnpass'])
                assert.ok(!output.includes(secret), `the ${name} holds "${secret}"`);
        }
        assert.equal(summary.storage.dir, 'postgres://dragnet:***@127.0.0.1:5432/test');
        assert.deepEqual(summary.drift[0]!.samples, [
            {
                url: 'http://reader:***@127.0.0.1:9/p/1',
                rawKey: 'k1',
                issues: ['price: expected number, got http://cdn:***@127.0.0.1:9/x'],
            },
        ]);
        assert.match(outputs.text, /output {5}postgres:\/\/dragnet:\*\*\*@127\.0\.0\.1:5432\/test/);
        assert.ok(outputs.report.includes('http://reader:***@127.0.0.1:9/p/1'));
    });

    it('keeps a storage dir that is a path as it is', () => {
        assert.deepEqual(shopSummary().storage, SHOP_STORAGE);
    });
});

describe('the printed summary on proxies', () => {
    const printed = (proxies: ProxyReport) => formatSummary(shopSummary(new RunStats(), proxies));

    it("says nothing of proxies for a run that went only by the machine's own address", () => {
        assert.doesNotMatch(printed(directProxies(500)), /proxies/);
    });

    it('gives a line with the requests, blocks and exit faults per tier and the tier moves', () => {
        const lines = printed(tieredProxies()).split('\n');
        assert.deepEqual(
            lines.filter((line) => line.startsWith('  proxies ')),
            [
                '  proxies    datacenter 940 requests (32 blocked, 18 429s, 40 exit faults), ' +
                    'residential 135 requests (1 blocked, 0 429s, 0 exit faults); 1 tier move',
            ],
        );
        assert.ok(
            lines.indexOf(lines.find((line) => line.startsWith('  proxies '))!) <
                lines.findIndex((line) => line.startsWith('  links ')),
        );
    });

    it('gives it for one tier when its exit is a proxy', () => {
        const proxies = directProxies(20);
        proxies.tiers[0]!.name = 'datacenter';
        proxies.exits[0] = { ...proxies.exits[0]!, tier: 'datacenter', name: '127.0.0.1:8001' };
        assert.match(
            printed(proxies),
            /^ {2}proxies {4}datacenter 20 requests \(0 blocked, 0 429s, 0 exit faults\); 0 tier moves$/m,
        );
    });
});

describe('the printed summary of a stopped run', () => {
    const stopped = () => ({ ...shopSummary(), stopped: 'SIGINT' as const });
    const resumeLine = (text: string) => text.split('\n').find((line) => line.startsWith('  resume '));

    it('tells the user of a site to run the same command again to continue', () => {
        assert.match(resumeLine(formatSummary(stopped())) ?? '', /run the same command again: it continues/);
    });

    it('tells the user of the built-in demo that it starts afresh instead', () => {
        const line = resumeLine(formatSummary(stopped(), { resumable: false })) ?? '';
        assert.match(line, /the built-in demo starts afresh each time/);
        assert.doesNotMatch(line, /run the same command again/);
    });

    it('has no resume line for a run that finished', () => {
        assert.equal(resumeLine(formatSummary(shopSummary())), undefined);
    });
});
