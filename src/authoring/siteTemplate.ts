/**
 * The route file `npm run new-site` writes: a listing → detail site with a schema, enqueue rules and
 * a render policy, every place to fill in commented. It type-checks and loads as written, so the
 * contributor's loop (`npm run try`, fixtures, `npm test`) works from the first minute.
 */

/** The route API as a file in routes/ imports it: the package's own name (package.json `exports`). */
const ROUTE_API = 'dragnet';

export interface SiteTemplateOptions {
    name: string;
    /** Normalized. */
    startUrl: string;
}

export function siteTemplate({ name, startUrl }: SiteTemplateOptions): string {
    const { pathname, host } = new URL(startUrl);
    // In the comment below, a `*/` in the URL would end it: its `*` is written percent-encoded there.
    const commentUrl = startUrl.replaceAll('*/', '%2A/');
    return `/**
 * ${name}: ${host}. Listing pages link to detail pages; each detail page is one record.
 *
 *   npm run try -- --site ${name} --url ${commentUrl}          what the listing rules follow
 *   npm run try -- --site ${name} --url <a detail page>      the record, field by field
 *   npm run try -- --site ${name} --url <…> --save-fixture   keep the page as a test (test/fixtures/${name}/)
 *   npm start -- --site ${name}                              crawl
 */
import { z } from 'zod';
import { defineSite, numberOf, textOf } from '${ROUTE_API}';

/**
 * What a detail page holds. A required field that comes out missing sends the page to the browser
 * (render: 'auto'), and past the browser to quarantine; bounds catch a selector that drifted.
 */
const itemSchema = z.object({
    title: z.string().min(1),
    // TODO: the fields you need; \`.optional()\` for those some pages lack.
    price: z.number().positive().max(1_000_000).optional(),
});

export default defineSite({
    name: '${name}',
    startUrls: [${JSON.stringify(startUrl)}],
    routes: {
        listing: {
            // The start page and the listing pages like it. Routes are tried in order; the first match wins.
            match: (url) => url.pathname === ${JSON.stringify(pathname)} || url.searchParams.has('page'),
            enqueue: [
                // TODO: the links from a listing to its detail pages, and to the next listing page.
                { selector: 'a.product-link', label: 'detail' },
                { selector: 'a.next', label: 'listing' },
            ],
        },
        detail: {
            // TODO: the detail pages' URLs.
            match: (url) => url.pathname.startsWith('/products/'),
            schema: itemSchema,
            // 'auto': the cheap fetch first, the browser only for pages missing required fields;
            // 'never' for a static site, 'always' for one that renders everything with scripts.
            render: 'auto',
            extract: ($) => ({
                // TODO: the selectors of each field (textOf: trimmed text of the first match; numberOf: its first \
number).
                title: textOf($, 'h1'),
                price: numberOf($, '.price'),
            }),
        },
    },
});
`;
}
