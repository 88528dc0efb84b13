/**
 * An attempt Crawlee has given up on (its timeout fired, its request was retried) goes no further
 * and stores nothing (src/fetch/crawlerHooks.ts): it stops at dragnet's next step, and its page, if
 * it went on to open one, is closed. Crawlee's own checks between steps are off, with the
 * AsyncLocalStorage they needed (vendor/apify-timeout-hookless), so each case here fails if
 * dragnet's checks are left out. Each case crawls one URL of a loopback server with the stage's
 * crawler class, a real SQLite store and, for the browser, Chromium.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { it, type TestContext } from 'node:test';
import { PlaywrightCrawler } from '@crawlee/playwright';
import type { Page } from 'playwright';
import { findChromium } from '../../src/fetch/browser/chromium.js';
import {
    attemptSettler,
    type CrawlerClass,
    HookedHttpCrawler,
    queueOption,
    withHooks,
} from '../../src/fetch/crawlerHooks.js';
import { HttpClient } from '../../src/fetch/http/httpClient.js';
import { readBody } from '../../src/fetch/http/responseBody.js';
import { SqliteDatasetClient } from '../../src/store/sqlite/datasetClient.js';
import { SqliteOutcomes } from '../../src/store/sqlite/outcomes.js';
import { openSiteStores, type SiteStores } from '../../src/wiring/open.js';

const chromiumPath = findChromium();

/** A loopback page that counts its fetches, and the embedded stores with its URL queued. */
async function world(
    t: TestContext,
    name: string,
): Promise<{
    url: string;
    fetches: () => number;
    stores: SiteStores;
    outcomes: SqliteOutcomes;
    items: () => Promise<unknown[]>;
}> {
    let fetches = 0;
    const server: Server = createServer((request, response) => {
        if (request.url === '/page') fetches += 1; // Chromium asks for /favicon.ico too
        response.setHeader('content-type', 'text/html');
        response.end('<html><head><title>one page</title></head><body>one page</body></html>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/page`;
    const dir = await mkdtemp(join(tmpdir(), `dragnet-attempt-${name}-`));
    const stores = await openSiteStores({ site: name, storageDir: dir });
    t.after(async () => {
        stores.lock.release();
        await stores.storage.close();
        await new Promise((resolve) => server.close(resolve));
        await rm(dir, { recursive: true, force: true });
    });
    const dataset = new SqliteDatasetClient(stores.storage.db, stores.names.items);
    return {
        url,
        fetches: () => fetches,
        stores,
        outcomes: new SqliteOutcomes(stores),
        items: async () => (await dataset.listItems()).items,
    };
}

/**
 * Gives each attempt of `crawler` (a Crawlee crawler) `millis`, all its time. Crawlee sets that
 * field, protected in its types, from requestHandlerTimeoutSecs, adding the navigation's time and a
 * margin; the tests need it exact.
 */
function setAttemptMillis(crawler: object, millis: number): void {
    Reflect.set(crawler, 'requestHandlerTimeoutMillis', millis);
}

function httpCrawler(
    stores: SiteStores,
    options: NonNullable<ConstructorParameters<typeof HookedHttpCrawler>[0]>,
): InstanceType<typeof HookedHttpCrawler> {
    const crawler = new HookedHttpCrawler(
        {
            ...queueOption(stores.httpQueue),
            maxRequestRetries: 1,
            navigationTimeoutSecs: 5,
            httpClient: new HttpClient(),
            ...options,
        },
        stores.config,
    );
    crawler.readBody = (_request, response) => readBody(response, 1_000_000);
    return crawler;
}

it(`HTTP: an attempt whose time ran out while it waited before its \
fetch never fetches, and the retry stores the page once`, async (t) => {
    const { url, fetches, stores, outcomes, items } = await world(t, 'http-wait');
    await stores.httpQueue.addRequest({ url });
    const handled: number[] = [];
    let waits = 0;
    const crawler = httpCrawler(stores, {
        // The first attempt waits (as for the site's turn) past its whole time.
        preNavigationHooks: [async () => void (++waits === 1 && (await sleep(600)))],
        async requestHandler(context) {
            handled.push(context.request.retryCount);
            await attemptSettler(
                context,
                outcomes,
                stores.httpQueue,
            )({ items: [{ url: context.request.url, retryCount: context.request.retryCount }] as never });
        },
    });
    setAttemptMillis(crawler, 300);
    await crawler.run();
    await sleep(700); // the first attempt's wait is over: it would fetch now

    assert.equal(waits, 2);
    assert.equal(fetches(), 1);
    assert.deepEqual(handled, [1]);
    assert.equal((await items()).length, 1);
});

it('HTTP: an attempt whose handler ran past its time stores nothing; the retry stores the page once', async (t) => {
    const { url, fetches, stores, outcomes, items } = await world(t, 'http-handler');
    await stores.httpQueue.addRequest({ url });
    const refused: unknown[] = [];
    const crawler = httpCrawler(stores, {
        requestHandlerTimeoutSecs: 0.3,
        async requestHandler(context) {
            const { retryCount } = context.request;
            if (retryCount === 0) await sleep(600);
            await attemptSettler(
                context,
                outcomes,
                stores.httpQueue,
            )({ items: [{ retryCount }] as never }).catch((error: unknown) => refused.push(error));
        },
    });
    await crawler.run();
    await sleep(700);

    assert.equal(fetches(), 2);
    assert.deepEqual(await items(), [{ retryCount: 1 }]);
    assert.equal(refused.length, 1);
    assert.match(String(refused[0]), /attempt ended/);
});

it('browser: an attempt whose time ran out while its page was created never navigates, and its page is closed', {
    skip: chromiumPath ? false : 'no Chromium found',
}, async (t) => {
    const { url, fetches, stores, outcomes, items } = await world(t, 'browser-wait');
    await stores.browserQueue.addRequest({ url });
    // biome-ignore lint/plugin/noDoubleCast: Crawlee's hooks are protected: the mixin types them loosely inside
    const Crawler = withHooks(PlaywrightCrawler as unknown as CrawlerClass) as unknown as typeof PlaywrightCrawler;
    const firstAttemptMillis = 1500;
    const pages: Page[] = [];
    let creations = 0;
    let latePageClosed = false;
    const crawler: PlaywrightCrawler = new Crawler(
        {
            ...queueOption(stores.browserQueue),
            maxRequestRetries: 1,
            navigationTimeoutSecs: 10,
            launchContext: { launchOptions: { executablePath: chromiumPath, headless: true } },
            // The retry gets all the time it needs, however long Chromium took to start.
            errorHandler: () => setAttemptMillis(crawler, 60_000),
            browserPoolOptions: {
                // The first page is created after its attempt's time is up, whenever the browser came up (its time ran
                // from before the launch). The pool creates pages one at a time, so it comes before the retry's.
                prePageCreateHooks: [async () => void (++creations === 1 && (await sleep(firstAttemptMillis + 500)))],
                postPageCreateHooks: [async (page) => void pages.push(page as Page)],
            },
            async requestHandler(context) {
                for (let waited = 0; waited < 2000 && !latePageClosed; waited += 50) {
                    latePageClosed = pages[0] !== context.page && pages[0]!.isClosed();
                    await sleep(50);
                }
                await attemptSettler(
                    context,
                    outcomes,
                    stores.browserQueue,
                )({ items: [{ retryCount: context.request.retryCount }] as never });
            },
        },
        stores.config,
    );
    setAttemptMillis(crawler, firstAttemptMillis);
    await crawler.run();

    assert.equal(creations, 2);
    assert.equal(pages.length, 2);
    assert.equal(fetches(), 1);
    assert.equal(latePageClosed, true);
    assert.deepEqual(await items(), [{ retryCount: 1 }]);
});
