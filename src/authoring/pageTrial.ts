/**
 * One page through its route, told the way a contributor needs it: the records, each field's verdict
 * against the schema, what each enqueue rule would follow (or why not), and whether the page would go
 * to the browser. The parse is the crawl's own (parse/parsePage.ts), so what `npm run try` shows and
 * what a fixture test expects is what a run stores; nothing here fetches or writes.
 */
import type { z } from 'zod';
import { InvalidUrlError, normalizeUrl, urlKey } from '../frontier/normalize.js';
import type { SiteScope } from '../frontier/scope.js';
import { type PageToParse, parsePage } from '../parse/parsePage.js';
import { describeIncomplete, mayEscalate, type Verdict } from '../quality/validate.js';
import type { Route, Site } from '../site/site.js';

/** What a link found by an enqueue rule would become. */
export type LinkFate =
    /** Admitted to the frontier, unless a run has seen it already or robots.txt disallows it. */
    | 'follow'
    /** Its host is outside the site's scope (its start URLs' hosts and `allowedDomains`). */
    | 'offsite'
    /** Not an http(s) URL a crawl can fetch (`mailto:`, `javascript:`, unparsable). */
    | 'invalid'
    /** Another link of this page leads to the same URL once normalized (tracking parameters dropped). */
    | 'duplicate';

export interface LinkTrial {
    /** The rule's label: the route the link would be handled by. */
    label: string;
    /** As the page has it. */
    href: string;
    /** Normalized, as the frontier would queue it; undefined for an invalid link. */
    url?: string;
    fate: LinkFate;
}

export interface FieldVerdict {
    field: string;
    value: unknown;
    /** False when the schema rejected the field; `issues` say why. */
    ok: boolean;
    issues: string[];
}

export interface PageTrial {
    url: string;
    label: string;
    renderer: PageToParse['renderer'];
    /** The records that pass the schema, as the dataset would store them. */
    records: Record<string, unknown>[];
    /** Per record the extractor returned (passed or not), each field's verdict. */
    fields: FieldVerdict[][];
    /** The judgement: every record's issues, a shortfall of records, or the route code's failure. */
    verdict: Verdict;
    /** Why the page is not complete (`missing or invalid: price`), or undefined when it is. */
    incomplete?: string;
    /** True when a cheap fetch of this page would be sent to the browser (an `auto` route missing fields). */
    escalates: boolean;
    canonical?: string;
    links: LinkTrial[];
}

/** Runs `route` over `page` as the crawl's parse would, and tells what it found. */
export function tryPage(site: Site, route: Route, page: PageToParse, scope: SiteScope): PageTrial {
    const parsed = parsePage(route, { ...page, trackingParams: site.trackingParams });
    const { verdict } = parsed;
    const seen = new Set<string>();
    // Every link of an enqueue rule carries the rule's label.
    const links = parsed.links.map(({ url: href, label = '' }): LinkTrial => {
        let url: string;
        try {
            url = normalizeUrl(href, { base: parsed.base, trackingParams: site.trackingParams });
        } catch (error) {
            if (error instanceof InvalidUrlError) return { label, href, fate: 'invalid' };
            throw error;
        }
        const key = urlKey(url);
        const fate: LinkFate = !scope.includes(new URL(url)) ? 'offsite' : seen.has(key) ? 'duplicate' : 'follow';
        seen.add(key);
        return { label, href, url, fate };
    });
    const incomplete = verdict.extractorFailed ?? (describeIncomplete(verdict) || undefined);
    return {
        url: page.finalUrl,
        label: route.label,
        renderer: page.renderer,
        records: verdict.valid,
        fields: [
            ...verdict.valid.map((record) => fieldVerdicts(route, record, [])),
            ...verdict.invalid.map(({ record, issues }) => fieldVerdicts(route, record, issues)),
        ],
        verdict,
        incomplete,
        escalates:
            page.renderer === 'http' && route.render === 'auto' && route.extract !== undefined && mayEscalate(verdict),
        canonical: parsed.canonical,
        links,
    };
}

/** Each field of the schema's shape and of the record, with the issues (`price: …`) that name it. */
function fieldVerdicts(route: Route, record: unknown, issues: readonly string[]): FieldVerdict[] {
    const values = record !== null && typeof record === 'object' ? (record as Record<string, unknown>) : {};
    const shape = (route.schema as z.ZodObject | undefined)?.shape ?? {};
    const fields = [...new Set([...Object.keys(shape), ...Object.keys(values)])];
    const recordIssues = issues.filter((issue) => issue.startsWith('(record)'));
    return [
        ...fields.map((field) => {
            const own = issues.filter(
                (issue) => issue === field || issue.startsWith(`${field}:`) || issue.startsWith(`${field}.`),
            );
            return { field, value: values[field], ok: own.length === 0, issues: own };
        }),
        ...(recordIssues.length > 0 ? [{ field: '(record)', value: record, ok: false, issues: recordIssues }] : []),
    ];
}
