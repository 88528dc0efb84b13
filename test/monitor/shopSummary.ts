/**
 * The run summary of a shop crawled with the embedded backend, from `stats` and `proxies`: what the
 * summary, report and sitemap tests build theirs from.
 */
import { MemorySeenSet } from '../../src/frontier/seenSet.js';
import { RunStats } from '../../src/monitor/stats.js';
import { buildSummary } from '../../src/monitor/summary.js';
import type { ProxyReport, RunSummary } from '../../src/vocabulary/report.js';
import { directProxies } from './proxyReports.js';

/** Where such a run's outcomes are: a storage dir that is a path. */
export const SHOP_STORAGE = {
    dir: './storage',
    dataset: 'shop',
    quarantine: 'shop-quarantine',
    deadLetter: 'shop-dead-letter',
    rawPages: './storage/raw_pages/shop',
};

export function shopSummary(stats = new RunStats(), proxies: ProxyReport = directProxies()): RunSummary {
    return buildSummary(stats, {
        site: 'shop',
        seenSet: new MemorySeenSet(),
        render: {},
        drift: [],
        browserAvailable: true,
        storage: SHOP_STORAGE,
        proxies,
    });
}
