/**
 * The public API as a route file or a script imports it (`'dragnet'`, src/index.ts): a site loaded by
 * name and crawled with only what `crawl()` cannot guess, the rest left to its documented defaults.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type CrawlOptions, crawl, findChromium, loadSite } from 'dragnet';
import { startShop, type Shop } from '../src/demo/shop.js';
import { createLogger } from '../src/monitor/logger.js';

describe("crawl() from 'dragnet'", () => {
    let shop: Shop;
    let dir: string;
    before(async () => {
        shop = await startShop({ seed: 5, products: 20, scriptOnlyRate: 0 });
        dir = await mkdtemp(join(tmpdir(), 'dragnet-api-'));
    });
    after(async () => {
        await shop.close();
        await rm(dir, { recursive: true, force: true });
    });

    const options = async (storage: string): Promise<CrawlOptions> => ({
        site: await loadSite('demo-shop'),
        startUrls: [`${shop.url}/`],
        storageDir: join(dir, storage),
        allowPrivateNetwork: true,
        maxRequests: 12,
        progress: 'off',
        log: createLogger({ level: 'silent' }),
    });

    it('crawls a site loaded by name, looking for a Chromium itself when none is named', async () => {
        const { summary, exitCode } = await crawl(await options('found'));
        assert.equal(exitCode, 0);
        assert.equal(summary.requests.total, 12);
        assert.equal(summary.requests.succeeded + summary.requests.deadLettered, 12);
        assert.equal(summary.browser.available, findChromium() !== undefined);
    });

    it('runs without a browser when chromiumPath is given as undefined', async () => {
        const { summary, exitCode } = await crawl({ ...(await options('none')), chromiumPath: undefined });
        assert.equal(exitCode, 0);
        assert.equal(summary.browser.available, false);
        assert.ok(summary.items.stored > 0);
    });
});
