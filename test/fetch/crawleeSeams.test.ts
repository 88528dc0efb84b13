/**
 * The Crawlee internals dragnet overrides or calls, as docs/architecture.md lists them, checked
 * against the Crawlee that is installed: each protected or private method is where dragnet expects
 * it and takes the arguments dragnet passes, and a short real crawl of the demo shop (both stages,
 * retries, a reset connection, a dead-letter) goes through every override. An upgrade that renames
 * a method, moves it, or stops calling it fails here; the page's table says what each one is for.
 *
 * The crawl's crawlers are watched as the run makes them (RunningStages.watch): each override is
 * wrapped on the instance to count its calls and then runs as it is. Nothing of Crawlee is stubbed.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import {
    Configuration,
    getRequestId,
    LocalEventManager,
    Logger,
    Request,
    RequestProvider,
    RequestQueue,
    SessionError,
} from '@crawlee/core';
import { BasicCrawler, HttpCrawler } from '@crawlee/http';
import { BrowserCrawler, PlaywrightCrawler } from '@crawlee/playwright';
import { BrowserPool } from '@crawlee/browser-pool';
import { Redis } from 'ioredis';
import siteDefinition from '../../routes/demo-shop.js';
import { startShop, type Shop } from '../../src/demo/shop.js';
import { findChromium } from '../../src/fetch/browser/chromium.js';
import { HookedHttpCrawler, queueOption } from '../../src/fetch/crawlerHooks.js';
import { HttpClient } from '../../src/fetch/http/httpClient.js';
import { readBody } from '../../src/fetch/http/responseBody.js';
import { JobQueue } from '../../src/frontier/redis/jobQueue.js';
import { RunningStages } from '../../src/monitor/live.js';
import { createLogger } from '../../src/monitor/logger.js';
import { crawl } from '../../src/run.js';
import { requestStop } from '../../src/runtime/stopSignal.js';
import { openStorage } from '../../src/store/datasets.js';
import { freshAttempts } from '../../src/store/deadLetterStore.js';
import { BoundedRequestQueue } from '../../src/store/sqlite/boundedRequestQueue.js';
import { REDIS_URL } from '../helpers/fleetWorld.js';

const chromiumPath = findChromium();
/** The demo crawl below takes a fraction of this. */
const CRAWL_DEADLINE_MS = 120_000;

/**
 * Each seam: the class dragnet's code meets it on, the method,
 * the class that defines it there, and its declared arity.
 */
const SEAMS: [
    meetsOn: { name: string; prototype: object },
    method: string,
    definedBy: { name: string },
    arity: number,
][] = [
    [HttpCrawler, '_runRequestHandler', HttpCrawler, 1],
    [HttpCrawler, '_requestFunctionErrorHandler', BasicCrawler, 3],
    [HttpCrawler, '_canRequestBeRetried', BasicCrawler, 2],
    [HttpCrawler, '_cleanupContext', BasicCrawler, 1],
    [HttpCrawler, 'isProxyError', BasicCrawler, 1],
    [HttpCrawler, '_getMessageFromError', BasicCrawler, 1],
    [HttpCrawler, '_requestFunction', HttpCrawler, 1],
    [HttpCrawler, '_getRequestOptions', HttpCrawler, 4],
    [HttpCrawler, '_applyCookies', HttpCrawler, 4],
    [HttpCrawler, '_abortDownloadOfBody', HttpCrawler, 2],
    [HttpCrawler, '_parseResponse', HttpCrawler, 3],
    [PlaywrightCrawler, '_runRequestHandler', PlaywrightCrawler, 1],
    [PlaywrightCrawler, '_requestFunctionErrorHandler', BasicCrawler, 3],
    [PlaywrightCrawler, '_cleanupContext', BrowserCrawler, 1],
    [PlaywrightCrawler, 'teardown', BrowserCrawler, 0],
    [BrowserPool, 'newPage', BrowserPool, 0],
    [LocalEventManager, 'getMemoryInfo', LocalEventManager, 0],
    [RequestQueue, 'reclaimRequest', RequestQueue, 0],
    [RequestProvider, 'reclaimRequest', RequestProvider, 1],
    [Logger, '_log', Logger, 4],
];

/** The class on whose prototype `method` is first found from `Class`, and the method. */
function definitionOf(
    Class: { prototype: object },
    method: string,
): { by: string; fn: (...args: unknown[]) => unknown } | undefined {
    for (let proto: object | null = Class.prototype; proto; proto = Object.getPrototypeOf(proto)) {
        if (Object.hasOwn(proto, method))
            return {
                by: proto.constructor.name,
                fn: (proto as Record<string, (...args: unknown[]) => unknown>)[method]!,
            };
    }
    return undefined;
}

// A crawl that fails part-way can leave its browser stage running, which would keep this file's process alive.
after(() => void setTimeout(() => process.exit(1), 30_000).unref());

describe("Crawlee's internals where dragnet expects them", () => {
    for (const [meetsOn, method, definedBy, arity] of SEAMS) {
        it(`${meetsOn.name}: ${method}, defined by ${definedBy.name}, of ${arity} declared parameters`, () => {
            const found = definitionOf(meetsOn, method);
            assert.ok(found, `${meetsOn.name} has no ${method}: see docs/architecture.md, "Crawlee internals"`);
            assert.equal(
                found.by,
                definedBy.name,
                `${meetsOn.name}.${method} moved: see docs/architecture.md, "Crawlee internals"`,
            );
            assert.equal(
                found.fn.length,
                arity,
                `${definedBy.name}.${method} changed its parameters: see docs/architecture.md, "Crawlee internals"`,
            );
        });
    }

    it('HttpCrawler: _requestAsBrowser, set on each instance, of 2 parameters (the options and the session)', () => {
        const crawler = new HttpCrawler(
            { requestHandler: async () => undefined },
            new Configuration({ persistStorage: false }),
        );
        const requestAsBrowser: unknown = Reflect.get(crawler, '_requestAsBrowser');
        assert.equal(typeof requestAsBrowser, 'function');
        assert.equal((requestAsBrowser as () => unknown).length, 2);
    });

    it(`getRequestId: a request's id is derived from its unique key as the \
stored ids were (SQLite rows, BullMQ jobs, dead-letter entries)`, () => {
        assert.equal(getRequestId('https://example.com/a'), 'Lc4KTFBEGzPqcr0');
    });

    it(`RequestQueue: the request LRU and the dedup table that \
BoundedRequestQueue bounds take the sizes it sets`, async (t: TestContext) => {
        const dir = await mkdtemp(join(tmpdir(), 'dragnet-seams-queue-'));
        const { config, storage } = openStorage(dir);
        t.after(async () => {
            await storage.close();
            await rm(dir, { recursive: true, force: true });
        });
        // biome-ignore lint/plugin/noDoubleCast: the request LRU and the dedup table are private in Crawlee's types
        const queue = (await BoundedRequestQueue.open('bounded', { config })) as unknown as {
            requestCache: { maxLength: number };
            requestSeenCache: { size: number };
        };
        assert.equal(queue.requestCache.maxLength, BoundedRequestQueue.requestCacheSize);
        assert.equal(queue.requestSeenCache.size, BoundedRequestQueue.seenCacheSlots);
    });

    it("Request: a request's session rotations are kept in userData.__crawlee, which a re-queue clears", () => {
        const request = new Request({ url: 'http://127.0.0.1:9/a' });
        request.sessionRotationCount = 2;
        const stored = JSON.parse(JSON.stringify(request)) as {
            userData: { __crawlee?: { sessionRotationCount?: number } };
        };
        assert.equal(stored.userData.__crawlee?.sessionRotationCount, 2, 'where Crawlee keeps it, as stored');
        assert.equal(new Request(freshAttempts(stored as never) as never).sessionRotationCount, 0);
    });
});

describe('a real crawl of the demo shop through the overrides', () => {
    let shop: Shop;
    let dir: string;
    let exitCode: number;
    const calls = new Map<string, number>();
    const failures: unknown[] = [];
    const contextIds = new Set<string>();
    const pageIds: unknown[] = [];
    const logLines: { level: number; msg: string }[] = [];
    const callsOf = (key: string) => calls.get(key) ?? 0;
    /** What the crawlers lacked of what is counted. */
    const missing: string[] = [];

    /** Wraps `object[name]` to count its calls as `stage name`, then run it as it is. */
    function count(
        stage: string,
        object: Record<string, unknown>,
        name: string,
        onCall?: (args: unknown[]) => void,
    ): void {
        const original = object[name] as (...args: unknown[]) => unknown;
        if (typeof original !== 'function') return void missing.push(`${stage} ${name}`);
        object[name] = function (this: unknown, ...args: unknown[]) {
            calls.set(`${stage} ${name}`, callsOf(`${stage} ${name}`) + 1);
            onCall?.(args);
            return original.apply(this, args);
        };
    }

    function instrument(stage: string, crawler: Record<string, unknown>): void {
        for (const name of ['_requestFunctionErrorHandler', '_cleanupContext', 'preFetchCheck', 'teardown'])
            count(stage, crawler, name);
        count(stage, crawler, '_runRequestHandler', ([context]) => contextIds.add((context as { id: string }).id));
        count(stage, crawler, 'onFailure', ([, error]) => failures.push(error));
        if (stage === 'http') {
            for (const name of [
                '_requestFunction',
                '_requestAsBrowser',
                '_applyCookies',
                '_abortDownloadOfBody',
                '_parseResponse',
            ])
                count(stage, crawler, name);
        } else {
            count(stage, crawler.browserPool as Record<string, unknown>, 'newPage', ([options]) =>
                pageIds.push((options as { id?: unknown } | undefined)?.id),
            );
        }
    }

    before(async () => {
        shop = await startShop({
            seed: 7,
            products: 24,
            categories: 2,
            scriptOnlyRate: 0.25,
            transientFailureRate: 0.25,
            transientFailureKinds: ['503', 'reset'],
            notFoundLinks: 1,
            persistentFailures: 1,
        });
        dir = await mkdtemp(join(tmpdir(), 'dragnet-seams-'));
        const watch = RunningStages.prototype.watch;
        RunningStages.prototype.watch = function <C>(this: RunningStages, stage: 'http' | 'browser', crawler: C): C {
            instrument(stage, crawler as Record<string, unknown>);
            return watch.call(this, stage, crawler as never) as C;
        };
        // A seam that stops working can leave the crawl to crawl on far slower: it is stopped, and fails, past this.
        const deadline = setTimeout(
            () => requestStop({ signal: 'SIGTERM', cause: `the crawl took over ${CRAWL_DEADLINE_MS} ms` }),
            CRAWL_DEADLINE_MS,
        );
        try {
            ({ exitCode } = await crawl({
                site: siteDefinition,
                startUrls: [`${shop.url}/`],
                storageDir: dir,
                chromiumPath,
                progressIntervalSecs: 3600,
                retry: { maxAttempts: 3, baseDelaySecs: 0.05, maxDelaySecs: 0.2 },
                log: createLogger({
                    level: 'debug',
                    destination: {
                        write: (line: string) => void logLines.push(JSON.parse(line) as { level: number; msg: string }),
                    },
                }),
            }));
        } finally {
            clearTimeout(deadline);
            RunningStages.prototype.watch = watch;
        }
    });
    after(async () => {
        await shop?.close();
        await rm(dir, { recursive: true, force: true });
    });

    it(`runs every request through the stages' _runRequestHandler, \
and its pre-fetch check, from Crawlee's task`, () => {
        assert.deepEqual(missing, [], 'the crawlers have every method counted');
        assert.equal(exitCode, chromiumPath ? 0 : 1, 'without a browser, the script-only products are dead-lettered');
        for (const product of shop.products) assert.ok(shop.requestTimes(product.path).length >= 1, product.path);
        assert.ok(
            callsOf('http _runRequestHandler') >= shop.products.length,
            `${callsOf('http _runRequestHandler')} handler runs`,
        );
        assert.equal(callsOf('http preFetchCheck'), callsOf('http _runRequestHandler'));
    });

    it(`sends each HTTP request through _applyCookies and _requestFunction, \
and each response through _abortDownloadOfBody and _parseResponse`, () => {
        const sent = callsOf('http _requestFunction');
        assert.ok(sent > shop.products.length, `${sent} sent`);
        assert.equal(callsOf('http _applyCookies'), sent);
        assert.equal(callsOf('http _requestAsBrowser'), sent);
        assert.ok(
            callsOf('http _parseResponse') > shop.products.length,
            `${callsOf('http _parseResponse')} responses parsed`,
        );
        assert.equal(callsOf('http _abortDownloadOfBody'), callsOf('http _parseResponse'));
    });

    it(`hands every failed attempt to the failure hook inside _requestFunctionErrorHandler; \
a reset connection as a SessionError with its cause (isProxyError)`, () => {
        assert.ok(callsOf('http _requestFunctionErrorHandler') > 0, 'failed attempts handled');
        for (const stage of ['http', 'browser'])
            assert.equal(callsOf(`${stage} onFailure`), callsOf(`${stage} _requestFunctionErrorHandler`), stage);
        const reset = failures.find(
            (error) =>
                error instanceof SessionError && (error.cause as { code?: string } | undefined)?.code === 'ECONNRESET',
        );
        assert.ok(reset, `a reset among ${failures.map(String).join('; ')}`);
    });

    it("routes Crawlee's retry and give-up lines, which dragnet reports itself, to debug", () => {
        assert.ok(
            logLines.some(({ level, msg }) => level === 20 && /^Reclaiming failed request/.test(msg)),
            'a retry line of Crawlee at debug',
        );
        assert.ok(
            logLines.some(({ level, msg }) => level === 20 && /^Request failed and reached maximum retries/.test(msg)),
            'a give-up line of Crawlee at debug',
        );
    });

    it(`opens each browser page through browserPool.newPage with its \
crawling context id, and cleans each context up through _cleanupContext`, {
        skip: chromiumPath ? false : 'no Chromium found',
    }, () => {
        const renders = callsOf('browser _runRequestHandler');
        assert.ok(renders >= 1, 'the browser stage rendered');
        assert.equal(callsOf('browser preFetchCheck'), renders);
        assert.equal(callsOf('browser _cleanupContext'), renders);
        assert.ok(
            pageIds.length >= 1 && pageIds.every((id) => contextIds.has(id as string)),
            `page ids ${pageIds.join(', ')}`,
        );
        assert.ok(callsOf('browser teardown') >= 1, 'the browser stage torn down');
    });
});

describe('the rest of what a run relies on', () => {
    it(`a crawler's run leaves an event manager it did not initialize running, \
and the pools' memory reading is dragnet's`, async (t: TestContext) => {
        const dir = await mkdtemp(join(tmpdir(), 'dragnet-seams-events-'));
        const { config, storage } = openStorage(dir);
        t.after(async () => {
            await storage.close();
            await rm(dir, { recursive: true, force: true });
        });
        const events = config.getEventManager();
        // dragnet's subclass overrides getMemoryInfo (monitor/memoryReadings.ts).
        // biome-ignore lint/plugin/noDoubleCast: getMemoryInfo is private in Crawlee's types
        const reading = events as unknown as { getMemoryInfo(): Promise<unknown> };
        let readings = 0;
        const getMemoryInfo = reading.getMemoryInfo;
        reading.getMemoryInfo = () => {
            readings += 1;
            return getMemoryInfo.call(events);
        };
        const systemInfo = new Promise<void>((resolve) => events.on('systemInfo', () => resolve()));
        await events.init();
        t.after(() => events.close());
        await systemInfo;
        assert.ok(readings >= 1, "Crawlee's system info is read through dragnet's getMemoryInfo");

        const crawler = new HookedHttpCrawler(
            { ...queueOption(await RequestQueue.open('empty', { config })), requestHandler: async () => undefined },
            config,
        );
        await crawler.run();
        assert.equal(events.isInitialized(), true, 'the crawler closed an event manager it did not initialize');
    });

    it(`a crawler takes a queue that is no RequestQueue (the distributed \
mode's) through its requestQueue option`, async (t: TestContext) => {
        const shop = await startShop({ seed: 3, products: 2, categories: 1 });
        const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
        const prefix = `dragnet-seams-${randomUUID().slice(0, 8)}`;
        const queue = new JobQueue({ redis, prefix, name: 'seams-http', finishGraceMillis: 200 });
        t.after(async () => {
            await queue.close();
            for await (const keys of redis.scanStream({ match: `${prefix}:*`, count: 1000 }))
                if ((keys as string[]).length) await redis.unlink(...(keys as string[]));
            redis.disconnect();
            await shop.close();
        });
        queue.start();
        await queue.addRequests([{ url: `${shop.url}/` }]);
        const handled: string[] = [];
        const client = new HttpClient();
        t.after(() => client.close());
        const crawler = new HookedHttpCrawler(
            {
                ...queueOption(queue),
                httpClient: client,
                requestHandler: async ({ request }) => void handled.push(request.url),
            },
            new Configuration({ persistStorage: false }),
        );
        crawler.readBody = (_request, response) => readBody(response, 1_000_000);
        await crawler.run();
        assert.deepEqual(handled, [`${shop.url}/`]);
    });
});
