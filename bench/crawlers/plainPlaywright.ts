/**
 * Crawler child of the render suite's comparison: the PlaywrightCrawler a Crawlee user would write
 * from Crawlee's docs for the same crawl of the fixture shop, on the same Chromium with the same
 * launch flags as dragnet's (so the browser, not its build, is what differs). A router with one
 * handler per page type, `enqueueLinks` with the selectors dragnet's demo-shop routes follow, the
 * product fields read from the rendered page (the shop's script fills them in before `load`, the
 * event Crawlee's navigation waits for) and pushed to the default dataset, everything else
 * Crawlee's defaults. Prints one line: `{ durationSec, items, pages }`.
 *
 *   CRAWLEE_STORAGE_DIR=<dir> node --import tsx bench/crawlers/plainPlaywright.ts '<PlainRenderCase as JSON>'
 */
import { createPlaywrightRouter, log, LogLevel, PlaywrightCrawler } from 'crawlee';
import { CHROMIUM_ARGS, findChromium } from '../../src/fetch/browser/chromium.js';
import { productFields, withoutQuery } from './plainShop.js';

export interface PlainRenderCase {
    shopUrl: string;
}

export interface PlainRenderResult {
    durationSec: number;
    /** Products stored. */
    items: number;
    /** Pages the crawler handled (every one rendered). */
    pages: number;
}

const renderCase = JSON.parse(process.argv[2] ?? '') as PlainRenderCase;
const executablePath = findChromium();
if (!executablePath)
    throw new Error('no Chromium found; the render bench needs one (CHROMIUM_PATH or /usr/bin/chromium)');
log.setLevel(LogLevel.OFF);

const router = createPlaywrightRouter();
router.addDefaultHandler(async ({ enqueueLinks }) => {
    await enqueueLinks({ selector: 'a.category-link', label: 'CATEGORY' });
});
router.addHandler('CATEGORY', async ({ enqueueLinks }) => {
    await enqueueLinks({ selector: 'a.product-link', label: 'PRODUCT', transformRequestFunction: withoutQuery });
    await enqueueLinks({ selector: 'a.next', label: 'CATEGORY' });
});
router.addHandler('PRODUCT', async ({ parseWithCheerio, request, pushData }) => {
    const $ = await parseWithCheerio();
    await pushData(productFields($, request.loadedUrl ?? request.url));
});

const crawler = new PlaywrightCrawler({
    requestHandler: router,
    launchContext: { launchOptions: { executablePath, args: CHROMIUM_ARGS, headless: true } },
});
const started = Date.now();
const stats = await crawler.run([`${renderCase.shopUrl}/`]);
const durationSec = (Date.now() - started) / 1000;
const items = (await (await crawler.getDataset()).getInfo())?.itemCount ?? -1;
const result: PlainRenderResult = { durationSec, items, pages: stats.requestsFinished };
process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
