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
import { createPlaywrightRouter, log, LogLevel, PlaywrightCrawler, type RequestOptions } from 'crawlee';
import { CHROMIUM_ARGS, findChromium } from '../../src/fetch/chromium.js';

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
if (!executablePath) throw new Error('no Chromium found; the render bench needs one (CHROMIUM_PATH or /usr/bin/chromium)');
log.setLevel(LogLevel.OFF);

/** As in plainCrawlee.ts: product links carry `?ref=…` and `utm_*`, which Crawlee's unique key would keep apart. */
function withoutQuery(request: RequestOptions): RequestOptions {
    const url = new URL(request.url);
    url.search = '';
    return { ...request, url: url.href };
}

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
    const availabilityLine = $('p.availability').first();
    const inStock = availabilityLine.hasClass('in-stock');
    const available = /\((\d+) available\)/.exec(availabilityLine.text())?.[1];
    await pushData({
        url: request.loadedUrl ?? request.url,
        title: $('h1.product-title').text().trim(),
        price: Number($('.buy-box .price').text().replace(/[^0-9.]/g, '')),
        currency: $('.buy-box .price').attr('data-currency'),
        sku: $('.buy-box .sku').text().trim(),
        availability: inStock ? 'in_stock' : 'out_of_stock',
        stock: available !== undefined ? Number(available) : 0,
        description: $('.description').text().trim(),
        category: $('nav.breadcrumb a.breadcrumb-category').text().trim(),
    });
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
