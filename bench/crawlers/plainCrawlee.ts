/**
 * Crawler child: the CheerioCrawler a Crawlee user would write from Crawlee's docs for the
 * same crawl of the fixture shop — a router with one handler per page type, `enqueueLinks`
 * with the selectors dragnet's demo-shop routes follow, the product fields pushed to the
 * default dataset. Storage is Crawlee's default: persisted under CRAWLEE_STORAGE_DIR (set
 * by the parent), or with `persistStorage: false` when the case says so.
 *
 *   CRAWLEE_STORAGE_DIR=<dir> node --import tsx bench/crawlers/plainCrawlee.ts '<CrawlerCase as JSON>'
 */
import { CheerioCrawler, Configuration, createCheerioRouter, log, LogLevel, type RequestOptions } from 'crawlee';
import { startMeasurement } from './measure.js';
import { readCase, reportAndExit } from './protocol.js';

const crawlerCase = readCase();
// Logs off, as for dragnet; Crawlee's INFO lines would also land on stdout, where the result goes.
log.setLevel(LogLevel.OFF);

/**
 * The shop's product links carry `?ref=related`, `?ref=category` or `utm_*` parameters.
 * Crawlee's unique key already drops `utm_*` and fragments but not `ref`, so without this a
 * product would be fetched up to three times; a user who saw the duplicates would add this.
 */
function withoutQuery(request: RequestOptions): RequestOptions {
    const url = new URL(request.url);
    url.search = '';
    return { ...request, url: url.href };
}

const router = createCheerioRouter();

router.addDefaultHandler(async ({ enqueueLinks }) => {
    await enqueueLinks({ selector: 'a.category-link', label: 'CATEGORY' });
});

router.addHandler('CATEGORY', async ({ enqueueLinks }) => {
    await enqueueLinks({ selector: 'a.product-link', label: 'PRODUCT', transformRequestFunction: withoutQuery });
    await enqueueLinks({ selector: 'a.next', label: 'CATEGORY' });
});

router.addHandler('PRODUCT', async ({ $, request, pushData, enqueueLinks }) => {
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
    await enqueueLinks({ selector: 'a.related-link', label: 'PRODUCT', transformRequestFunction: withoutQuery });
});

const measurement = startMeasurement({
    sampleIntervalMs: crawlerCase.sampleIntervalMs,
    extraSeries: {
        poolConcurrencySamples: () => crawler?.autoscaledPool?.currentConcurrency,
        poolDesiredSamples: () => crawler?.autoscaledPool?.desiredConcurrency,
    },
});
const timeLimit = setTimeout(() => {
    reportAndExit({ ...measurement.stop(), crawlerPages: -1, items: -1, finished: false });
}, crawlerCase.timeLimitSec * 1000);

// The second argument is how Crawlee's docs turn persistence off; without it, the global default configuration.
const crawler: CheerioCrawler = new CheerioCrawler(
    { requestHandler: router, maxConcurrency: crawlerCase.maxConcurrency },
    crawlerCase.persistStorage === false ? new Configuration({ persistStorage: false }) : undefined,
);
const stats = await crawler.run([`${crawlerCase.shopUrl}/`]);
clearTimeout(timeLimit);
const measured = measurement.stop();
const items = (await (await crawler.getDataset()).getInfo())?.itemCount ?? -1;
reportAndExit({ ...measured, crawlerPages: stats.requestsFinished, items, finished: true });
