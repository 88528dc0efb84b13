/**
 * The expensive path: Crawlee's PlaywrightCrawler on Chromium, fed by escalation (and by
 * `render: 'always'` routes). The rendered DOM goes to the same extractor as the cheap HTML.
 *
 * wiring/build.ts loads this module with a dynamic import when the browser stage starts, once a page
 * needs the browser: Playwright and @crawlee/playwright are ~90 MB of resident memory (their
 * bundled sources alone are ~20 MB of heap strings), which a crawl that never renders should not
 * carry. Import nothing from here statically outside the browser stage.
 */
import { load } from 'cheerio';
import { PlaywrightCrawler } from '@crawlee/playwright';
import { chromium, type Page } from 'playwright';
import { extractAndValidate, isIncomplete } from '../quality/validate.js';
import type { PageContext, Route } from '../site.js';
import type { RequestData } from '../vocabulary/request.js';
import { CHROMIUM_ARGS } from './chromium.js';
import { type CrawlerClass, type CrawlerHooks, queueOption, withHooks } from './crawlerHooks.js';
import { deadLetterStopped, failureHook } from './failureHandlers.js';
import type { StageOptions } from './httpStage.js';
import { type Egress, ForbiddenAddressError } from './egress.js';
import { startEgressProxy } from './egressProxy.js';
import { FetchFailure } from './failures.js';
import { checkResponse } from './responseCheck.js';
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
    /** How long to wait for a route's `waitFor` selector and `waitUntil` condition together (crawl()'s `browserWaitSecs`). */
    waitForTimeoutMillis: number;
}

const HookedPlaywrightCrawler = withHooks(PlaywrightCrawler as unknown as CrawlerClass) as unknown as new (
    ...args: ConstructorParameters<typeof PlaywrightCrawler>
) => PlaywrightCrawler & CrawlerHooks;

/** The stage's crawler, which closes the browser's egress proxy when it is torn down. */
class BrowserStageCrawler extends HookedPlaywrightCrawler {
    closeEgress: () => Promise<void> = async () => undefined;

    override async teardown(): Promise<void> {
        await super.teardown();
        await this.closeEgress();
    }
}

export async function createBrowserStage(options: BrowserStageOptions): Promise<PlaywrightCrawler> {
    const { site, frontier, pageHandler, outcomes, queue, events, waitForTimeoutMillis, egress } = options;
    // Every request of the browser goes out through the egress proxy, loopback included (Chromium
    // bypasses a proxy for loopback unless told `<-loopback>`); WebRTC's UDP, which no proxy carries, is off.
    const proxy = await startEgressProxy(egress);
    const crawler = new BrowserStageCrawler(
        {
            ...queueOption(options.queue),
            // It runs beside the HTTP stage and waits for escalations; the runner stops it when both are done.
            keepAlive: true,
            maxConcurrency: options.maxConcurrency,
            maxRequestRetries: options.retryPolicy.maxAttempts - 1,
            navigationTimeoutSecs: options.requestTimeoutSecs,
            sessionPoolOptions: { blockedStatusCodes: [] },
            launchContext: {
                launcher: chromium,
                // The process handles SIGINT and SIGTERM itself (pages in flight finish, rounds.ts): Playwright must not close the browser under them.
                launchOptions: {
                    executablePath: options.executablePath,
                    args: [...CHROMIUM_ARGS, '--force-webrtc-ip-handling-policy=disable_non_proxied_udp'],
                    proxy: { server: proxy.url, bypass: '<-loopback>' },
                    headless: true,
                    handleSIGINT: false,
                    handleSIGTERM: false,
                    handleSIGHUP: false,
                },
            },
            browserPoolOptions: {
                maxOpenPagesPerBrowser: options.maxOpenPagesPerBrowser ?? 4,
                retireBrowserAfterPageCount: options.retireBrowserAfterPageCount ?? 100,
            },
            // Images, fonts, media and stylesheets never hold the fields we extract.
            preNavigationHooks: [
                async ({ blockRequests, request }) => {
                    await checkNavigation(egress, new URL(request.url));
                    await blockRequests();
                    events.emit('attemptStarted', { stage: 'browser', request, url: request.url });
                },
            ],
            async requestHandler(context) {
                const { request, response, page } = context;
                const status = response?.status() ?? 200;
                events.emit('responded', { stage: 'browser', request, url: request.url, status });
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

                // Chromium follows redirects itself: each hop's address went through the egress proxy, its scope is checked here.
                if (!frontier.inScope(new URL(page.url()))) {
                    throw new FetchFailure('permanent', `offsite-redirect: ${request.url} → ${page.url()}`, status, 'offsite-redirect');
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
    crawler.closeEgress = proxy.close;
    crawler.onFailure = failureHook({ ...options, stage: 'browser' });
    // A page escalated before its route was stopped is not rendered any more.
    crawler.preFetchCheck = async (request) => {
        if (!options.driftBreaker.isStopped(request.label ?? '')) return false;
        await deadLetterStopped(request, 'browser', options);
        return true;
    };
    return crawler;
}

/**
 * A page the egress refuses is dead-lettered as `forbidden-address` before a browser page opens
 * for it (the proxy would refuse it too, but Chromium would report only a failed tunnel).
 */
async function checkNavigation(egress: Egress, url: URL): Promise<void> {
    egress.assertAllowed(url);
    if (/^\[|^[\d.]+$/.test(url.hostname)) return;
    await new Promise<void>((resolve, reject) =>
        egress.lookup(url.hostname, { all: true }, (error) => (error instanceof ForbiddenAddressError ? reject(error) : resolve())),
    );
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
