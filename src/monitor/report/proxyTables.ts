/**
 * The run report's proxy part (the summary's `proxies`, fetch/egress/proxyRouting.ts): what went out by
 * each tier and exit and what came of it, the tier each section ended on and every move, the
 * sessions and the site's politeness. Exit names come from user config: every string is escaped
 * (reportTables.ts does it), and they are `host:port`, never credentials.
 */
import type { ExitCounters, ProxyReport, ReportSummary } from '../../vocabulary/report.js';
import { type Bar, barChart, emptyState, formatDuration, panel } from './charts.js';
import { grid, keyValues, percent } from './reportTables.js';
import { usedProxies } from '../summary.js';

const OUTCOME_COLORS = { ok: '#3ca951', blocked: '#a463f2', limited: '#efb118', exitFaults: '#0ea5e9' };
const COUNTER_HEADERS = ['requests', 'ok', 'blocked', '429s', 'exit faults', 'bytes', 'block rate'];
const BLOCK_RATE =
    'Block rate: blocked share of the requests the site answered (exit faults are the proxy’s, not the site’s). ' +
    'Requests not ok, blocked, 429 or exit fault failed otherwise (timeouts, 5xx) or were in flight.';

/** Per tier, its requests by outcome; an empty state for a run that went only by the machine's own address. */
export function proxyTierChart(summary: ReportSummary): string {
    const title = 'Proxy tiers';
    const caption = 'Requests sent through each proxy tier, by what came back.';
    if (!usedProxies(summary.proxies)) return panel(title, caption, emptyState('no proxy tiers used in this run'));
    const bars: Bar[] = summary.proxies.tiers.flatMap((tier) => [
        { group: tier.name, label: 'ok', value: tier.ok, color: OUTCOME_COLORS.ok },
        { group: tier.name, label: 'blocked', value: tier.blocked, color: OUTCOME_COLORS.blocked },
        { group: tier.name, label: '429s', value: tier.limited, color: OUTCOME_COLORS.limited },
        { group: tier.name, label: 'exit faults', value: tier.exitFaults, color: OUTCOME_COLORS.exitFaults },
    ]);
    return barChart(bars, { title, caption });
}

/** The "Proxies" section of the report; empty when no proxy was used (the sessions then go with the other tables). */
export function proxySection(summary: ReportSummary): string {
    const proxies = summary.proxies;
    if (!usedProxies(proxies)) return '';
    const tiers = grid(
        'Requests per proxy tier',
        ['tier', 'cost', ...COUNTER_HEADERS],
        proxies.tiers.map((tier) => [tier.name, tier.cost, ...counters(tier)]),
        'no tier',
        BLOCK_RATE,
    );
    const exits = grid(
        'Requests per exit',
        ['exit', 'tier', ...COUNTER_HEADERS, 'breaker opened'],
        proxies.exits.map((exit) => [exit.name, exit.tier, ...counters(exit), exit.breakerOpened]),
        'no exit',
        'An exit is one proxy (host:port) of a tier, or direct. Its breaker opens after exit faults and rests it for ' +
            'a while.',
    );
    return `<h2>Proxies</h2>
<section class="stack">${tiers}${exits}
<div class="grid">${tierMoves(summary)}${sections(proxies)}${sessionTables(proxies).join('')}</div></section>`;
}

/** Sessions and politeness: two small tables. */
export function sessionTables(proxies: ProxyReport): string[] {
    const { sessions, politeness } = proxies;
    return [
        keyValues('Sessions', [
            ['created', sessions.created],
            ['retired: blocked', sessions.retired.blocked],
            ['retired: max uses', sessions.retired['max-uses']],
            ['retired: error score', sessions.retired.errors],
            ['probes of a cheaper tier', proxies.probes],
            ['JS challenges sent to the browser', proxies.challengesToBrowser],
        ]),
        keyValues('Politeness', [
            ['requests given a turn', politeness.acquired],
            ['of them, waited', politeness.spaced],
            ['time waited, summed', seconds(politeness.waitedMs)],
            ['coolings (429 Retry-After)', politeness.coolings],
            ['time cooling added', seconds(politeness.cooledMs)],
        ]),
    ];
}

function tierMoves(summary: ReportSummary): string {
    const started = Date.parse(summary.startedAt);
    const names = summary.proxies.tiers.map((tier) => tier.name);
    return grid(
        'Tier moves',
        ['at', 'section', 'from', 'to', 'expected cost per page'],
        summary.proxies.tierMoves.map((move) => [
            formatDuration((Date.parse(move.at) - started) / 1000),
            move.section,
            move.from,
            move.to,
            move.expectedCosts.map((cost, index) => `${names[index] ?? `tier ${index + 1}`} ${cost}`).join(' · '),
        ]),
        'no section changed tier',
        'Time since the start; the expected cost per stored page on each tier when the section moved.',
    );
}

function sections(proxies: ProxyReport): string {
    const rows = Object.entries(proxies.sections)
        .sort(([a], [b]) => (a === '*' ? -1 : b === '*' ? 1 : a.localeCompare(b)))
        .map(([section, tier]) => [section === '*' ? 'the whole site' : section, tier]);
    return grid('Proxy tier per section', ['section', 'tier at the end'], rows, 'no section has a tier of its own');
}

function counters(counts: ExitCounters): Array<string | number> {
    const answered = counts.requests - counts.exitFaults;
    return [
        counts.requests,
        counts.ok,
        counts.blocked,
        counts.limited,
        counts.exitFaults,
        formatBytes(counts.bytes),
        percent(counts.blocked, answered),
    ];
}

/** 1536 → `1.5 KiB`. */
export function formatBytes(bytes: number): string {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let value = bytes;
    let unit = 0;
    while (value >= 1024 && unit < units.length - 1) {
        value /= 1024;
        unit += 1;
    }
    return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

function seconds(ms: number): string {
    return ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : formatDuration(ms / 1000);
}
