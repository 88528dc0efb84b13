/**
 * The expensive path: Crawlee's PlaywrightCrawler on Chromium, fed by escalation (and by
 * `render: 'always'` routes). The rendered DOM goes to the same extractor as the cheap HTML.
 *
 * Each page opens in a context of its own with the session's identity (proxyRouting.ts): its
 * exit (through that exit's egress proxy), its user agent and client hints, and its cookies,
 * which go back into the session's jar once the page is handled, so a JS challenge the browser
 * passed is passed for the HTTP stage too.
 *
 * wiring/build.ts loads this module with a dynamic import when the browser stage starts, once a page
 * needs the browser: Playwright and @crawlee/playwright are ~90 MB of resident memory (their
 * bundled sources alone are ~20 MB of heap strings), which a crawl that never renders should not
 * carry. Import nothing from here statically outside the browser stage.
 */
import { load } from 'cheerio';
import { PlaywrightCrawler, type PlaywrightCrawlingContext } from '@crawlee/playwright';
import type { Request } from '@crawlee/core';
import { chromium, type Page } from 'playwright';
import { extractAndValidate, isIncomplete } from '../quality/validate.js';
import type { PageContext, Route } from '../site.js';
import type { RequestData } from '../vocabulary/request.js';
import { CHROMIUM_ARGS } from './chromium.js';
import { type CrawlerClass, type CrawlerHooks, queueOption, withHooks } from './crawlerHooks.js';
import { deadLetterStopped, failureHook } from './failureHandlers.js';
import type { StageOptions } from './httpStage.js';
import { startEgressProxy, type EgressProxy } from './egressProxy.js';
import { classifyStatus, FetchFailure } from './failures.js';
import { exitKey, type Exit } from './identities.js';
import { checkResponse, detectBlock } from './responseCheck.js';
import { cookiesForBrowser, keepBrowserCookies } from './sessionCookies.js';
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

/**
 * The stage's crawler: it knows which request each page is opened for (so the page's context
 * gets that request's session), and closes the egress proxies when it is torn down.
 */
class BrowserStageCrawler extends HookedPlaywrightCrawler {
    readonly requestsByPage = new Map<string, Request>();
    closeEgress: () => Promise<void> = async () => undefined;

    override async _runRequestHandler(context: PlaywrightCrawlingContext): Promise<void> {
        this.requestsByPage.set(context.id, context.request);
        try {
            await super._runRequestHandler(context);
        } finally {
            this.requestsByPage.delete(context.id);
        }
    }

    override async teardown(): Promise<void> {
        await super.teardown();
        await this.closeEgress();
    }
}

export async function createBrowserStage(options: BrowserStageOptions): Promise<PlaywrightCrawler> {
    const { site, frontier, pageHandler, outcomes, queue, events, waitForTimeoutMillis, egress, routing } = options;
    // Every request of the browser goes out through an egress proxy, loopback included (Chromium
    // bypasses a proxy for loopback unless told `<-loopback>`); WebRTC's UDP, which no proxy carries, is off.
    const proxy = await startEgressProxy(egress);
    const exitProxies = new Map<string, Promise<EgressProxy>>();
    const exitProxyOf = (exit: Exit): Promise<EgressProxy> | undefined => {
        if (!exit.proxyUrl) return undefined;
        const key = exitKey(exit);
        if (!exitProxies.has(key)) exitProxies.set(key, startEgressProxy(egress, exit.proxyUrl));
        return exitProxies.get(key);
    };
    const crawler = new BrowserStageCrawler(
        {
            ...queueOption(options.queue),
            // It runs beside the HTTP stage and waits for escalations; the runner stops it when both are done.
            keepAlive: true,
            maxConcurrency: options.maxConcurrency,
            maxRequestRetries: options.retryPolicy.maxAttempts - 1,
            navigationTimeoutSecs: options.requestTimeoutSecs,
            // Sessions are ours (identities.ts), shared with the HTTP stage; each page gets its own context.
            useSessionPool: false,
            persistCookiesPerSession: false,
            launchContext: {
                launcher: chromium,
                useIncognitoPages: true,
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
                // The fingerprint is the session's, the same the HTTP stage sends.
                useFingerprints: false,
                prePageCreateHooks: [
                    async (pageId, _controller, pageOptions) => {
                        const request = crawler.requestsByPage.get(pageId);
                        const attempt = request && routing.attemptOf(request);
                        if (!attempt || !pageOptions) return;
                        Object.assign(pageOptions, attempt.identity.browserContextOptions());
                        const exitProxy = await exitProxyOf(attempt.exit);
                        if (exitProxy) pageOptions.proxy = { server: exitProxy.url, bypass: '<-loopback>' };
                    },
                ],
            },
            preNavigationHooks: [
                async ({ blockRequests, request, page }) => {
                    const url = new URL(request.url);
                    // Refused before the page loads (the egress proxy would refuse it too, but Chromium would report only a failed tunnel).
                    await egress.check(url);
                    const attempt = routing.attemptOf(request);
                    if (attempt) {
                        const cdp = await page.context().newCDPSession(page);
                        await cdp.send('Emulation.setUserAgentOverride', attempt.identity.userAgentOverride());
                        await page.context().addCookies(await cookiesForBrowser(attempt.identity.cookieJar, url));
                    }
                    // Images, fonts, media and stylesheets never hold the fields we extract.
                    await blockRequests();
                    events.emit('attemptStarted', { stage: 'browser', request, url: request.url });
                },
            ],
            async requestHandler(context) {
                const { request, response, page } = context;
                const attempt = routing.attemptOf(request);
                let status = response?.status() ?? 200;
                events.emit('responded', { stage: 'browser', request, url: request.url, status });
                if (classifyStatus(status, { viaProxy: attempt?.exit.proxyUrl !== undefined }) === 'exit') {
                    throw new FetchFailure('exit', `HTTP ${status} from the proxy`, status, `proxy-${status}`);
                }
                const headers = (await response?.allHeaders()) ?? {};
                let failure = checkResponse(status, headers['content-type'] ?? 'text/html', {
                    headers,
                    body: await response?.text().catch(() => undefined),
                    url: page.url(),
                });
                if (failure?.reason === 'challenge' && (await passChallenge(page, waitForTimeoutMillis))) {
                    failure = undefined;
                    status = 200;
                }
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
                if (attempt) await keepBrowserCookies(attempt.identity.cookieJar, await page.context().cookies());
                routing.end(request, { ok: true, bytes: html.length });
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
    crawler.closeEgress = async () => {
        const started = await Promise.allSettled([...exitProxies.values()]);
        await Promise.all([proxy, ...started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []))].map((each) => each.close()));
    };
    crawler.onFailure = failureHook({ ...options, stage: 'browser' });
    crawler.preFetchCheck = async (request) => {
        // A page escalated before its route was stopped is not rendered any more.
        if (options.driftBreaker.isStopped(request.label ?? '')) {
            await deadLetterStopped(request, 'browser', options);
            return true;
        }
        // The session, and the site's turn, before a page opens: the page's context is the session's.
        await routing.begin(request, 'browser');
        return false;
    };
    return crawler;
}

/**
 * Waits for a JS challenge to run its course (the page sets its cookie and loads again) and says
 * whether the page that ends up there is no block any more.
 */
async function passChallenge(page: Page, timeoutMillis: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMillis;
    while (Date.now() < deadline) {
        await page.waitForLoadState('load', { timeout: Math.max(1, deadline - Date.now()) }).catch(() => undefined);
        // The page may be between two documents: its content is read again on the next turn.
        const html = await page.content().catch(() => undefined);
        // The status of the document now shown is not known here (403 alone would read as a block): its signs decide.
        if (html !== undefined && !detectBlock({ status: 200, headers: {}, body: html })) return true;
        await page.waitForTimeout(FIELDS_POLL_MILLIS);
    }
    return false;
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
