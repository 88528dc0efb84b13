/**
 * The command line: `npm start -- [options]`. With no site or start URL it crawls the
 * built-in demo shop, started in-process on a loopback port.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { startShop, type Shop } from './demo/shop.js';
import { runCommand } from './commands/command.js';
import { crawlOptionsOf, helpText, parseConfig } from './options/config.js';
import { ConfigError } from './options/configError.js';
import { findChromium, INSTALL_HINT } from './fetch/browser/chromium.js';
import { type Provisioned, provisionChromium } from './fetch/browser/provisionChromium.js';
import { InvalidUrlError, normalizeUrl } from './frontier/normalize.js';
import { limitHeapGrowth } from './runtime/heapGrowth.js';
import { currentHeapLimitMb, heapLimitMbFor, memoryBudgetMb, runWithHeapLimit } from './runtime/memoryBudget.js';
import { createLogger, type Logger } from './monitor/logger.js';
import { formatSummary } from './monitor/summary.js';
import { crawl } from './run.js';
import type { Site } from './site/site.js';
import { loadSite } from './site/sites.js';
import { endingActorRun, startActorRun } from './runtime/actor.js';

/** The demo: a shop small enough to finish in seconds, with every kind of page the pipeline handles. */
const DEMO_SHOP = { seed: 7, products: 200, scriptOnlyRate: 0.1, transientFailureRate: 0.03, notFoundLinks: 3 };

async function main(): Promise<number> {
    let config = parseConfig(process.argv.slice(2), process.env);
    if (config === 'help') {
        process.stdout.write(helpText());
        return 0;
    }
    const memoryMb = memoryBudgetMb(config.memoryMb);
    // With a budget, the work is done by this command started again with the budget's heap limit.
    const ranWithLimit = await runWithHeapLimit(memoryMb);
    if (ranWithLimit !== undefined) return ranWithLimit;
    // On a runner (runtime/actor.ts) the actor's input is the run's: the options are read again with it.
    const actor = await startActorRun(process.argv.slice(2), process.env);
    if (actor) config = actor.config;
    const log = createLogger({ level: config.logLevel });
    if (memoryMb !== undefined) {
        log.info(
            { memoryMb, heapLimitMb: currentHeapLimitMb() },
            `memory budget ${memoryMb} MB: V8 heap limit ${currentHeapLimitMb()} MB (old ` +
                `space ${heapLimitMbFor(memoryMb)} MB)`,
        );
    }
    const site = await loadSite(config.site);
    if (config.summaryJson) await makeSummaryFolder(config.summaryJson);
    limitHeapGrowth();

    let shop: Shop | undefined;
    let startUrls = config.startUrls;
    let provisioned: Provisioned | undefined;
    if (site.name === 'demo-shop' && startUrls.length === 0) {
        if (config.redisUrl || config.databaseUrl) {
            throw new ConfigError(
                'the built-in demo starts a shop of its own in each process, which a fleet cannot share: give the ' +
                    'workers --start-url (or another --site)',
            );
        }
        // The first command of the README: it gets itself a browser, as `npm test` does.
        provisioned = await provisionChromium({ say: (line) => log.warn(line) });
        shop = await startShop(DEMO_SHOP);
        startUrls = [`${shop.url}/`];
        log.info(DEMO_SHOP, `demo shop started at ${shop.url}`);
    }
    try {
        await actor?.feedItems(site.name, log);
        const { summary, exitCode } = await crawl({
            ...crawlOptionsOf(config),
            // The demo shop listens on a new port each time: an earlier demo's queue cannot be resumed.
            fresh: config.fresh || shop !== undefined,
            site,
            startUrls: checkStartUrls(site, startUrls),
            chromiumPath: provisioned ? provisioned.path : chromiumOf(site, log),
            log,
        });
        process.stdout.write(`${formatSummary(summary, { resumable: shop === undefined })}\n`);
        if (provisioned && (!provisioned.path || provisioned.attempts.length > 0))
            process.stdout.write(`  chromium   ${provisioned.note}\n`);
        if (config.summaryJson) await writeFile(config.summaryJson, `${JSON.stringify(summary, null, 2)}\n`);
        return exitCode;
    } finally {
        await shop?.close();
    }
}

/**
 * The Chromium for a run of a site, as found. Nothing is installed for a site's crawl (the machines
 * that run one are set up for it, as the Dockerfile is); a site whose routes may render is told
 * once, at the start, that without a browser those pages go to dead-letter.
 */
function chromiumOf(site: Site, log: Logger): string | undefined {
    const path = findChromium();
    if (!path && [...site.routes.values()].some((route) => route.render !== 'never')) {
        const where = process.env.CHROMIUM_PATH ? ` at CHROMIUM_PATH (${process.env.CHROMIUM_PATH})` : '';
        log.warn(
            `no Chromium found${where}: pages that need a browser will go to dead-letter as renderer-unavailable; to ` +
                `render them, ${INSTALL_HINT}`,
        );
    }
    return path;
}

/** Made before the crawl: a --summary-json whose folder cannot be made would otherwise fail only at the run's end. */
async function makeSummaryFolder(summaryJson: string): Promise<void> {
    await mkdir(dirname(summaryJson), { recursive: true }).catch((error: NodeJS.ErrnoException) => {
        throw new ConfigError(
            `--summary-json ${summaryJson}: its folder cannot be made: ${error.code ?? error.message}`,
        );
    });
}

/** Start URLs must be crawlable and handled by a route of the site; anything else is a config error. */
function checkStartUrls(site: Site, urls: string[]): string[] {
    return urls.map((raw) => {
        let url: string;
        try {
            url = normalizeUrl(raw, { trackingParams: site.trackingParams });
        } catch (error) {
            if (error instanceof InvalidUrlError) throw new ConfigError(`--start-url: ${error.message}`);
            throw error;
        }
        if (!site.routeFor(undefined, new URL(url))) {
            throw new ConfigError(`--start-url ${url}: no route of site ${site.name} matches it`);
        }
        return url;
    });
}

runCommand(endingActorRun(main));
