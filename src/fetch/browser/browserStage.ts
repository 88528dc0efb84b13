/**
 * The expensive path: Crawlee's PlaywrightCrawler on Chromium, fed by escalation (and by
 * `render: 'always'` routes). The rendered DOM goes to the same extractor as the cheap HTML.
 *
 * Each page opens in a context of its own with the session's identity (proxyRouting.ts): its
 * exit (through that exit's egress proxy), its user agent and client hints, and its cookies,
 * which go back into the session's jar once the page is handled, so a JS challenge the browser
 * passed is passed for the HTTP stage too. A page that rendered is kept for the same session's
 * next render (sessionPages.ts); how many render at once is the machine's (browserConcurrency.ts).
 *
 * wiring/build.ts loads this module with a dynamic import when the browser stage starts, once a page
 * needs the browser: Playwright and @crawlee/playwright are ~90 MB of resident memory (their
 * bundled sources alone are ~20 MB of heap strings), which a crawl that never renders should not
 * carry. Import nothing from here statically outside the browser stage.
 */
import { BrowserLaunchError } from '@crawlee/browser-pool';
import { PlaywrightCrawler, type PlaywrightCrawlingContext } from '@crawlee/playwright';
import type { Request } from '@crawlee/core';
import { chromium, type Page, type Request as PlaywrightRequest } from 'playwright';
import type { RequestData } from '../../vocabulary/request.js';
import { blockedUrlPatterns } from './blockedResources.js';
import type { BrowserPages } from './browserConcurrency.js';
import { CHROMIUM_ARGS } from './chromium.js';
import { attemptSettler, type CrawlerClass, type CrawlerHooks, queueOption, withHooks } from '../crawlerHooks.js';
import { deadLetterStopped, failureHook, giveUp } from '../failureHandlers.js';
import type { StageOptions } from '../stageOptions.js';
import { startEgressProxy, type EgressProxy } from '../egress/egressProxy.js';
import { classifyStatus, FetchFailure } from '../failures/failures.js';
import { LaunchBreaker, launchFailure } from './launchFailures.js';
import { exitKey, type Exit, type Identity } from '../egress/identities.js';
import { passChallenge, renderedHtml, waitForContent } from './renderedPage.js';
import { checkResponse } from '../failures/responseCheck.js';
import { cookiesForBrowser, keepBrowserCookies } from '../egress/sessionCookies.js';
import { parseRetryAfter } from '../failures/retryPolicy.js';
import { devtoolsOf } from './pageDevtools.js';
import { PagesOpening } from './pagesOpening.js';
import { SessionPages, type SessionPagesOptions } from './sessionPages.js';

export interface BrowserStageOptions extends Omit<StageOptions, 'maxConcurrency'> {
    /** The Chromium binary (see `findChromium`). */
    executablePath: string;
    /**
     * Pages rendering at once: where the pool starts, and the least and most it scales between (browserConcurrency.ts).
     */
    pages: BrowserPages;
    /** A browser is replaced after opening this many pages, so leaks do not pile up. Default: 100. */
    retireBrowserAfterPageCount?: number;
    /** The hosts the site is on (its start URLs' and allowed domains): never blocked as third parties. */
    siteHosts: readonly string[];
    /** How rendered pages are kept for their session's next render. Default: SESSION_PAGES_DEFAULTS. */
    sessionPages?: SessionPagesOptions;
    /**
     * How long to wait for a route's `waitFor` selector and
     * `waitUntil` condition together (crawl()'s `browserWaitSecs`).
     */
    waitForTimeoutMillis: number;
}

// Crawlee's methods the hooks use are protected: the mixin sees a class that shows them, and the
// class it makes is given PlaywrightCrawler's own constructor and the hooks (as in crawlerHooks.ts).
// biome-ignore lint/plugin/noDoubleCast: Crawlee's hooks are protected: the mixin types them loosely inside
const HookedPlaywrightCrawler = withHooks(PlaywrightCrawler as unknown as CrawlerClass) as unknown as new (
    ...args: ConstructorParameters<typeof PlaywrightCrawler>
) => PlaywrightCrawler & CrawlerHooks;

/**
 * The stage's crawler: it knows which request each page is opened for (so the page's context
 * gets that request's session), hands a session the page it rendered with before instead of
 * opening one, and closes the egress proxies, and any browser still launching, when it is torn down.
 */
class BrowserStageCrawler extends HookedPlaywrightCrawler {
    readonly requestsByPage = new Map<string, Request>();
    readonly sessionPages: SessionPages;
    /** The session of each page that rendered a page, so it can be parked for that session. */
    readonly renderedFor = new WeakMap<Page, Identity>();
    /** The session `request` renders in (its attempt's). */
    sessionOf: (request: Request) => Identity | undefined = () => undefined;
    closeEgress: () => Promise<void> = async () => undefined;
    readonly launches = new LaunchBreaker();
    private readonly pagesOpening = new PagesOpening();

    constructor(
        options: ConstructorParameters<typeof PlaywrightCrawler>[0] & { sessionPages?: SessionPagesOptions },
        config?: ConstructorParameters<typeof PlaywrightCrawler>[1],
    ) {
        const { sessionPages, ...crawlerOptions } = options;
        super(crawlerOptions, config);
        this.sessionPages = new SessionPages(sessionPages);
        const pool = this.browserPool;
        const maxOpenPages = pool.maxOpenPagesPerBrowser;
        const openPage = pool.newPage.bind(pool);
        // BrowserCrawler opens a page per request through the pool; the session's parked page is handed back instead.
        pool.newPage = (async (pageOptions) => {
            const request = pageOptions?.id === undefined ? undefined : this.requestsByPage.get(pageOptions.id);
            const identity = request && this.sessionOf(request);
            const parked =
                identity &&
                this.sessionPages.take(identity.id, (page) => {
                    const controller = pool.getBrowserControllerByPage(page);
                    return controller !== undefined && pool.activeBrowserControllers.has(controller);
                });
            if (parked) return parked;
            // Parked pages count as open: the pages rendering now, this one among them, keep their room in one browser.
            await this.sessionPages.makeRoom(maxOpenPages - this.requestsByPage.size);
            return this.pagesOpening.track(() =>
                openPage(pageOptions).then(
                    (page) => {
                        this.launches.opened();
                        return page;
                    },
                    (error: unknown) => {
                        if (!(error instanceof BrowserLaunchError)) throw error;
                        this.launches.failed();
                        throw launchFailure(error);
                    },
                ),
            );
        }) as typeof pool.newPage;
    }

    override async _runRequestHandler(context: PlaywrightCrawlingContext): Promise<void> {
        this.requestsByPage.set(context.id, context.request);
        try {
            await super._runRequestHandler(context);
        } finally {
            this.requestsByPage.delete(context.id);
        }
    }

    /** A page that rendered is parked for its session while the session lives; any other is closed. */
    protected override async _cleanupContext(context: PlaywrightCrawlingContext): Promise<void> {
        const identity = context.page && this.renderedFor.get(context.page);
        if (context.page) this.renderedFor.delete(context.page);
        if (identity && !identity.retiredFor && !context.page.isClosed())
            return this.sessionPages.park(identity.id, context.page);
        await super._cleanupContext(context);
    }

    override async teardown(): Promise<void> {
        // Crawlee's pool closes the browsers it has, not one still
        // launching for an attempt a failed crawl left running.
        const lateBrowsersClosed = this.pagesOpening.closeBrowsers();
        await this.sessionPages.closeAll();
        await super.teardown();
        await lateBrowsersClosed;
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
    const blockedUrls = blockedUrlPatterns(options.siteHosts);
    /** Pages whose session identity and blocked URLs are set: a parked page keeps them. */
    const setUp = new WeakSet<Page>();
    const crawler = new BrowserStageCrawler(
        {
            ...queueOption(options.queue),
            // It runs beside the HTTP stage and waits for escalations; the runner stops it when both are done.
            keepAlive: true,
            minConcurrency: options.pages.min,
            maxConcurrency: options.pages.max,
            // Crawlee's pool starts at one page and adds one every 10 s: a
            // render queue waits minutes for what the machine could do at once.
            autoscaledPoolOptions: { desiredConcurrency: options.pages.start },
            maxRequestRetries: options.retryPolicy.maxAttempts - 1,
            navigationTimeoutSecs: options.requestTimeoutSecs,
            // Sessions are ours (identities.ts), shared with the HTTP stage; each page gets its own context.
            useSessionPool: false,
            persistCookiesPerSession: false,
            sessionPages: options.sessionPages,
            launchContext: {
                launcher: chromium,
                useIncognitoPages: true,
                // The process handles SIGINT and SIGTERM itself (pages in flight
                // finish, rounds.ts): Playwright must not close the browser under them.
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
                // Every page in one browser: a second Chromium is ~150 MB more for no more throughput.
                maxOpenPagesPerBrowser: options.pages.max,
                retireBrowserAfterPageCount: options.retireBrowserAfterPageCount ?? 100,
                // The fingerprint is the session's, the same the HTTP stage sends.
                useFingerprints: false,
                prePageCreateHooks: [
                    async (pageId, _controller, pageOptions) => {
                        if (!pageOptions) return;
                        // Certificates are not verified, as in the HTTP stage (docs/failures-and-resume.md).
                        pageOptions.ignoreHTTPSErrors = true;
                        const request = crawler.requestsByPage.get(pageId);
                        const attempt = request && routing.attemptOf(request);
                        if (!attempt) return;
                        Object.assign(pageOptions, attempt.identity.browserContextOptions());
                        const exitProxy = await exitProxyOf(attempt.exit);
                        if (exitProxy) pageOptions.proxy = { server: exitProxy.url, bypass: '<-loopback>' };
                    },
                ],
            },
            preNavigationHooks: [
                async ({ request, page }, gotoOptions) => {
                    const url = new URL(request.url);
                    // Refused before the page loads (the egress proxy would refuse
                    // it too, but Chromium would report only a failed tunnel).
                    await egress.check(url);
                    const attempt = routing.attemptOf(request);
                    if (!setUp.has(page)) {
                        await setUpPage(page, attempt?.identity, blockedUrls);
                        setUp.add(page);
                    }
                    if (attempt) {
                        const cookies = await cookiesForBrowser(attempt.identity.cookieJar, url);
                        if (cookies.length > 0) await page.context().addCookies(cookies);
                    }
                    // A route that says what shows its data is read once that holds, not at the load event.
                    const route = site.routeFor(request.label, url);
                    if (gotoOptions && (route?.waitUntil === 'fields' || route?.waitFor))
                        gotoOptions.waitUntil = 'domcontentloaded';
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
                // The rendered document, read once here, is what the block check and the fields wait look at first.
                let html = await renderedHtml(page, response);
                let failure = checkResponse(status, headers['content-type'] ?? 'text/html', {
                    headers,
                    body: html,
                    url: page.url(),
                });
                if (failure?.reason === 'challenge') {
                    const passed = await passChallenge(page, waitForTimeoutMillis);
                    if (passed !== undefined) {
                        failure = undefined;
                        status = 200;
                        html = passed;
                    }
                }
                if (failure) {
                    failure.retryAfterMs = parseRetryAfter(headers['retry-after']);
                    throw failure;
                }

                // Chromium follows redirects itself: each hop's address
                // went through the egress proxy, its scope is checked here.
                if (!frontier.inScope(new URL(page.url()))) {
                    throw new FetchFailure(
                        'permanent',
                        `offsite-redirect: ${request.url} → ${page.url()}`,
                        status,
                        'offsite-redirect',
                    );
                }
                const route = site.routeFor(request.label, new URL(request.url));
                if (!route) throw new Error(`no route "${request.label}" in site ${site.name}`);
                const userData = request.userData as RequestData;
                const pageContext = {
                    url: new URL(page.url()),
                    label: route.label,
                    renderer: 'browser' as const,
                    userData,
                };
                html = await waitForContent(page, html, route, pageContext, waitForTimeoutMillis);
                if (attempt) await keepBrowserCookies(attempt.identity.cookieJar, await page.context().cookies());
                routing.end(request, { ok: true, bytes: html.length });
                // Returned, not awaited, as in the HTTP stage: a suspended handler would keep the page's HTML.
                // What the browser loaded, before it rendered: the archive's response (the DOM is its conversion).
                const [payload, requestHeaders] = await Promise.all([
                    response?.body().catch(() => undefined),
                    response
                        ?.request()
                        .allHeaders()
                        .catch(() => undefined),
                ]);
                if (response) await keepRedirects(response.request(), pageHandler);
                const handled = pageHandler.handle({
                    request: { url: request.url, label: request.label, userData },
                    route,
                    html,
                    status,
                    headers,
                    payload,
                    requestHeaders,
                    finalUrl: frontier.normalize(page.url()) ?? request.url,
                    renderer: 'browser',
                    settle: attemptSettler(context, outcomes, queue),
                });
                return handled.then(() => void (attempt && crawler.renderedFor.set(page, attempt.identity)));
            },
        },
        options.config,
    );
    crawler.sessionOf = (request) => routing.attemptOf(request)?.identity;
    crawler.closeEgress = async () => {
        const started = await Promise.allSettled([...exitProxies.values()]);
        await Promise.all(
            [proxy, ...started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []))].map((each) =>
                each.close(),
            ),
        );
    };
    crawler.launches.onOpen = (reason) =>
        options.log.error(`${reason}: the pages that need it go to dead-letter as browser-launch-failed`);
    crawler.onFailure = failureHook({ ...options, stage: 'browser' });
    crawler.preFetchCheck = async (request) => {
        // A page escalated before its route was stopped is not rendered any more.
        if (options.driftBreaker.isStopped(request.label ?? '')) {
            await deadLetterStopped(request, 'browser', options);
            return true;
        }
        if (crawler.launches.open) {
            await giveUp(queue, outcomes, request, {
                failureClass: 'transient',
                reason: 'browser-launch-failed',
                error: crawler.launches.reason,
                attempts: request.retryCount,
                stage: 'browser',
            });
            return true;
        }
        // The session, and the site's turn, before a page opens: the page's context is the session's.
        // A session with a page parked renders in it, rather than opening one (sessionPages.ts).
        await routing.begin(request, 'browser', (identity) => crawler.sessionPages.holds(identity.id));
        return false;
    };
    return crawler;
}

/**
 * A page's identity, set once when it opens (a parked page keeps it): the session's user agent
 * with its client hints, and the URLs Chromium drops (blockedResources.ts). One CDP session for both.
 */
async function setUpPage(page: Page, identity: Identity | undefined, blockedUrls: string[]): Promise<void> {
    const devtools = await devtoolsOf(page);
    if (identity) await devtools.send('Emulation.setUserAgentOverride', identity.userAgentOverride());
    await devtools.send('Network.enable');
    await devtools.send('Network.setBlockedURLs', { urls: blockedUrls });
}

/**
 * The redirects Chromium followed to reach `request`, archived as responses of their own, first hop
 * first. Chromium keeps no redirect's body: each is archived with an empty payload, said cut.
 */
async function keepRedirects(request: PlaywrightRequest, pageHandler: StageOptions['pageHandler']): Promise<void> {
    const hops: PlaywrightRequest[] = [];
    for (let hop = request.redirectedFrom(); hop; hop = hop.redirectedFrom()) hops.unshift(hop);
    for (const hop of hops) {
        const response = await hop.response();
        if (!response) continue;
        await pageHandler.keepRedirect({
            url: hop.url(),
            status: response.status(),
            headers: await response.allHeaders(),
            fetchedAt: new Date().toISOString(),
            requestHeaders: await hop.allHeaders(),
        });
    }
}
