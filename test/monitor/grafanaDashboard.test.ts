/**
 * The Grafana dashboard in the repository (docker/grafana/dragnet-fleet.json) asks only for metrics a
 * worker serves: every `dragnet_*` name in its queries is in a scrape of the metrics endpoint.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { ConcurrencyController } from '../../src/fetch/pacing/concurrencyController.js';
import { Metrics } from '../../src/monitor/metrics.js';
import { RunStats } from '../../src/monitor/stats.js';
import type { ProxyReport } from '../../src/vocabulary/report.js';
import { ROOT } from '../helpers/cli.js';

/** A run with proxy routing and adaptive concurrency (their series are served only then), nothing sent yet. */
const NO_PROXIES: ProxyReport = {
    tiers: [],
    exits: [],
    sessions: { created: 0, retired: { blocked: 0, 'max-uses': 0, errors: 0 } },
    sections: {},
    tierMoves: [],
    probes: 0,
    challengesToBrowser: 0,
    politeness: { acquired: 0, spaced: 0, waitedMs: 0, coolings: 0, cooledMs: 0 },
};

interface Dashboard {
    panels: { title: string; targets: { expr: string }[] }[];
}

describe('the Grafana dashboard of a fleet', () => {
    it('queries only metrics a worker serves, each panel at least one', async () => {
        const dashboard = JSON.parse(await readFile(`${ROOT}docker/grafana/dragnet-fleet.json`, 'utf8')) as Dashboard;
        const served = new Set(
            (
                await new Metrics({
                    stats: new RunStats(),
                    proxies: () => NO_PROXIES,
                    concurrency: new ConcurrencyController({ maxConcurrency: 20 }),
                    processMetrics: false,
                }).scrape()
            ).body
                .split('\n')
                .flatMap((line) => /^# TYPE (\S+) /.exec(line)?.[1] ?? []),
        );
        assert.ok(dashboard.panels.length >= 10, `${dashboard.panels.length} panels`);
        for (const panel of dashboard.panels) {
            const names = panel.targets.flatMap(({ expr }) =>
                [...expr.matchAll(/\bdragnet_[a-z_]+/g)].map(([name]) => name.replace(/_bucket$/, '')),
            );
            assert.ok(names.length > 0, `${panel.title}: a dragnet metric`);
            for (const name of names) assert.ok(served.has(name), `${panel.title}: ${name} is not served`);
        }
    });
});
