/**
 * What a page says about its own URL: the base its relative links resolve against, and the
 * canonical URL it declares — both read the same way when crawling and when re-parsing.
 */
import type { CheerioAPI } from 'cheerio';
import { InvalidUrlError, normalizeUrl } from './normalize.js';

/** The URL relative links resolve against: the page's `<base href>` when it has one. */
export function documentBase($: CheerioAPI, pageUrl: string): URL {
    const href = $('base[href]').first().attr('href');
    try {
        return new URL(href ?? pageUrl, pageUrl);
    } catch {
        return new URL(pageUrl);
    }
}

/** The page's `<link rel="canonical">`, normalized; undefined when it has none or it is no crawlable URL. */
export function canonicalUrl($: CheerioAPI, base: URL, trackingParams?: readonly string[]): string | undefined {
    const href = $('link[rel="canonical"]').first().attr('href');
    if (!href) return undefined;
    try {
        return normalizeUrl(href, { base, trackingParams });
    } catch (error) {
        if (error instanceof InvalidUrlError) return undefined;
        throw error;
    }
}
