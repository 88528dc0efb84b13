/**
 * What is read out of a page's HTML: its base and canonical URLs, the route's records judged
 * against its schema, and the links its enqueue rules select. Plain work on a string, so it runs
 * in a parse worker (parseWorker.ts) as well as in the crawling thread (pageParser.ts).
 */
import type { CheerioAPI, CheerioOptions } from 'cheerio';
import { pageUrls } from '../frontier/canonical.js';
import { extractAndValidate, extractorFailed, type Verdict } from '../quality/validate.js';
import { elementsOf, type PageContext, type Renderer, type Route } from '../site/site.js';
import type { Link } from '../vocabulary/request.js';
import { readDocument } from './loadedDocument.js';

/** A fetched page, as it is handed to a parser (structured-cloneable). */
export interface PageToParse {
    html: string;
    /** The URL the HTML was read from (normalized). */
    finalUrl: string;
    renderer: Renderer;
    /** The request's user data, which the extractor sees in its context. */
    userData: Record<string, unknown>;
    /** The site's query parameters that never change a page, for the canonical URL. */
    trackingParams?: readonly string[];
}

export interface ParsedPage {
    /**
     * The URL relative links resolve against (`<base href>`, else the
     * page's own), as a string: a URL cannot be cloned to another thread.
     */
    base: string;
    /** The page's canonical URL, when it names one. */
    canonical: string | undefined;
    verdict: Verdict;
    links: Link[];
}

/**
 * The HTTP stage's HTML is parsed with htmlparser2, as Crawlee's CheerioCrawler parses it (parse5,
 * cheerio's default, is stricter and not made for scraping); a browser's serialized DOM with
 * cheerio's default, as the browser stage always had it.
 */
export const HTMLPARSER2 = { _useHtmlParser2: true } as CheerioOptions;

export function parsePage(route: Route, page: PageToParse): ParsedPage {
    return readDocument(page.html, page.renderer === 'http' ? HTMLPARSER2 : undefined, ($) => {
        const { base, canonical } = pageUrls($, page.finalUrl, page.trackingParams);
        const context: PageContext = {
            url: new URL(page.finalUrl),
            label: route.label,
            renderer: page.renderer,
            userData: page.userData,
        };
        return {
            base: base.href,
            canonical,
            verdict: extractAndValidate(route, $, context),
            links: discoverLinks(route, $, context),
        };
    });
}

/**
 * What a page whose parse ran past the time limit yields: an `extractor-timeout` quarantine and
 * nothing else. A parse worker is ended mid-page, so its links and canonical URL were never read;
 * the crawling thread, which does have them, gives the same answer, so that where a page was
 * parsed does not change what became of it.
 */
export function timedOutPage(page: PageToParse, limitSecs: number): ParsedPage {
    const verdict = extractorFailed('extractor-timeout', `parsing the page took over ${limitSecs} s`);
    return { base: page.finalUrl, canonical: undefined, verdict, links: [] };
}

function discoverLinks(route: Route, $: CheerioAPI, context: PageContext): Link[] {
    const links: Link[] = [];
    for (const rule of route.enqueue ?? []) {
        if ('selector' in rule) {
            for (const element of elementsOf($, rule.selector)) {
                const href = element.attribs?.href;
                if (href) links.push({ url: href, label: rule.label });
            }
        } else {
            for (const url of rule.links($, context)) links.push({ url, label: rule.label });
        }
    }
    return links;
}
