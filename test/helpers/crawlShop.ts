/**
 * The setup the integration tests share: start the fixture shop, crawl it with the demo-shop site
 * into a fresh storage dir, and read back what the run stored.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import siteDefinition from '../../routes/demo-shop.js';
import type { DeadLetterEntry } from '../../src/vocabulary/failure.js';
import { createLogger } from '../../src/monitor/logger.js';
import type { RunSummary } from '../../src/vocabulary/report.js';
import type { CrawlOptions } from '../../src/options/crawlOptions.js';
import { crawl } from '../../src/run.js';
import { storeNames } from '../../src/store/datasets.js';
import type { QuarantineEntry, StoredItem } from '../../src/store/records.js';
import { startShop, type Shop, type ShopOptions } from '../../src/demo/shop.js';
import { readDataset } from './stores.js';

export interface ShopCrawl {
    shop: Shop;
    storageDir: string;
    summary: RunSummary;
    exitCode: number;
    items: StoredItem[];
    quarantine: QuarantineEntry[];
    deadLetters: DeadLetterEntry[];
    /** How long the crawl took, in seconds. */
    seconds: number;
    /** Stops the shop (and its front) and removes the storage dir. */
    close(): Promise<void>;
}

/** A server in front of the shop (a gate, a CDN), which the crawl starts at instead of the shop. */
export interface ShopFront {
    origin: string;
    close(): Promise<void>;
}

export interface CrawlShopOptions {
    /** Starts the shop's front once the shop is up. Default: none; the crawl starts at the shop. */
    front?: (shop: Shop) => Promise<ShopFront>;
}

/** Crawls a fixture shop end to end; `crawlOptions` override the defaults of the crawl (logs off). */
export async function crawlShop(
    shopOptions: ShopOptions,
    crawlOptions: Partial<CrawlOptions> & { chromiumPath: string | undefined },
    { front: startFront }: CrawlShopOptions = {},
): Promise<ShopCrawl> {
    const shop = await startShop(shopOptions);
    const storageDir = await mkdtemp(join(tmpdir(), 'dragnet-shop-crawl-'));
    let front: ShopFront | undefined;
    const close = async () => {
        await front?.close();
        await shop.close();
        await rm(storageDir, { recursive: true, force: true });
    };
    try {
        front = await startFront?.(shop);
        const site = crawlOptions.site ?? siteDefinition;
        const started = performance.now();
        const { summary, exitCode } = await crawl({
            site,
            startUrls: [`${front?.origin ?? shop.url}/`],
            storageDir,
            progressIntervalSecs: 3600,
            log: createLogger({ level: 'silent' }),
            ...crawlOptions,
        });
        const names = storeNames(site.name);
        return {
            shop,
            storageDir,
            summary,
            exitCode,
            seconds: (performance.now() - started) / 1000,
            items: await readDataset<StoredItem>(storageDir, names.items),
            quarantine: await readDataset<QuarantineEntry>(storageDir, names.quarantine),
            deadLetters: await readDataset<DeadLetterEntry>(storageDir, names.deadLetter),
            close,
        };
    } catch (error) {
        await close();
        throw error;
    }
}
