/**
 * Crawler child: the least a crawler of the fixture shop can be, as a floor to read the others
 * against. undici's `request` on one keep-alive agent, an array for a queue and a Set of the URLs
 * seen, the case's concurrency; each page parsed with cheerio as dragnet's HTTP stage parses it
 * (htmlparser2, the document emptied after its read, as src/parse/loadedDocument.ts does), the
 * links plain Crawlee follows (plainShop.ts, the product links without their query), a product's
 * fields as plain Crawlee reads them, appended to a JSON Lines file. Nothing else: no retries, no
 * timeouts, no robots.txt, no persisted queue, no raw pages, no checks on what came back.
 *
 *   node --import tsx bench/crawlers/bareLoop.ts '<CrawlerCase as JSON>'
 */
import { type CheerioAPI, load } from 'cheerio';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { HTMLPARSER2 } from '../../src/parse/parsePage.js';
import { documentOf } from '../../src/site/selectors.js';
import { startMeasurement } from './measure.js';
import { productFields } from './plainShop.js';
import { readCase, reportAndExit } from './protocol.js';

type Label = 'START' | 'CATEGORY' | 'PRODUCT';

const crawlerCase = readCase();
const agent = new Agent({ connections: crawlerCase.maxConcurrency });
const itemsFile = createWriteStream(join(crawlerCase.storageDir, 'items.jsonl'));
const queue: Array<{ url: string; label: Label }> = [];
const seen = new Set<string>();
let items = 0;

function enqueue($: CheerioAPI, baseUrl: string, selector: string, label: Label, dropQuery = false): void {
    $(selector).each((_, element) => {
        const href = $(element).attr('href');
        if (!href) return;
        const url = new URL(href, baseUrl);
        url.hash = '';
        if (dropQuery) url.search = '';
        if (seen.has(url.href)) return;
        seen.add(url.href);
        queue.push({ url: url.href, label });
    });
}

async function crawlPage({ url, label }: { url: string; label: Label }): Promise<void> {
    const response = await request(url, { dispatcher: agent });
    const html = await response.body.text();
    const $ = load(html, HTMLPARSER2);
    if (label === 'START') enqueue($, url, 'a.category-link', 'CATEGORY');
    if (label === 'CATEGORY') {
        enqueue($, url, 'a.product-link', 'PRODUCT', true);
        enqueue($, url, 'a.next', 'CATEGORY');
    }
    if (label === 'PRODUCT') {
        // The same cheerio at run time; its type comes from Crawlee's
        // CommonJS build there, from the ES module build here.
        // biome-ignore lint/plugin/noDoubleCast: one cheerio, typed twice (CommonJS and ES module builds)
        itemsFile.write(`${JSON.stringify(productFields($ as unknown as Parameters<typeof productFields>[0], url))}\n`);
        items += 1;
        enqueue($, url, 'a.related-link', 'PRODUCT', true);
    }
    documentOf($).children = [];
}

const measurement = startMeasurement({ sampleIntervalMs: crawlerCase.sampleIntervalMs });
const timeLimit = setTimeout(() => {
    reportAndExit({ ...measurement.stop(), crawlerPages: -1, items: -1, finished: false });
}, crawlerCase.timeLimitSec * 1000);

const width = crawlerCase.maxConcurrency;
if (width === undefined) throw new Error('the bare loop has no width of its own: give the case maxConcurrency');
let crawled = 0;
await new Promise<void>((resolve, reject) => {
    let active = 0;
    const startMore = () => {
        while (active < width && queue.length > 0) {
            active += 1;
            crawlPage(queue.shift()!).then(() => {
                active -= 1;
                crawled += 1;
                startMore();
            }, reject);
        }
        if (active === 0) resolve();
    };
    const start = `${crawlerCase.shopUrl}/`;
    seen.add(start);
    queue.push({ url: start, label: 'START' });
    startMore();
});
await new Promise((resolve) => itemsFile.end(resolve));
clearTimeout(timeLimit);
reportAndExit({ ...measurement.stop(), crawlerPages: crawled, items, finished: true });
