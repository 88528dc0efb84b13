/**
 * quotes.toscrape.com: ten quotes per list page, and a page per author.
 * The `/js/` pages write their quotes with JavaScript, so the cheap fetch finds none there and
 * the page escalates to the browser, where the same extractor reads the rendered DOM.
 */
import { z } from 'zod';
import { defineSite, textOf } from 'dragnet';

const quoteSchema = z.object({
    text: z.string().min(2).startsWith('“'),
    author: z.string().min(1),
    /** Absent on the `/js/` pages, whose script renders no "(about)" link. */
    authorUrl: z.url().optional(),
    tags: z.array(z.string().min(1)),
});

const authorSchema = z.object({
    name: z.string().min(1),
    born: z.string().refine((born) => !Number.isNaN(Date.parse(born)), 'born is not a date'),
    location: z.string().optional(),
    description: z.string().optional(),
});

/**
 * `/`, `/page/N/`, `/tag/T/`, `/tag/T/page/N/`, `/js/`, `/js/page/N/`. Matched on the path alone,
 * so the same routes serve the live site and a local copy of it.
 */
const LIST_PATHS = [/^\/(?:page\/\d+\/)?$/, /^\/tag\/[^/]+\/(?:page\/\d+\/)?$/, /^\/js\/(?:page\/\d+\/)?$/];
const AUTHOR_PATH = /^\/author\/[^/]+\/$/;

/** The site links `/author/X` and redirects it to `/author/X/`; accept both forms. */
function withSlash(path: string): string {
    return path.endsWith('/') ? path : `${path}/`;
}

export default defineSite({
    name: 'quotes-toscrape',
    startUrls: ['https://quotes.toscrape.com/'],
    routes: {
        quotes: {
            match: (url) => LIST_PATHS.some((path) => path.test(withSlash(url.pathname))),
            schema: quoteSchema,
            extract: ($, page) =>
                $('div.quote')
                    .toArray()
                    .map((quote) => {
                        const about = $(quote).find('a[href*="/author/"]').attr('href');
                        return {
                            text: textOf($, 'span.text', quote),
                            author: textOf($, 'small.author', quote),
                            authorUrl: about === undefined ? undefined : new URL(about, page.url).href,
                            tags: $(quote)
                                .find('div.tags a.tag')
                                .toArray()
                                .map((tag) => $(tag).text().trim()),
                        };
                    }),
            minRecords: 1,
            render: 'auto',
            waitFor: 'div.quote',
            enqueue: [
                { selector: 'li.next > a', label: 'quotes' },
                { selector: 'div.quote a[href*="/author/"]', label: 'author' },
            ],
        },
        author: {
            match: (url) => AUTHOR_PATH.test(withSlash(url.pathname)),
            schema: authorSchema,
            extract: ($) => ({
                name: textOf($, 'h3.author-title'),
                born: textOf($, 'span.author-born-date'),
                location: textOf($, 'span.author-born-location')?.replace(/^in /, ''),
                description: textOf($, 'div.author-description'),
            }),
        },
    },
});
