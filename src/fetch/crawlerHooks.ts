/**
 * The places where dragnet steps into Crawlee's request flow. In both stages:
 *
 * - Before a fetch, `preFetchCheck`: is the fetch needed at all? The page of a route that learned
 *   to need the browser goes there directly, and the page of a route the drift breaker stopped
 *   goes to dead-letter, without an HTTP request or a browser page.
 * - After a failure, `onFailure`, before Crawlee's own error handling: retry (when, by the retry
 *   policy) or give up. A request given up on is dead-lettered and marked handled in one
 *   transaction here; Crawlee alone would mark it handled first and call `failedRequestHandler`
 *   after, and a process killed in between would lose it.
 *
 * - An attempt Crawlee has given up on stops at dragnet's next step and stores nothing
 *   (`checkAttempt`, `attemptSettler`), in place of Crawlee's own checks, which dragnet's
 *   @apify/timeout turns off (vendor/apify-timeout-hookless/README.md).
 *
 * In the HTTP stage, reading the body, `readBody`: Crawlee reads a response whole into memory,
 * whatever its size or pace; the stage reads it within its limits (responseBody.ts). And sending:
 * Crawlee's own, without its import of got-scraping (see `_requestFunction` below).
 *
 * Each Crawlee internal used here is in docs/architecture.md's upgrade checklist, with its guard.
 */
import { type Request, type RequestProvider, SessionError } from '@crawlee/core';
import type { IncomingMessage } from 'node:http';
import { HttpCrawler, type HttpCrawlingContext } from '@crawlee/http';
import type { Outcome, Outcomes } from '../store/outcomes.js';
import type { FrontierQueue } from '../vocabulary/queue.js';

/**
 * A stage's queue as a crawler option. Crawlee 3.18's `requestManager` option is what takes any
 * request manager, but the option checks of HttpCrawler and BrowserCrawler do not know it (they
 * reject it); `requestQueue` is checked by shape (`fetchNextRequest`, `addRequest`) and then used
 * as the request manager (BasicCrawler.initializeRequestManager), so any FrontierQueue goes there.
 */
export function queueOption(queue: FrontierQueue): { requestQueue: RequestProvider } {
    // biome-ignore lint/plugin/noDoubleCast: Crawlee checks the option by shape (above), not by its type
    return { requestQueue: queue as unknown as RequestProvider };
}

/** Deals with the request without fetching it and returns true, or returns false to fetch as usual. */
export type PreFetchCheck = (request: Request) => Promise<boolean>;

/**
 * Decides what becomes of a failed request: either sets `request.userData.retryAt` for Crawlee to
 * reclaim it, or stores its dead-letter outcome and sets `request.noRetry`. `crawleeWouldRetry` is
 * false when Crawlee itself will not retry (e.g. its session rotations are used up).
 */
export type FailureHook = (context: FailedContext, error: Error, crawleeWouldRetry: boolean) => Promise<void>;

/** The part of a Crawlee crawling context a failure hook uses. */
export interface FailedContext {
    request: Request;
    session?: { retire(): void };
}

interface CrawleeInternals {
    _runRequestHandler(context: { request: Request }): Promise<void>;
    _requestFunctionErrorHandler(error: Error, context: FailedContext, source: unknown): Promise<void>;
    _canRequestBeRetried(request: Request, error: Error): boolean;
    _cleanupContext(context: object): Promise<void>;
}

/**
 * The crawling contexts of attempts Crawlee has given up on: their timeout fired, or they failed,
 * and the failure hook has had the request retried or dead-lettered. Crawlee does not stop such an
 * attempt: it runs on, unheard. Crawlee's own checks, which stopped one between its steps, read a
 * store that on Node 20 costs every promise of the process (see vendor/apify-timeout-hookless/README.md).
 */
const endedAttempts = new WeakSet<object>();

/** Thrown at the next step of an attempt Crawlee has given up on: nothing of it goes further. */
class AttemptEnded extends Error {
    constructor(url: string) {
        super(`attempt ended: ${url} timed out or failed, and its request was retried or given up on`);
    }
}

/** Throws AttemptEnded when Crawlee has given up on the attempt of this crawling context. */
function checkAttempt(context: { request: { url: string } }): void {
    if (endedAttempts.has(context)) throw new AttemptEnded(context.request.url);
}

/**
 * How an attempt settles its request's outcome: refused (AttemptEnded, nothing stored) once Crawlee
 * has given up on the attempt, whose request is then the retry's or the dead-letter's.
 */
export function attemptSettler(
    context: { request: Request },
    outcomes: Outcomes,
    queue: FrontierQueue,
): (outcome: Outcome) => Promise<void> {
    return async (outcome) => {
        checkAttempt(context);
        return outcomes.settle(queue, context.request, outcome);
    };
}

// A mixin's constructor must take any arguments; the crawlers' own signatures are kept by the classes below.
// biome-ignore lint/suspicious/noExplicitAny: a mixin's base must be `new (...args: any[]) => X` (TS2545)
export type CrawlerClass = new (...args: any[]) => CrawleeInternals;

/** The crawler options the attempt checks go into (both stages' crawlers take these). */
interface CheckedOptions {
    preNavigationHooks?: Array<(context: { request: Request }, ...rest: unknown[]) => unknown>;
    requestHandler: (context: { request: Request }) => unknown;
}

/**
 * An attempt is checked after its pre-fetch check and the site's turn, after its pre-navigation
 * hooks (in the browser stage, after the wait for a page), as its handler starts, and as it settles.
 */
export function withHooks<C extends CrawlerClass>(Crawler: C) {
    return class extends Crawler {
        preFetchCheck: PreFetchCheck = async () => false;
        onFailure: FailureHook = async () => undefined;

        // biome-ignore lint/suspicious/noExplicitAny: a mixin class's constructor must take `...args: any[]` (TS2545)
        constructor(...args: any[]) {
            const [options, ...rest] = args as [CheckedOptions, ...unknown[]];
            const { requestHandler } = options;
            super(
                {
                    ...options,
                    preNavigationHooks: [...(options.preNavigationHooks ?? []), checkAttempt],
                    requestHandler: (context: { request: Request }) => {
                        checkAttempt(context);
                        return requestHandler(context);
                    },
                },
                ...rest,
            );
        }

        override async _runRequestHandler(context: { request: Request }): Promise<void> {
            if (await this.preFetchCheck(context.request)) return;
            try {
                checkAttempt(context);
                await super._runRequestHandler(context);
            } catch (error) {
                // Crawlee cleaned up when it gave up on the attempt, before the page this attempt went on to open.
                if (error instanceof AttemptEnded) await this._cleanupContext(context);
                throw error;
            }
        }

        override async _requestFunctionErrorHandler(
            error: Error,
            context: FailedContext,
            source: unknown,
        ): Promise<void> {
            endedAttempts.add(context);
            await this.onFailure(context, error, this._canRequestBeRetried(context.request, error));
            await super._requestFunctionErrorHandler(error, context, source);
        }
    };
}

export interface CrawlerHooks {
    preFetchCheck: PreFetchCheck;
    onFailure: FailureHook;
}

/** Reads a response's body (the HTTP client's stream, already decompressed). */
export type BodyReader = (request: Request, response: IncomingMessage) => Promise<Buffer>;

/** What `_requestFunction` below uses of Crawlee's HttpCrawler (3.18). */
interface HttpCrawlerInternals {
    _getRequestOptions(request: Request, session: unknown, proxyUrl: string | undefined, gotOptions: object): object;
    _requestAsBrowser(options: object, session: unknown): Promise<IncomingMessage>;
    isProxyError(error: Error): boolean;
    _getMessageFromError(error: Error): string;
    _applyCookies(
        context: { session?: unknown },
        gotOptions: { headers?: Record<string, unknown> },
        preHookCookies: string,
        postHookCookies: string,
    ): void;
}

interface RequestFunctionOptions {
    request: Request;
    session?: unknown;
    proxyUrl?: string;
    gotOptions: object;
}

// Crawlee's methods the hooks call are protected: the crawler is seen as a class that shows them.
const HttpCrawlerWithHooks = withHooks(
    // biome-ignore lint/plugin/noDoubleCast: Crawlee's hooks are protected: the mixin types them loosely inside
    HttpCrawler as unknown as new (
        ...args: unknown[]
    ) => CrawleeInternals & HttpCrawlerInternals,
);

/**
 * Crawlee's `_parseResponse` reads the body of an HTML type (and of every other type, which the stage
 * lets through) with `concatStreamToBuffer`; this one reads it with `readBody` and gives back what
 * Crawlee's does for HTML. The charset is the stage's to decide (decodeBody.ts).
 */
class HttpCrawlerReadingBodies extends HttpCrawlerWithHooks {
    readBody: BodyReader = () => Promise.reject(new Error('no body reader set'));

    /**
     * Crawlee's `_requestFunction` (3.18) without its `await import('got-scraping')`, which it makes at
     * the first request only to catch got's TimeoutError. dragnet's client is not got (a timeout is
     * an `ETIMEDOUT` error, failures.ts), and the import cost ~20 MB of RSS and 0.2-0.5 s of a
     * worker's start, paid after the first request had taken its politeness turn: that request
     * left late, together with the next ones, and three workers gave a site 23 requests in a second
     * where its Crawl-delay allowed 20. test/fetch/crawlerHooks.test.ts fails if an upgrade changes
     * what this copies.
     */
    async _requestFunction({
        request,
        session,
        proxyUrl,
        gotOptions,
    }: RequestFunctionOptions): Promise<IncomingMessage> {
        const options = this._getRequestOptions(request, session, proxyUrl, gotOptions);
        try {
            return await this._requestAsBrowser(options, session);
        } catch (error) {
            // Crawlee throws a bare SessionError here; its cause keeps the code
            // (ECONNREFUSED, …) that tells a proxy's own fault (failures.ts).
            if (this.isProxyError(error as Error))
                throw Object.assign(new SessionError(this._getMessageFromError(error as Error)), { cause: error });
            throw error;
        }
    }

    /**
     * Crawlee's `_applyCookies` merges the Cookie headers of the request, of its Crawlee session and
     * of the pre-navigation hooks in a new tough-cookie jar on every request (~7 µs). The stage has
     * no Crawlee sessions, and its hook sets the one Cookie header from the session's own jar
     * (httpStage.ts); when no source has a cookie the merge gives none, and nothing is left to do.
     */
    override _applyCookies(
        context: { session?: unknown },
        gotOptions: { headers?: Record<string, unknown> },
        preHookCookies: string,
        postHookCookies: string,
    ): void {
        gotOptions.headers ??= {};
        const { headers } = gotOptions;
        if (context.session || preHookCookies || postHookCookies || headers.cookie || headers.Cookie)
            super._applyCookies(context, gotOptions, preHookCookies, postHookCookies);
    }

    /**
     * Crawlee's post-navigation content-type check validates the response (ow) and parses its
     * Content-Type on every page, only to let every type through: the stage's `additionalMimeTypes`
     * hold the wildcard, and it refuses what a route does not take itself (httpStage.ts, `readBody`).
     */
    _abortDownloadOfBody(): void {}

    async _parseResponse(request: Request, response: IncomingMessage): Promise<object> {
        const type = response.headers['content-type']?.split(';')[0]?.trim().toLowerCase() ?? '';
        const body = await this.readBody(request, response);
        return { body, response, isXml: type.includes('xml'), contentType: { type, encoding: 'utf-8' } };
    }
}

// The browser stage's PlaywrightCrawler gets its hooks in browserStage.ts, so that Playwright is
// loaded only by a run that renders a page (see browserStageRunner.ts).
// biome-ignore lint/plugin/noDoubleCast: Crawlee's hooks are protected: typed loosely inside, precisely outside
export const HookedHttpCrawler = HttpCrawlerReadingBodies as unknown as new (
    ...args: ConstructorParameters<typeof HttpCrawler<HttpCrawlingContext>>
) => HttpCrawler<HttpCrawlingContext> & CrawlerHooks & { readBody: BodyReader };
