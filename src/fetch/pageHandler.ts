/**
 * What happens to a fetched page, whichever stage fetched it: keep the raw page, drop it if
 * its canonical URL is already taken, run the route's extractor, validate, then store the
 * records, quarantine them, or escalate the page to the browser — and follow its links.
 */
import type { CheerioAPI } from 'cheerio';
import type { Logger } from 'pino';
import type { Frontier, Link, RequestData } from '../frontier/frontier.js';
import type { RunStats } from '../monitor/stats.js';
import type { DriftBreaker } from '../quality/driftBreaker.js';
import { describeIncomplete, isIncomplete, validatePage, type Verdict } from '../quality/validate.js';
import type { DatasetSink } from '../store/datasets.js';
import { rawPageKey, type RawStore } from '../store/rawStore.js';
import type { PageContext, Renderer, Route } from '../site.js';
import type { RenderLearner } from './renderLearning.js';

export interface FetchedPage {
    request: { url: string; label?: string; userData: RequestData };
    route: Route;
    $: CheerioAPI;
    html: string;
    status: number;
    headers: Record<string, string | string[] | undefined>;
    /** The URL the HTML was read from (normalized). */
    finalUrl: string;
    renderer: Renderer;
}

/** A record as stored in the dataset: the route's fields plus where it came from. */
export type StoredItem = Record<string, unknown> & {
    _url: string;
    _route: string;
    _rawKey: string;
    _renderer: Renderer;
    _fetchedAt: string;
};

/** A record (or a page's missing records) kept out of the dataset, with the reasons. */
export type QuarantineEntry = {
    url: string;
    route: string;
    rawKey: string;
    renderer: Renderer;
    issues: string[];
    fields: string[];
    record: unknown;
    quarantinedAt: string;
};

export interface PageHandlerOptions {
    frontier: Frontier;
    items: DatasetSink<StoredItem>;
    quarantine: DatasetSink<QuarantineEntry>;
    raw: RawStore;
    stats: RunStats;
    renderLearner: RenderLearner;
    driftBreaker: DriftBreaker;
    log: Logger;
}

export class PageHandler {
    constructor(private readonly options: PageHandlerOptions) {}

    async handle(page: FetchedPage): Promise<void> {
        const { stats, frontier, log } = this.options;
        const { request, route, $, renderer } = page;
        const fetchedAt = new Date().toISOString();
        const rawKey = rawPageKey(page.finalUrl, renderer);
        await this.options.raw.put({
            key: rawKey,
            url: request.url,
            finalUrl: page.finalUrl,
            status: page.status,
            headers: page.headers,
            fetchedAt,
            renderer,
            label: route.label,
            body: page.html,
        });
        if (renderer === 'http') stats.httpFetched += 1;
        else stats.browserRendered += 1;
        stats.route(route.label).pages += 1;

        const base = documentBase($, page.finalUrl);
        const canonical = canonicalUrl($, base, frontier);
        if (canonical && !request.userData.canonicalChecked && !(await frontier.claimCanonical(canonical, request.url))) {
            log.debug({ url: request.url, canonical }, 'duplicate of a page already seen');
            stats.duplicates += 1;
            stats.succeeded += 1;
            return;
        }

        const context: PageContext = { url: new URL(page.finalUrl), label: route.label, renderer, userData: request.userData };
        const verdict = extractAndValidate(route, $, context);
        await frontier.enqueue(discoverLinks(route, $, context), base);

        const incomplete = isIncomplete(verdict);
        if (renderer === 'http' && route.render === 'auto' && route.extract) {
            this.options.renderLearner.record(route.label, incomplete);
            if (incomplete) {
                const reason = describeIncomplete(verdict);
                stats.escalations += 1;
                stats.route(route.label).escalations += 1;
                stats.countFailingFields(route.label, failingFields(verdict));
                log.debug({ url: request.url, route: route.label, reason }, 'escalating to the browser');
                await frontier.escalate({ ...request, userData: { ...request.userData, canonicalChecked: true } }, reason);
                return;
            }
        }

        await this.store(verdict, { url: canonical ?? request.url, route: route.label, rawKey, renderer, fetchedAt, judged: route.extract !== undefined });
        stats.succeeded += 1;
    }

    private async store(
        verdict: Verdict,
        origin: { url: string; route: string; rawKey: string; renderer: Renderer; fetchedAt: string; judged: boolean },
    ): Promise<void> {
        const { items, quarantine, stats } = this.options;
        const routeStats = stats.route(origin.route);
        for (const record of verdict.valid) {
            await items.push({
                ...record,
                _url: origin.url,
                _route: origin.route,
                _rawKey: origin.rawKey,
                _renderer: origin.renderer,
                _fetchedAt: origin.fetchedAt,
            });
        }
        stats.itemsStored += verdict.valid.length;
        routeStats.itemsStored += verdict.valid.length;

        const rejected = verdict.invalid.map(({ record, issues, fields }) => ({ record, issues, fields }));
        if (verdict.shortfall) rejected.push({ record: null, issues: [verdict.shortfall], fields: ['(records)'] });
        for (const { record, issues, fields } of rejected) {
            const { url, route, rawKey, renderer } = origin;
            await quarantine.push({ url, route, rawKey, renderer, issues, fields, record, quarantinedAt: new Date().toISOString() });
        }
        stats.itemsInvalid += rejected.length;
        routeStats.itemsInvalid += rejected.length;
        stats.countFailingFields(origin.route, failingFields(verdict));
        if (origin.judged) this.judge(verdict, origin, rejected);
    }

    /** Hands the page's final verdict to the drift breaker, and says so loudly when it trips. */
    private judge(verdict: Verdict, origin: { url: string; route: string; rawKey: string }, rejected: { issues: string[] }[]): void {
        const trip = this.options.driftBreaker.judge(origin.route, {
            invalid: rejected.length > 0,
            fields: failingFields(verdict),
            url: origin.url,
            rawKey: origin.rawKey,
            issues: rejected.flatMap((rejection) => rejection.issues),
        });
        if (!trip) return;
        const fields = Object.entries(trip.failingFields).map(([field, count]) => `${field} ×${count}`).join(', ');
        this.options.log.error(
            { drift: trip },
            `drift breaker tripped on route "${trip.route}" after ${trip.pagesJudged} pages: ` +
                `${Math.round(trip.invalidShare * 100)}% of recent pages invalid (${fields}); e.g. ${trip.samples[0]?.url}. ` +
                `Stopping the ${this.options.driftBreaker.scope === 'run' ? 'run' : 'route'}; raw pages of the samples are kept for reparse.`,
        );
    }
}

/** Runs the extractor; an extractor that throws makes the page invalid rather than crashing the run. */
function extractAndValidate(route: Route, $: CheerioAPI, context: PageContext): Verdict {
    if (!route.extract) return validatePage(route, []);
    try {
        return validatePage(route, route.extract($, context));
    } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        return { valid: [], invalid: [{ record: null, issues: [`extract threw: ${message}`], fields: ['(extract)'] }] };
    }
}

function* discoverLinks(route: Route, $: CheerioAPI, context: PageContext): Iterable<Link> {
    for (const rule of route.enqueue ?? []) {
        if ('selector' in rule) {
            for (const element of $(rule.selector).toArray()) {
                const href = $(element).attr('href');
                if (href) yield { url: href, label: rule.label };
            }
        } else {
            for (const url of rule.links($, context)) yield { url, label: rule.label };
        }
    }
}

function failingFields(verdict: Verdict): string[] {
    const fields = verdict.invalid.flatMap((invalid) => invalid.fields);
    return verdict.shortfall ? [...fields, '(records)'] : fields;
}

/** The URL relative links resolve against: the page's `<base href>` when it has one. */
function documentBase($: CheerioAPI, pageUrl: string): URL {
    const href = $('base[href]').first().attr('href');
    try {
        return new URL(href ?? pageUrl, pageUrl);
    } catch {
        return new URL(pageUrl);
    }
}

function canonicalUrl($: CheerioAPI, base: URL, frontier: Frontier): string | undefined {
    const href = $('link[rel="canonical"]').first().attr('href');
    return href ? frontier.normalize(href, base) : undefined;
}
