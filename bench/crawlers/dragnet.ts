/**
 * Crawler child: dragnet's `crawl()` over the fixture shop, configured as `npm start` would be
 * (the CLI's defaults from src/options/options.ts, and its V8 heap setting from src/runtime/heapGrowth.ts) with the
 * case's concurrency (none: dragnet's own choice), start URLs, storage dir and flags, logs off and no Chromium (the bench shops have no
 * script-only pages), unless the case's `wire` asks for one to send with. Prints one CrawlerResult
 * line, with a few figures of the run summary (`dragnet`).
 *
 * On any wire but `fast`, Chromium sends (some of) the requests, so this process's HTTP clients do
 * not see them: the pages are the run summary's `requests.succeeded`. To have a summary, a run that
 * reaches the time limit is then stopped as Ctrl+C stops it (the pages in flight finish) and measured
 * to its end, `finished: false`.
 *
 *   node --import tsx bench/crawlers/dragnet.ts '<CrawlerCase as JSON>'
 */
import { findChromium } from '../../src/fetch/browser/chromium.js';
import { crawlOptionsOf, parseConfig } from '../../src/options/config.js';
import { limitHeapGrowth } from '../../src/runtime/heapGrowth.js';
import { createLogger } from '../../src/monitor/logger.js';
import { crawl } from '../../src/run.js';
import { requestStop } from '../../src/runtime/stopSignal.js';
import { loadSite } from '../../src/site/sites.js';
import { startMeasurement } from './measure.js';
import { readCase, reportAndExit, startUrlsOf } from './protocol.js';

const crawlerCase = readCase();
const { wire } = crawlerCase;
const requestsSentHere = wire === undefined || wire === 'fast';
const chromiumPath = requestsSentHere ? undefined : findChromium();
if (wire === 'chrome' && chromiumPath === undefined)
    throw new Error('no Chromium found for --wire chrome (CHROMIUM_PATH or /usr/bin/chromium)');
// The environment is left out on purpose: a developer's .env or DRAGNET_* must not change the bench.
const config = parseConfig(
    [
        // None given: the width dragnet chooses itself, as `npm start` without the flag.
        ...(crawlerCase.maxConcurrency === undefined ? [] : ['--max-concurrency', String(crawlerCase.maxConcurrency)]),
        '--storage-dir',
        crawlerCase.storageDir,
        '--log-level',
        'silent',
        ...(wire ? ['--wire', wire] : []),
        ...(crawlerCase.args ?? []),
    ],
    {},
);
if (config === 'help') throw new Error('unreachable: no --help given');
const log = createLogger({ level: 'silent', pretty: false });
limitHeapGrowth();

const measurement = startMeasurement({ sampleIntervalMs: crawlerCase.sampleIntervalMs, requestsSentHere });
let cut = false;
const timeLimit = setTimeout(() => {
    cut = true;
    if (requestsSentHere) reportAndExit({ ...measurement.stop(), crawlerPages: -1, items: -1, finished: false });
    else requestStop({ signal: 'SIGTERM', cause: `the bench's time limit (${crawlerCase.timeLimitSec} s)` });
}, crawlerCase.timeLimitSec * 1000);

const { summary } = await crawl({
    ...crawlOptionsOf(config),
    // Loaded by name, as `npm start` loads it, so its pages go to parse workers where the machine has cores for them.
    site: await loadSite('demo-shop'),
    startUrls: startUrlsOf(crawlerCase),
    chromiumPath,
    log,
});
clearTimeout(timeLimit);
const { requests, proxies } = summary;
const measured = measurement.stop(requestsSentHere ? undefined : requests.succeeded);
reportAndExit({
    ...measured,
    crawlerPages: requests.succeeded,
    items: summary.items.stored,
    finished: !cut,
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
        ...(summary.recrawl
            ? {
                  recrawl: {
                      run: summary.recrawl.run,
                      items: summary.recrawl.items,
                      unchangedPages: summary.recrawl.unchangedPages,
                  },
              }
            : {}),
    },
});
