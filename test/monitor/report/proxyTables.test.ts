/**
 * The run report's proxy part: the tables hold the numbers of the summary's `proxies`, a run that
 * went only by the machine's own address stays compact, and names from user config are text.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderReport } from '../../../src/monitor/report/report.js';
import { RunStats } from '../../../src/monitor/stats.js';
import type { TimelinePoint } from '../../../src/monitor/timeline.js';
import type { ProxyReport, ReportSummary } from '../../../src/vocabulary/report.js';
import { directProxies, tieredProxies } from '../proxyReports.js';
import { shopSummary } from '../shopSummary.js';

function summaryWith(proxies: (startedAt: string) => ProxyReport): ReportSummary {
    const stats = new RunStats();
    return shopSummary(stats, proxies(stats.startedAt.toISOString()));
}

/** The cells of a table panel, by its title: one array of texts per row, the header row included. */
function table(html: string, title: string): string[][] {
    const start = html.indexOf(`<h3>${title}</h3>`);
    assert.ok(start >= 0, `no table "${title}"`);
    const panel = html.slice(start, html.indexOf('</table>', start));
    return [...panel.matchAll(/<tr>(.*?)<\/tr>/g)].map(([, row]) =>
        [...row!.matchAll(/<t[hd]>(.*?)<\/t[hd]>/g)].map(([, content]) => content!.replace(/<[^>]*>/g, '')),
    );
}

function row(html: string, title: string, heading: string): string[] {
    const found = table(html, title).find((cells) => cells[0] === heading);
    assert.ok(found, `no row "${heading}" in "${title}"`);
    return found;
}

describe('the report on proxies', () => {
    it(`keeps a run through one direct tier compact: the empty \
state, the sessions and politeness among the tables`, () => {
        const html = renderReport(
            summaryWith(() => directProxies(900)),
            [],
        );
        assert.match(html, /no proxy tiers used in this run/);
        assert.doesNotMatch(html, /<h2>Proxies<\/h2>|Requests per exit|Tier moves/);
        assert.deepEqual(row(html, 'Sessions', 'retired: max uses'), ['retired: max uses', '1']);
        assert.deepEqual(row(html, 'Politeness', 'requests given a turn'), ['requests given a turn', '900']);
    });

    it('shows per tier and per exit what went out and what came of it', () => {
        const html = renderReport(summaryWith(tieredProxies), []);
        assert.doesNotMatch(html, /no proxy tiers used in this run/);
        assert.match(html, /<h2>Proxies<\/h2>/);
        const tiers = table(html, 'Requests per proxy tier');
        assert.deepEqual(tiers[0], [
            'tier',
            'cost',
            'requests',
            'ok',
            'blocked',
            '429s',
            'exit faults',
            'bytes',
            'block rate',
        ]);
        // 9,000,000 bytes; 32 blocked of the 900 the site answered (the 40 exit faults were the proxy's).
        assert.deepEqual(row(html, 'Requests per proxy tier', 'datacenter'), [
            'datacenter',
            '1',
            '940',
            '841',
            '32',
            '18',
            '40',
            '8.6 MiB',
            '3.6%',
        ]);
        assert.deepEqual(row(html, 'Requests per proxy tier', 'residential'), [
            'residential',
            '10',
            '135',
            '132',
            '1',
            '0',
            '0',
            '1.3 MiB',
            '0.7%',
        ]);
        assert.equal(table(html, 'Requests per exit').length, 7, 'a header and six exits');
        assert.deepEqual(row(html, 'Requests per exit', '127.0.0.1:8004'), [
            '127.0.0.1:8004',
            'datacenter',
            '40',
            '0',
            '0',
            '0',
            '40',
            '0 B',
            '0%',
            '4',
        ]);
        assert.deepEqual(row(html, 'Requests per exit', '127.0.0.1:8001'), [
            '127.0.0.1:8001',
            'datacenter',
            '300',
            '280',
            '12',
            '5',
            '0',
            '2.9 MiB',
            '4.0%',
            '0',
        ]);
    });

    it(`shows the tier moves with time and expected costs, \
the tier of each section, the sessions and politeness`, () => {
        const html = renderReport(summaryWith(tieredProxies), []);
        assert.deepEqual(table(html, 'Tier moves').slice(1), [
            ['12s', 'product /hard', 'datacenter', 'residential', 'datacenter 14.2 · residential 10'],
        ]);
        assert.deepEqual(table(html, 'Proxy tier per section').slice(1), [
            ['the whole site', 'datacenter'],
            ['product /hard', 'residential'],
            ['product /lamps', 'datacenter'],
        ]);
        assert.deepEqual(table(html, 'Sessions'), [
            ['created', '57'],
            ['retired: blocked', '33'],
            ['retired: max uses', '12'],
            ['retired: error score', '2'],
            ['probes of a cheaper tier', '9'],
            ['JS challenges sent to the browser', '3'],
        ]);
        assert.deepEqual(table(html, 'Politeness'), [
            ['requests given a turn', '1,075'],
            ['of them, waited', '400'],
            ['time waited, summed', '1m02s'],
            ['coolings (429 Retry-After)', '2'],
            ['time cooling added', '4.0 s'],
        ]);
        assert.equal(html.match(/<h3>Sessions<\/h3>/g)?.length, 1, 'the sessions once, in the proxy section');
    });

    it('draws the outcomes per tier, and marks the tier moves on the throughput and error charts', () => {
        const summary = summaryWith(tieredProxies);
        const timeline: TimelinePoint[] = [0, 10, 20, 30].map((t) => ({
            t,
            pages: t * 30,
            itemsStored: t * 30,
            itemsInvalid: 0,
            queued: 10,
            deadLettered: 0,
            escalations: 0,
            browserRendered: 0,
            errors: { transient: 0, blocked: t, permanent: 0, invalid: 0, exit: t },
            routes: {},
            gauges: {},
        }));
        const html = renderReport(summary, timeline);
        assert.match(html, /<title>residential · exit faults: 0<\/title>/);
        assert.match(html, /<title>datacenter · blocked: 32<\/title>/);
        const moves = [...html.matchAll(/<g class="marker move"><title>([^<]*)<\/title>/g)].map(([, title]) => title);
        assert.deepEqual(moves, ['product /hard → residential at 12s', 'product /hard → residential at 12s']);
    });

    it('shows hostile names from user config as text', () => {
        const hostile = '<script>alert(1)</script>';
        const html = renderReport(
            summaryWith((startedAt) => {
                const proxies = tieredProxies(startedAt);
                proxies.exits[0]!.name = hostile;
                proxies.sections = { 'product /<img src=x onerror=alert(2)>': 'residential' };
                proxies.tierMoves[0]!.section = hostile;
                return proxies;
            }),
            [],
        );
        assert.doesNotMatch(html, /<script|<img/i);
        assert.ok(html.includes('<th>&lt;script&gt;alert(1)&lt;/script&gt;</th>'), 'the exit name is shown, escaped');
        assert.ok(html.includes('product /&lt;img src=x onerror=alert(2)&gt;'), 'the section is shown, escaped');
    });
});
