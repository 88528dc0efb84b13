/**
 * One run of the seed suite (bench/seed.ts): a fresh shop in a process of its own
 * (shopProcess.ts), so its CPU is its own figure and the bench parent stays idle; the crawler
 * in its child (runCrawler.ts), given the shop's listing pages up front in a file, one URL a
 * line; then what the shop saw and which products the crawler stored, read from its storage dir
 * after it exited. Storage and the URL file are removed afterwards.
 */
import { createReadStream } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Dataset } from '@crawlee/core';
import type { ShopOptions } from '../../src/demo/shop.js';
import { datasetItems, openStorage, storeNames } from '../../src/store/datasets.js';
import type { CrawlerCase } from '../crawlers/protocol.js';
import { runCrawler, type Crawler, type RunOutcome } from './runCrawler.js';
import { type ShopReport, startShopProcess } from './shopProcess.js';

export interface SeedRun {
    outcome: RunOutcome;
    shop: ShopReport & { products: number; listingPages: number };
    /**
     * The products found in the crawler's stored items, by SKU, each once, and the items read:
     * `items - distinct` are duplicates. Null when the run was cut or failed (nothing to trust).
     */
    stored: { items: number; distinct: number } | null;
}

/** The site dragnet's child crawls (bench/crawlers/dragnet.ts): its items are kept under this name. */
const DRAGNET_SITE = 'demo-shop';

export async function runSeed(
    crawler: Crawler,
    shopOptions: ShopOptions,
    crawl: Omit<CrawlerCase, 'shopUrl' | 'storageDir' | 'startUrlsFile'>,
): Promise<SeedRun> {
    const storageDir = await mkdtemp(join(tmpdir(), `dragnet-bench-seed-${crawler.name}-`));
    // Beside the storage dir, not in it: the crawl is given an empty dir, as everywhere in the bench.
    const urlsDir = await mkdtemp(join(tmpdir(), 'dragnet-bench-seed-urls-'));
    const shop = await startShopProcess(shopOptions);
    try {
        const startUrlsFile = join(urlsDir, 'listings.txt');
        await writeFile(startUrlsFile, shop.listingPaths.map((path) => `${shop.url}${path}\n`).join(''));
        const outcome = await runCrawler(crawler, { ...crawl, shopUrl: shop.url, storageDir, startUrlsFile });
        const report = await shop.report();
        const finished = outcome.ok && outcome.result.finished;
        return {
            outcome,
            shop: { ...report, products: shop.products, listingPages: shop.listingPaths.length },
            stored: finished ? distinctProducts(await storedSkus(crawler, storageDir)) : null,
        };
    } finally {
        await shop.close();
        await rm(storageDir, { recursive: true, force: true });
        await rm(urlsDir, { recursive: true, force: true });
    }
}

function distinctProducts(skus: string[]): { items: number; distinct: number } {
    return { items: skus.length, distinct: new Set(skus.filter((sku) => sku !== '')).size };
}

/**
 * The SKU of every item the crawler stored, duplicates kept, read where each keeps its items:
 * dragnet in its site's dataset (SQLite), plain Crawlee in its default dataset (a JSON file an
 * item), Scrapy in its JSON Lines feed. An item without one counts as `''`.
 */
async function storedSkus(crawler: Crawler, storageDir: string): Promise<string[]> {
    const skuOf = (item: unknown) => String((item as { sku?: unknown }).sku ?? '');
    if ('command' in crawler) {
        const skus: string[] = [];
        const lines = createInterface({ input: createReadStream(join(storageDir, 'items.jsonl')) });
        for await (const line of lines) if (line.trim() !== '') skus.push(skuOf(JSON.parse(line)));
        return skus;
    }
    if (crawler.script.endsWith('plainCrawlee.ts')) {
        const dir = join(storageDir, 'datasets', 'default');
        const skus: string[] = [];
        // One at a time: 400,000 files opened at once would run out of file descriptors.
        for (const file of (await readdir(dir)).filter((name) => name.endsWith('.json')))
            skus.push(skuOf(JSON.parse(await readFile(join(dir, file), 'utf8'))));
        return skus;
    }
    const { config, storage } = openStorage(storageDir);
    try {
        const dataset = await Dataset.open(storeNames(DRAGNET_SITE).items, { config });
        const skus: string[] = [];
        for await (const item of datasetItems(dataset)) skus.push(skuOf(item));
        return skus;
    } finally {
        await storage.close();
    }
}
