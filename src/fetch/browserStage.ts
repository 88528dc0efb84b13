/**
 * The expensive path: Crawlee's PlaywrightCrawler on Chromium, fed by escalation (and by
 * `render: 'always'` routes). The rendered DOM goes to the same extractor as the cheap HTML.
 */
import { load } from 'cheerio';
import type { RequestQueue } from '@crawlee/core';
import type { PlaywrightCrawler } from '@crawlee/playwright';
import { chromium, type Page } from 'playwright';
import type { RequestData } from '../frontier/frontier.js';
import { extractAndValidate, isIncomplete } from '../quality/validate.js';
import type { PageContext, Route } from '../site.js';
import { CHROMIUM_ARGS, INSTALL_HINT } from './chromium.js';
import type { Outcomes } from '../store/outcomes.js';
import { HookedPlaywrightCrawler } from './crawlerHooks.js';
import { deadLetterStopped, failureHook, giveUp } from './failureHandlers.js';
import { checkResponse } from './failures.js';
import type { StageOptions } from './httpStage.js';
import { parseRetryAfter } from './retryPolicy.js';

/** How often `waitUntil: 'fields'` looks at the page again. */
const FIELDS_POLL_MILLIS = 100;

export interface BrowserStageOptions extends StageOptions {
    /** The Chromium binary (see `findChromium`). */
    executablePath: string;
    /** Pages open at once in one browser. Default: 4. */
    maxOpenPagesPerBrowser?: number;
    /** A browser is replaced after this many pages, so leaks do not pile up. Default: 100. */
    retireBrowserAfterPageCount?: number;
    /** How long to wait for a route's `waitFor` selector and `waitUntil` condition together. Default: 10 000 ms. */
    waitForTimeoutMillis?: number;
}

export function createBrowserStage(options: BrowserStageOptions): PlaywrightCrawler {
    const { site, frontier, pageHandler, outcomes, queue } = options;
    const waitForTimeoutMillis = options.waitForTimeoutMillis ?? 10_000;
    const crawler = new HookedPlaywrightCrawler(
        {
            requestQueue: options.queue,
            // It runs beside the HTTP stage and waits for escalations; the runner stops it when both are done.
            keepAlive: true,
            maxConcurrency: options.maxConcurrency,
            maxRequestRetries: options.retryPolicy.maxAttempts - 1,
            navigationTimeoutSecs: options.requestTimeoutSecs,
            sessionPoolOptions: { blockedStatusCodes: [] },
            launchContext: {
                launcher: chromium,
                launchOptions: { executablePath: options.executablePath, args: CHROMIUM_ARGS, headless: true },
            },
            browserPoolOptions: {
                maxOpenPagesPerBrowser: options.maxOpenPagesPerBrowser ?? 4,
                retireBrowserAfterPageCount: options.retireBrowserAfterPageCount ?? 100,
            },
            // Images, fonts, media and stylesheets never hold the fields we extract.
            preNavigationHooks: [
                async ({ blockRequests, request }) => {
                    await blockRequests();
                    options.metrics?.fetchStarted(request);
                },
            ],
            async requestHandler(context) {
                const { request, response, page } = context;
                const status = response?.status() ?? 200;
                options.metrics?.responded(request, { stage: 'browser', status });
                const headers = (await response?.allHeaders()) ?? {};
                const failure = checkResponse(status, headers['content-type'] ?? 'text/html', {
                    headers,
                    body: await response?.text().catch(() => undefined),
                    url: page.url(),
                });
                if (failure) {
                    failure.retryAfterMs = parseRetryAfter(headers['retry-after']);
                    throw failure;
                }

                const route = site.routeFor(request.label, new URL(request.url));
                if (!route) throw new Error(`no route "${request.label}" in site ${site.name}`);
                const userData = request.userData as RequestData;
                const pageContext = { url: new URL(page.url()), label: route.label, renderer: 'browser' as const, userData };
                await waitForContent(page, route, pageContext, waitForTimeoutMillis);
                const html = await page.content();
                await pageHandler.handle({
                    request: { url: request.url, label: request.label, userData },
                    route,
                    $: load(html),
                    html,
                    status,
                    headers,
                    finalUrl: frontier.normalize(page.url()) ?? request.url,
                    renderer: 'browser',
                    settle: (outcome) => outcomes.settle(queue, request, outcome),
                });
            },
        },
        options.config,
    );
    crawler.onFailure = failureHook({ ...options, stage: 'browser' });
    // A page escalated before its route was stopped is not rendered any more.
    crawler.preFetchCheck = async (request) => {
        if (!options.driftBreaker.isStopped(request.label ?? '')) return false;
        deadLetterStopped(request, 'browser', options);
        return true;
    };
    return crawler;
}

/**
 * Waits for what the route says shows its data is there: its `waitFor` selector, then its
 * `waitUntil` condition. Running out of time is not an error here: the extractor and the
 * schema decide whether the page is usable.
 */
async function waitForContent(page: Page, route: Route, context: PageContext, timeoutMillis: number): Promise<void> {
    const deadline = Date.now() + timeoutMillis;
    const remaining = () => Math.max(1, deadline - Date.now());
    if (route.waitFor) await page.waitForSelector(route.waitFor, { timeout: remaining() }).catch(() => undefined);
    if (route.waitUntil === 'networkidle') {
        await page.waitForLoadState('networkidle', { timeout: remaining() }).catch(() => undefined);
    } else if (route.waitUntil === 'fields') {
        while (Date.now() < deadline) {
            if (!isIncomplete(extractAndValidate(route, load(await page.content()), context))) return;
            await page.waitForTimeout(Math.min(FIELDS_POLL_MILLIS, remaining()));
        }
    }
}

/**
 * Why pages cannot be rendered, or undefined when Chromium starts. Checked by launching it once
 * before the browser stage runs, so a missing or broken browser is one clear message rather
 * than a crash in the middle of the crawl.
 */
export async function browserProblem(executablePath: string | undefined): Promise<string | undefined> {
    if (!executablePath) return `no Chromium found; ${INSTALL_HINT}`;
    try {
        const browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS, headless: true, timeout: 30_000 });
        await browser.close();
        return undefined;
    } catch (error) {
        const reason = (error instanceof Error ? error.message : String(error)).split('\n')[0];
        return `Chromium at ${executablePath} does not start (${reason}); ${INSTALL_HINT}`;
    }
}

/**
 * Without a browser, the pages waiting for one cannot be done in this run: each goes to
 * dead-letter as `renderer-unavailable`, to be re-queued once a browser is installed.
 * Returns how many there were.
 */
export async function deadLetterUnrendered(queue: RequestQueue, outcomes: Outcomes, problem: string): Promise<number> {
    let count = 0;
    for (let request = await queue.fetchNextRequest(); request; request = await queue.fetchNextRequest()) {
        giveUp(queue, outcomes, request, { failureClass: 'permanent', reason: 'renderer-unavailable', error: problem, attempts: 0, stage: 'browser' });
        await queue.markRequestHandled(request);
        count += 1;
    }
    return count;
}
