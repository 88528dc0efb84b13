/**
 * A site declared in a YAML or JSON file instead of a module (the format: fileFormat.ts). The file
 * is built into the SiteDefinition a TypeScript site would write — a match, an extractor and a zod
 * schema per route — and goes through `defineSite`, so the crawl, reparse, try and the parse
 * workers run it exactly as they run a site module, and cannot tell the two apart.
 */
import { readFileSync } from 'node:fs';
import type { Element } from 'domhandler';
import { z } from 'zod';
import { ConfigError } from '../../options/configError.js';
import { pageUrls } from '../../frontier/canonical.js';
import { defineSite, elementsOf, type RouteDefinition, type Site, type UrlMatcher } from '../site.js';
import { type FieldPage, fieldReader, fieldSchema } from './fields.js';
import { parseSiteFile, shownPath, siteFileError } from './fileErrors.js';
import { type FieldSpec, type RouteSpec, siteFileSchema } from './fileFormat.js';

/** The site declared in `file`. A problem with the file is a one-line ConfigError at its line and key. */
export function readDeclarativeSite(file: string): Site {
    let text: string;
    try {
        text = readFileSync(file, 'utf8');
    } catch (error) {
        throw new ConfigError((error as Error).message);
    }
    const parsed = parseSiteFile(file, text);
    const result = siteFileSchema.safeParse(parsed.data);
    if (!result.success) throw siteFileError(parsed, result.error.issues);
    const { routes, ...options } = result.data;
    try {
        return defineSite({
            ...options,
            routes: Object.fromEntries(Object.entries(routes).map(([label, spec]) => [label, routeOf(spec)])),
        });
    } catch (error) {
        throw new ConfigError(`${shownPath(file)}: ${(error as Error).message}`);
    }
}

function routeOf(spec: RouteSpec): RouteDefinition {
    const { match, records, fields, ...options } = spec;
    const route: RouteDefinition = { ...options };
    if (match !== undefined) route.match = urlMatcher(match);
    if (fields !== undefined) {
        route.extract = extractor(fields, records);
        route.schema = z.object(
            Object.fromEntries(Object.entries(fields).map(([name, field]) => [name, fieldSchema(field)])),
        );
    }
    return route;
}

/**
 * One pattern is a RegExp tested against the whole URL, as a site module writes it; a list, or `{ path }`, a predicate.
 */
function urlMatcher(match: NonNullable<RouteSpec['match']>): UrlMatcher {
    if (typeof match === 'string') return new RegExp(match);
    const ofPath = !Array.isArray(match);
    const patterns = (Array.isArray(match) ? match : [match.path].flat()).map((source) => new RegExp(source));
    return (url) => patterns.some((pattern) => pattern.test(ofPath ? url.pathname : url.href));
}

/**
 * One record per page, or one per element `records` matches, each field read within it. Missing fields are left out.
 */
function extractor(
    fields: Record<string, FieldSpec>,
    records: string | undefined,
): NonNullable<RouteDefinition['extract']> {
    const readers = Object.entries(fields).map(([name, field]) => [name, fieldReader(field)] as const);
    return ($, page) => {
        let base: URL | undefined;
        // Relative URLs resolve as the crawl resolves the page's links: against its <base href>, else its URL.
        const fieldPage: FieldPage = { $, base: () => (base ??= pageUrls($, page.url.href).base) };
        const record = (root?: Element) =>
            Object.fromEntries(
                readers.flatMap(([name, read]) => {
                    const value = read(fieldPage, root);
                    return value === undefined ? [] : [[name, value]];
                }),
            );
        return records === undefined ? record() : elementsOf($, records).map(record);
    };
}
