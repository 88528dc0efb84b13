/**
 * Crawler child: the CheerioCrawler a Crawlee user would write from Crawlee's docs for the
 * same crawl of the fixture shop — a router with one handler per page type, `enqueueLinks`
 * with the selectors dragnet's demo-shop routes follow, the product fields pushed to the
 * default dataset. Storage is Crawlee's default: persisted under CRAWLEE_STORAGE_DIR (set
 * by the parent), or with `persistStorage: false` when the case says so.
 *
 *   CRAWLEE_STORAGE_DIR=<dir> node --import tsx bench/crawlers/plainCrawlee.ts '<CrawlerCase as JSON>'
 */
import { CheerioCrawler, Configuration, createCheerioRouter, log, LogLevel } from 'crawlee';
import { startMeasurement } from './measure.js';
import { readCase, reportAndExit, startUrlsOf } from './protocol.js';
import { productFields, withoutQuery } from './plainShop.js';

const crawlerCase = readCase();
// Logs off, as for dragnet; Crawlee's INFO lines would also land on stdout, where the result goes.
log.setLevel(LogLevel.OFF);

const router = createCheerioRouter();

router.addDefaultHandler(async ({ enqueueLinks }) => {
    await enqueueLinks({ selector: 'a.category-link', label: 'CATEGORY' });
});

router.addHandler('CATEGORY', async ({ enqueueLinks }) => {
    await enqueueLinks({ selector: 'a.product-link', label: 'PRODUCT', transformRequestFunction: withoutQuery });
    await enqueueLinks({ selector: 'a.next', label: 'CATEGORY' });
});

router.addHandler('PRODUCT', async ({ $, request, pushData, enqueueLinks }) => {
    await pushData(productFields($, request.loadedUrl ?? request.url));
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
// Given listing URLs (the seed suite), each is a listing page, labelled as the router's listings are.
const stats = await crawler.run(
    crawlerCase.startUrlsFile === undefined
        ? startUrlsOf(crawlerCase)
        : startUrlsOf(crawlerCase).map((url) => ({ url, label: 'CATEGORY' })),
);
clearTimeout(timeLimit);
const measured = measurement.stop();
const items = (await (await crawler.getDataset()).getInfo())?.itemCount ?? -1;
reportAndExit({ ...measured, crawlerPages: stats.requestsFinished, items, finished: true });
