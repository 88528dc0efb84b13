/**
 * Crawler child: dragnet's `crawl()` over the fixture shop, configured as `npm start` would be
 * (the CLI's defaults from src/options/options.ts, and its V8 heap setting from src/runtime/heapGrowth.ts) with the
 * case's concurrency, storage dir and flags, logs off and no Chromium (the bench shops have no
 * script-only pages). Prints one CrawlerResult line, with a few figures of the run summary (`dragnet`).
 *
 *   node --import tsx bench/crawlers/dragnet.ts '<CrawlerCase as JSON>'
 */
import { crawlOptionsOf, parseConfig } from '../../src/options/config.js';
import { limitHeapGrowth } from '../../src/runtime/heapGrowth.js';
import { createLogger } from '../../src/monitor/logger.js';
import { crawl } from '../../src/run.js';
import { loadSite } from '../../src/site/sites.js';
import { startMeasurement } from './measure.js';
import { readCase, reportAndExit } from './protocol.js';

const crawlerCase = readCase();
// The environment is left out on purpose: a developer's .env or DRAGNET_* must not change the bench.
const config = parseConfig(
    [
        '--max-concurrency',
        String(crawlerCase.maxConcurrency),
        '--storage-dir',
        crawlerCase.storageDir,
        '--log-level',
        'silent',
        ...(crawlerCase.args ?? []),
    ],
    {},
);
if (config === 'help') throw new Error('unreachable: no --help given');
const log = createLogger({ level: 'silent', pretty: false });
limitHeapGrowth();

const measurement = startMeasurement({ sampleIntervalMs: crawlerCase.sampleIntervalMs });
const timeLimit = setTimeout(() => {
    reportAndExit({ ...measurement.stop(), crawlerPages: -1, items: -1, finished: false });
}, crawlerCase.timeLimitSec * 1000);

const { summary } = await crawl({
    ...crawlOptionsOf(config),
    // Loaded by name, as `npm start` loads it, so its pages go to parse workers where the machine has cores for them.
    site: await loadSite('demo-shop'),
    startUrls: [`${crawlerCase.shopUrl}/`],
    chromiumPath: undefined,
    log,
});
clearTimeout(timeLimit);
const measured = measurement.stop();
const { requests, proxies } = summary;
reportAndExit({
    ...measured,
    crawlerPages: requests.succeeded,
    items: summary.items.stored,
    finished: true,
    dragnet: {
        retried: requests.retried,
        deadLettered: requests.deadLettered,
        deadLetterByReason: summary.deadLetterByReason,
        errorsByClass: summary.errorsByClass,
        proxyTiers: proxies.tiers.map(({ name, requests, ok, blocked, limited, exitFaults }) => ({
            name,
            requests,
            ok,
            blocked,
            limited,
            exitFaults,
        })),
        proxyExits: proxies.exits.map(({ tier, name, requests, ok, exitFaults, breakerOpened }) => ({
            tier,
            name,
            requests,
            ok,
            exitFaults,
            breakerOpened,
        })),
        tierMoves: proxies.tierMoves.length,
        probes: proxies.probes,
    },
});
