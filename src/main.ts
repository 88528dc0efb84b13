/**
 * The command line: `npm start -- [options]`. With no site or start URL it crawls the
 * built-in demo shop, started in-process on a loopback port.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { startShop, type Shop } from './demo/shop.js';
import { runCommand } from './commands/command.js';
import { crawlOptionsOf, helpText, parseConfig } from './config.js';
import { ConfigError } from './configError.js';
import { findChromium } from './fetch/chromium.js';
import { InvalidUrlError, normalizeUrl } from './frontier/normalize.js';
import { limitHeapGrowth } from './heapGrowth.js';
import { createLogger } from './monitor/logger.js';
import { formatSummary } from './monitor/summary.js';
import { crawl } from './run.js';
import type { Site } from './site.js';
import { loadSite } from './sites.js';

/** The demo: a shop small enough to finish in seconds, with every kind of page the pipeline handles. */
const DEMO_SHOP = { seed: 7, products: 200, scriptOnlyRate: 0.1, transientFailureRate: 0.03, notFoundLinks: 3 };

async function main(): Promise<number> {
    const config = parseConfig(process.argv.slice(2), process.env);
    if (config === 'help') {
        process.stdout.write(helpText());
        return 0;
    }
    const log = createLogger({ level: config.logLevel });
    const site = await loadSite(config.site);
    limitHeapGrowth();

    let shop: Shop | undefined;
    let startUrls = config.startUrls;
    if (site.name === 'demo-shop' && startUrls.length === 0) {
        if (config.redisUrl || config.databaseUrl) {
            throw new ConfigError('the built-in demo starts a shop of its own in each process, which a fleet cannot share: give the workers --start-url (or another --site)');
        }
        shop = await startShop(DEMO_SHOP);
        startUrls = [`${shop.url}/`];
        log.info({ url: shop.url, ...DEMO_SHOP }, 'demo shop started');
    }
    try {
        const { summary, exitCode } = await crawl({
            ...crawlOptionsOf(config),
            // The demo shop listens on a new port each time: an earlier demo's queue cannot be resumed.
            fresh: config.fresh || shop !== undefined,
            site,
            startUrls: checkStartUrls(site, startUrls),
            chromiumPath: findChromium(),
            log,
        });
        process.stdout.write(`${formatSummary(summary)}\n`);
        if (config.summaryJson) {
            await mkdir(dirname(config.summaryJson), { recursive: true });
            await writeFile(config.summaryJson, `${JSON.stringify(summary, null, 2)}\n`);
        }
        return exitCode;
    } finally {
        await shop?.close();
    }
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

runCommand(main);
