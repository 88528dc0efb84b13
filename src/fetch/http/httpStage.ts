/**
 * The cheap path: Crawlee's HttpCrawler (an autoscaled pool) over the HTTP queue, fetching through
 * dragnet's HTTP client (httpClient.ts) on the wire profile of the request's tier: undici with one
 * connection pool per exit (`fast`), or the Chromium on the machine (`chrome`, wire/chromeWire.ts).
 * Each request goes out with a session of ours (proxyRouting.ts): its exit, its cookie jar and its
 * browser header set, in the browser's order. It only fetches: the page handler has the HTML
 * parsed, in a parse worker by default (parse/pageParser.ts). Redirects are not followed here: their
 * targets go back through the frontier, so an alias never fetches a page twice.
 */
import type { Request } from '@crawlee/core';
import type { HttpCrawler, HttpCrawlingContext } from '@crawlee/http';
import type { RedirectOutcome } from '../../frontier/frontier.js';
import type { Outcome } from '../../store/outcomes.js';
import type { RequestData } from '../../vocabulary/request.js';
import type { AdaptiveTimeout } from '../pacing/adaptiveTimeout.js';
import type { ConcurrencyController } from '../pacing/concurrencyController.js';
import { attemptSettler, HookedHttpCrawler, queueOption } from '../crawlerHooks.js';
import { decodeBody } from './decodeBody.js';
import type { ClientResponse } from './httpClient.js';
import { deadLetterStopped, failureHook } from '../failureHandlers.js';
import { classifyStatus, FetchFailure } from '../failures/failures.js';
import type { RenderLearner } from '../browser/renderLearning.js';
import { readBody } from './responseBody.js';
import type { StageOptions } from '../stageOptions.js';
import { cookieHeader, keepResponseCookies } from '../egress/sessionCookies.js';
import { checkResponse, contentTypeRefusal, detectBlock } from '../failures/responseCheck.js';
import { parseRetryAfter } from '../failures/retryPolicy.js';
import { isNotModified, revalidationHeaders } from './conditionalRequest.js';
import { payloadDigestOf } from '../../store/archive/pageRecords.js';
import { movedRecord } from '../../parse/pageRecords.js';
import type { RevisitCapture } from '../../store/archive/rawPage.js';
import type { KnownPage } from '../../vocabulary/knownPage.js';

/** The dead-letter reason of a redirect whose target the frontier did not take. */
const REDIRECT_FAILURES = {
    loop: 'redirect-loop',
    invalid: 'invalid-redirect',
    offsite: 'offsite-redirect',
    disallowed: 'disallowed-redirect',
    overBudget: 'over-budget-redirect',
    unrouted: 'unrouted-redirect',
} as const satisfies Record<Exclude<RedirectOutcome, 'queued' | 'duplicate'>, string>;

/** Every 5xx reaches the request handler, so the failure classifier, not Crawlee, decides. */
const ALL_5XX = Array.from({ length: 100 }, (_, index) => 500 + index);

export interface HttpStageOptions extends StageOptions {
    /** Asked before each fetch whether the request's route learned to go to the browser directly. */
    renderLearner: RenderLearner;
    /**
     * The pool starts at its limit (run it with controlledPool.ts's
     * `runAtControlledConcurrency`). Undefined: fixed at `maxConcurrency`.
     */
    concurrency?: ConcurrencyController;
    /**
     * Gives first attempts a timeout learned from the site's response
     * times. Undefined: every attempt gets `requestTimeoutSecs`.
     */
    adaptiveTimeout?: AdaptiveTimeout;
}

export function createHttpStage(options: HttpStageOptions): HttpCrawler<HttpCrawlingContext> {
    const { site, frontier, pageHandler, renderLearner, driftBreaker, outcomes, queue, events } = options;
    const routeOf = (request: { label?: string; url: string }) => {
        const route = site.routeFor(request.label, new URL(request.url));
        if (!route) throw new Error(`no route "${request.label}" in site ${site.name}`);
        return route;
    };
    const concurrency = options.concurrency;
    const { egress, routing } = options;
    const startConcurrency = concurrency
        ? Math.min(concurrency.poolLimit(), options.maxConcurrency)
        : options.maxConcurrency;
    const crawler = new HookedHttpCrawler(
        {
            ...queueOption(options.queue),
            maxConcurrency: startConcurrency,
            autoscaledPoolOptions: {
                // Fetching is waiting on the network: start at the limit instead of creeping up 5% per 10 s
                // (hundreds of seconds to reach 200). The concurrency controller, when there is one, lowers
                // and raises it from there.
                desiredConcurrency: startConcurrency,
                // Only memory may stop the pool. Crawlee stops starting requests while the machine's CPU or this
                // event loop was busy in most of the last 5 s, and a crawl that keeps this thread busy handling
                // pages then swings between every slot open and one: a burst of responses blocks the loop, the
                // pool stops, in flight drains to ~1 and the loop idles for seconds before it starts again (a
                // 500 ms site crawled at 200 slots gave 93 pages/s, against 160 with the pool kept full). A busy
                // loop only makes pages wait a little longer in this process; it does not make the site slower.
                systemStatusOptions: { maxCpuOverloadedRatio: 1, maxEventLoopOverloadedRatio: 1 },
            },
            // The retry policy decides; Crawlee's cap only has to let it.
            maxRequestRetries: options.retryPolicy.maxAttempts - 1,
            navigationTimeoutSecs: options.requestTimeoutSecs,
            ignoreHttpErrorStatusCodes: ALL_5XX,
            // Every content type reaches the request handler too: redirects often have none.
            additionalMimeTypes: ['*/*'],
            // Sessions are ours (identities.ts), shared with the browser stage and bound to exits.
            useSessionPool: false,
            persistCookiesPerSession: false,
            httpClient: options.httpClient,
            preNavigationHooks: [
                async ({ request }, requestOptions) => {
                    const url = new URL(request.url);
                    const { identity, exit, tier } = await routing.begin(request, 'http');
                    await egress.preflight(url, { viaProxy: exit.proxyUrl !== undefined });
                    requestOptions.proxyUrl = exit.proxyUrl;
                    // Read by the HTTP client (httpClient.ts), which Crawlee hands these options to as they are.
                    const wire = routing.tiers[tier]?.wire ?? 'fast';
                    Object.assign(requestOptions, { wire, identity });
                    const { cookie: siteCookie, Cookie: siteCookieToo, ...siteHeaders } = site.headers ?? {};
                    const cookie = await cookieHeader(identity.cookieJar, url, siteCookie ?? siteCookieToo);
                    const { known } = request.userData as RequestData;
                    requestOptions.headers = {
                        ...requestOptions.headers,
                        ...identity.headers,
                        ...siteHeaders,
                        ...(cookie ? { cookie } : {}),
                        ...(known ? revalidationHeaders(known) : {}),
                    };
                    if (options.adaptiveTimeout)
                        requestOptions.timeout = {
                            request: options.adaptiveTimeout.timeoutFor(request.url, request.retryCount + 1, wire),
                        };
                    events.emit('attemptStarted', { stage: 'http', request, url: request.url });
                },
            ],
            async requestHandler(context) {
                const { request, response, body } = context;
                const settle = attemptSettler(context, outcomes, queue);
                const userData = request.userData as RequestData;
                const status = response.statusCode ?? 0;
                const attempt = routing.attemptOf(request);
                events.emit('responded', {
                    stage: 'http',
                    request,
                    url: request.url,
                    status,
                    responseMs: timeToResponse(response),
                    wire: attempt ? routing.tiers[attempt.tier]?.wire : undefined,
                });
                if (attempt)
                    await keepResponseCookies(
                        attempt.identity.cookieJar,
                        new URL(request.url),
                        response.headers['set-cookie'],
                    );
                const viaProxy = attempt?.exit.proxyUrl !== undefined;
                const exitFault = classifyStatus(status, { viaProxy }) === 'exit';
                if (exitFault)
                    throw new FetchFailure('exit', `HTTP ${status} from the proxy`, status, `proxy-${status}`);
                const requestHeaders = sentHeaders(response);
                const { known } = userData;
                /** A known page found as it was: archived as a revisit, its items carried, nothing parsed. */
                const unchanged = (page: KnownPage, profile: RevisitCapture['profile'], digest?: string) =>
                    pageHandler.handleUnchanged({
                        request: { url: request.url, label: request.label, userData },
                        route: routeOf(request),
                        status,
                        headers: response.headers,
                        requestHeaders,
                        known: page,
                        profile,
                        ...(digest ? { digest } : {}),
                        settle,
                    });
                if (known && status === 304 && !isNotModified(known, status, response.headers)) {
                    // Asked again without validators: the digest still tells an unchanged page.
                    userData.known = { ...known, etag: undefined, lastModified: undefined };
                    throw new FetchFailure(
                        'transient',
                        'unmatched-304: the site answered 304 naming other validators than the ones asked about',
                        status,
                        'unmatched-304',
                    );
                }
                if (known && status === 304) {
                    routing.end(request, { ok: true, bytes: 0 });
                    return unchanged(known, 'server-not-modified');
                }
                const location = response.headers.location;
                if (status >= 300 && status < 400 && location) {
                    const challenge = detectBlock({ status, headers: response.headers, url: request.url });
                    if (challenge) throw challenge;
                    routing.end(request, { ok: true, bytes: (body as Buffer).length });
                    await pageHandler.keepRedirect({
                        url: request.url,
                        status,
                        headers: response.headers,
                        payload: body as Buffer,
                        fetchedAt: new Date().toISOString(),
                        requestHeaders,
                    });
                    const moved = known && movedRecord(known, location);
                    const outcome = await frontier.followRedirect(
                        {
                            url: request.url,
                            label: request.label,
                            userData: moved ? withoutHistory(userData) : userData,
                        },
                        location,
                    );
                    // A target the frontier did not take leaves this URL nowhere else: it is dead-lettered with why.
                    if (outcome !== 'queued' && outcome !== 'duplicate') {
                        const reason = REDIRECT_FAILURES[outcome];
                        throw new FetchFailure('permanent', `${reason}: ${request.url} → ${location}`, status, reason);
                    }
                    await settle({
                        page: moved,
                        count: (counts) => {
                            if (moved) counts.countChange(routeOf(request).label, 'removed', known.items);
                            counts.redirects += 1;
                            if (outcome === 'duplicate') counts.duplicates += 1;
                            counts.succeeded += 1;
                        },
                    });
                    return;
                }
                const contentType = response.headers['content-type'];
                const { html, charset, binary } = decodeBody(body as Buffer, contentType);
                const failure = checkResponse(
                    status,
                    contentType,
                    { headers: response.headers, body: html, url: request.url },
                    routeOf(request).contentTypes,
                );
                if (
                    failure?.reason === 'challenge' &&
                    routeOf(request).render !== 'never' &&
                    (await passChallengeToBrowser(request, settle))
                )
                    return;
                if (failure) {
                    failure.retryAfterMs = parseRetryAfter(response.headers['retry-after']);
                    throw failure;
                }
                routing.end(request, { ok: true, bytes: (body as Buffer).length });
                const digest = known?.digest && payloadDigestOf(body as Buffer);
                if (known && digest === known.digest) return unchanged(known, 'identical-payload-digest', digest);
                if (binary)
                    throw new FetchFailure(
                        'permanent',
                        `binary-content: the body labelled ${contentType} has NUL bytes`,
                        status,
                        'binary-content',
                    );

                // Returned, not awaited: a suspended async function keeps its registers, the page's HTML among
                // them, until it resumes (parse/pageHandler.ts says why that matters).
                return pageHandler.handle({
                    request: { url: request.url, label: request.label, userData },
                    route: routeOf(request),
                    html,
                    status,
                    headers: response.headers,
                    finalUrl: request.url,
                    charset,
                    payload: body as Buffer,
                    requestHeaders,
                    renderer: 'http',
                    settle,
                });
            },
        },
        options.config,
    );
    /**
     * A JS challenge only a browser can pass: the page goes to the browser on this request's
     * session, so the cookie the challenge sets lands in the session's jar, and the session's
     * next HTTP requests carry it from the same exit.
     */
    const passChallengeToBrowser = async (
        request: Request,
        settle: (outcome: Outcome) => Promise<void>,
    ): Promise<boolean> => {
        const attempt = routing.attemptOf(request);
        const userData = request.userData as RequestData;
        if (!attempt) return false;
        routing.end(request, { ok: false, challenged: true });
        await frontier.escalate(
            { url: request.url, label: request.label, userData: { ...userData, session: attempt.identity.id } },
            'js-challenge',
        );
        await settle({});
        return true;
    };
    crawler.readBody = (request, response) => {
        // A page of the wrong type is refused before its body is read; a redirect or an error page may have any type.
        const status = response.statusCode ?? 0;
        const refusal =
            status >= 200 &&
            status < 300 &&
            contentTypeRefusal(status, response.headers['content-type'], routeOf(request).contentTypes);
        if (refusal) {
            response.destroy();
            return Promise.reject(refusal);
        }
        return readBody(response, options.maxResponseBytes);
    };
    crawler.onFailure = failureHook({ ...options, stage: 'http' });
    crawler.preFetchCheck = async (request) => {
        const route = routeOf(request);
        if (driftBreaker.isStopped(route.label)) {
            await deadLetterStopped(request, 'http', options);
            return true;
        }
        if (route.render !== 'auto' || !renderLearner.goDirectToBrowser(route.label)) return false;
        events.emit('sentToBrowser', { route: route.label, url: request.url });
        const userData = request.userData as RequestData;
        await frontier.escalate(
            { url: request.url, label: request.label, userData },
            'the route needs the browser (learned)',
        );
        return true;
    };
    return crawler;
}

/** A redirect target's request data: what the history knew of the page redirecting is not the target's. */
function withoutHistory({ known, ...userData }: RequestData): RequestData {
    return userData;
}

/** The headers the request went out with, as the pre-navigation hook set them and the client sent them. */
function sentHeaders(response: object): Record<string, string> | undefined {
    return (response as { request?: { headers?: Record<string, string> } }).request?.headers;
}

/** Time from sending the request to its response headers, as the HTTP client timed it. */
function timeToResponse(response: object): number | undefined {
    const { timings } = response as Partial<ClientResponse>;
    return timings && timings.response - timings.start;
}
