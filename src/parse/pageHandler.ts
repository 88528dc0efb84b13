/**
 * What happens to a fetched page, whichever stage fetched it: keep the raw page (written before
 * anything about the page is committed, so no stored item outlives its page), have it parsed
 * (its URLs, its records validated against the route's schema, its links — in a parse worker by
 * default, pageParser.ts), drop it if its canonical URL is already taken, then store the records,
 * quarantine them, or escalate the page to the browser — and follow its links. The page's outcome
 * is settled with its request (store/outcomes.ts): stored as it is marked handled.
 */
import type { Logger } from 'pino';
import { type CanonicalClaim, type Frontier, isNavigation } from '../frontier/frontier.js';
import type { RevisitBounds } from '../frontier/revisitPolicy.js';
import { describeIncomplete, failingFields, isIncomplete, mayEscalate } from '../quality/validate.js';
import type { Outcome } from '../store/outcomes.js';
import type { KnownPage, PageHistory } from '../store/pageHistory.js';
import type { RawPages } from '../store/rawPages.js';
import { payloadDigestOf } from '../store/archive/pageRecords.js';
import { rawPageKey, type RedirectCapture, type RevisitCapture } from '../store/archive/rawPage.js';
import { quarantineEntries, storedItems } from '../store/records.js';
import type { Renderer, Route } from '../site/site.js';
import type { RunEvents } from '../vocabulary/events.js';
import type { RequestData } from '../vocabulary/request.js';
import { markChanges, pageChanged } from './itemChanges.js';
import type { PageParser } from './pageParser.js';
import { fetchedRecord, type PageCheck, unchangedRecord, validatorsOf } from './pageRecords.js';
import type { ParsedPage } from './parsePage.js';

export interface FetchedPage {
    request: { url: string; label?: string; userData: RequestData };
    route: Route;
    html: string;
    status: number;
    headers: Record<string, string | string[] | undefined>;
    /** The URL the HTML was read from (normalized). */
    finalUrl: string;
    /**
     * The encoding the HTTP stage decoded the page's bytes in (fetch/http/decodeBody.ts); a browser decodes for itself.
     */
    charset?: string;
    /**
     * The body as received, content codings undone: the HTTP stage's bytes, or the document a browser
     * loaded before rendering it. Archived as the response's payload. Default: `html` encoded in `charset`.
     */
    payload?: Buffer;
    /** The headers the request was sent with, for the archive's request record. Default: none known. */
    requestHeaders?: Record<string, string>;
    renderer: Renderer;
    /** Stores what became of the page and marks its request handled, in one transaction; resolves once committed. */
    settle: (outcome: Outcome) => Promise<void>;
}

/** A known page the HTTP stage found as it was: answered 304, or the same payload again. */
export interface UnchangedPage extends Pick<FetchedPage, 'request' | 'route' | 'status' | 'headers' | 'settle'> {
    /** What the history knew of the page. */
    known: KnownPage;
    profile: RevisitCapture['profile'];
    /** The payload's digest, when one was sent. */
    digest?: string;
    requestHeaders?: Record<string, string>;
}

export interface PageHandlerOptions {
    frontier: Frontier;
    /** Parses pages and runs their extractors: in parse workers, or in this thread. */
    parser: PageParser;
    raw: RawPages;
    /**
     * Told that a page was fetched, escalated, or had its records
     * stored (the render learner and the drift breaker listen).
     */
    events: RunEvents;
    log: Logger;
    /** The site's page history, which every page's outcome updates; in a recrawl, what pages are compared with. */
    history: PageHistory;
    /** Whether this run recrawls: its items carry `_change`. */
    recrawl: boolean;
    /** Within what a page's next due time is set (frontier/revisitPolicy.ts). */
    revisit: RevisitBounds;
}

export class PageHandler {
    constructor(private readonly options: PageHandlerOptions) {}

    /**
     * Not async itself: an async function keeps its arguments for as long as it runs, and the page's
     * HTML would then live through the raw write and the outcome commit, long enough for V8 to
     * promote it. The raw page is encoded and the parse started here; `settlePage` gets neither.
     */
    handle(page: FetchedPage): Promise<void> {
        const { request, route, renderer } = page;
        const fetchedAt = new Date().toISOString();
        const rawKey = rawPageKey(page.finalUrl, renderer);
        // A rendered page whose loaded document could not be read is known by its DOM's digest.
        const digest = payloadDigestOf(page.payload ?? Buffer.from(page.html));
        const check: Omit<PageCheck, 'changed' | 'items'> = {
            request,
            navigation: isNavigation(route),
            ...validatorsOf(page.headers),
            digest,
            fetchedAt,
            finalUrl: page.finalUrl,
        };
        const written = this.options.raw.put({
            key: rawKey,
            url: request.url,
            finalUrl: page.finalUrl,
            status: page.status,
            headers: page.headers,
            fetchedAt,
            renderer,
            label: route.label,
            body: page.html,
            charset: page.charset,
            payload: page.payload,
            payloadDigest: digest,
            requestHeaders: page.requestHeaders,
        });
        const parsing = this.options.parser.parse(route, {
            html: page.html,
            finalUrl: page.finalUrl,
            renderer,
            userData: request.userData,
            trackingParams: this.options.frontier.trackingParams,
        });
        return this.settlePage(
            { request, route, renderer, settle: page.settle, rawKey, fetchedAt, check },
            Promise.all([written, parsing]),
        );
    }

    /**
     * A known page found as it was, with no parse: a revisit record instead of a response in the
     * archive, and its items carried into this run's dataset by the outcome's commit.
     */
    async handleUnchanged(page: UnchangedPage): Promise<void> {
        const { request, route, profile, digest, known } = page;
        const fetchedAt = new Date().toISOString();
        // What an unchanged listing leads to is found without a parse: the links it had are the links it has.
        if (known.links) await this.options.frontier.enqueue(known.links);
        await this.options.raw.putRevisit({
            key: rawPageKey(known.capturedUrl ?? request.url, 'http'),
            url: request.url,
            profile,
            status: page.status,
            headers: page.headers,
            fetchedAt,
            ...(digest ? { payloadDigest: digest } : {}),
            ...(known.capturedAt
                ? { refersTo: { url: known.capturedUrl ?? request.url, date: known.capturedAt } }
                : {}),
            requestHeaders: page.requestHeaders,
            label: route.label,
            renderer: 'http',
        });
        const check: PageCheck = {
            request,
            navigation: known.navigation,
            ...validatorsOf(page.headers),
            digest,
            fetchedAt,
            finalUrl: request.url,
            changed: false,
            items: known.items,
        };
        await page.settle({
            page: unchangedRecord(
                { etag: known.etag, lastModified: known.lastModified, ...check },
                this.options.revisit,
            ),
            count: (counts) => {
                counts.succeeded += 1;
                counts.unchangedPages[profile === 'server-not-modified' ? 'notModified' : 'identicalPayload'] += 1;
                counts.countCarried(route.label, known.items);
            },
        });
    }

    /** Archives a redirect's response: no page, but part of the record of what the site sent. */
    keepRedirect(redirect: RedirectCapture): Promise<void> {
        return this.options.raw.putRedirect(redirect);
    }

    private async settlePage(
        page: Pick<FetchedPage, 'request' | 'route' | 'renderer' | 'settle'> & {
            rawKey: string;
            fetchedAt: string;
            check: Omit<PageCheck, 'changed' | 'items'>;
        },
        writtenAndParsed: Promise<[unknown, ParsedPage]>,
    ): Promise<void> {
        const { events, frontier, log } = this.options;
        const { request, route, renderer, settle, rawKey, fetchedAt } = page;
        // Nothing is committed before the raw page is written.
        const [, parsed] = await writtenAndParsed;
        events.emit('pageFetched', { renderer, route: route.label, url: request.url });
        const { canonical, verdict } = parsed;
        const claim =
            canonical && !request.userData.canonicalChecked
                ? await frontier.claimCanonical(canonical, request.url)
                : undefined;
        const { known } = request.userData;
        if (claim === 'taken') {
            log.debug({ url: request.url, canonical }, 'duplicate of a page already seen');
            await settle({
                // A known page that is now another's duplicate: its items of the last run are not carried.
                page: known && { kind: 'withoutItems', key: known.key },
                count: (counts) => {
                    counts.duplicates += 1;
                    counts.succeeded += 1;
                },
            });
            return;
        }

        const base = new URL(parsed.base);
        await frontier.enqueueFromPage(parsed.links, base);

        const fields = failingFields(verdict);
        if (renderer === 'http' && route.render === 'auto' && route.extract) {
            // A page whose route code failed (threw, returned what is not data, ran too long) says
            // nothing about the route's need of the browser, and is not escalated (see mayEscalate).
            if (verdict.extractorFailed === undefined)
                events.emit('cheapFetchJudged', { route: route.label, neededBrowser: isIncomplete(verdict) });
            if (mayEscalate(verdict)) {
                const reason = describeIncomplete(verdict);
                events.emit('escalated', { route: route.label, url: request.url, reason, failingFields: fields });
                log.debug({ url: request.url, route: route.label, reason }, 'escalating to the browser');
                await frontier.escalate(
                    { ...request, userData: { ...request.userData, canonicalChecked: true } },
                    reason,
                );
                await settle({ claim: claimKey(claim) });
                return;
            }
        }

        const origin = { url: canonical ?? request.url, route: route.label, rawKey, renderer, fetchedAt };
        const rejected = quarantineEntries(verdict, origin);
        const items = storedItems(verdict, origin);
        const check: PageCheck = {
            ...page.check,
            items: items.length,
            changed: false,
            ...(isNavigation(route) ? { links: frontier.routedLinks(parsed.links, base) } : {}),
            canonical: claimKey(claim),
        };
        const previous = known && (await this.options.history.items(known.key));
        const marked = this.options.recrawl ? markChanges(previous, items) : undefined;
        const changed = known !== undefined && marked !== undefined && pageChanged(previous, marked);
        await settle({
            items: marked ?? items,
            quarantine: rejected,
            claim: claimKey(claim),
            page: fetchedRecord({ ...check, changed }, items, this.options.revisit),
            count: (counts) => {
                for (const item of marked ?? []) counts.countChange(route.label, item._change, 1);
                const routeStats = counts.route(route.label);
                counts.itemsStored += verdict.valid.length;
                routeStats.itemsStored += verdict.valid.length;
                counts.itemsInvalid += rejected.length;
                routeStats.itemsInvalid += rejected.length;
                counts.countFailingFields(route.label, fields);
                counts.succeeded += 1;
            },
        });
        if (route.extract === undefined) return;
        events.emit('recordsStored', {
            route: route.label,
            url: origin.url,
            rawKey,
            stored: verdict.valid.length,
            quarantined: rejected.length,
            failingFields: fields,
            issues: rejected.flatMap((rejection) => rejection.issues),
        });
    }
}

/** The claim to remember with the page: only a canonical URL that is not the request's own. */
function claimKey(claim: CanonicalClaim | undefined): string | undefined {
    return claim && claim !== 'taken' && claim !== 'own' ? claim.key : undefined;
}
