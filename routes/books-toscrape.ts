/**
 * books.toscrape.com: 50 listing pages of 20 books, each linking to a product page.
 * The site is static HTML, so nothing here needs the browser.
 */
import type { CheerioAPI } from 'cheerio';
import { z } from 'zod';
import { defineSite, numberOf, textOf } from 'dragnet';

const bookSchema = z.object({
    title: z.string().min(1),
    price: z.number().positive().max(10_000),
    currency: z.string().length(3).optional(),
    availability: z.number().int().nonnegative().optional(),
    inStock: z.boolean(),
    rating: z.number().int().min(1).max(5).optional(),
    upc: z.string().regex(/^[0-9a-f]{16}$/, 'UPC is 16 hex digits'),
    category: z.string().min(1).optional(),
    /** Some books have no description. */
    description: z.string().optional(),
    imageUrl: z.url().optional(),
});

/** `/`, `/index.html`, `/catalogue/page-N.html`, `/catalogue/category/.../(index|page-N).html`. */
const LISTING_PATHS = [
    /^\/(?:index\.html)?$/,
    /^\/catalogue\/page-\d+\.html$/,
    /^\/catalogue\/category\/.+\/(?:index|page-\d+)\.html$/,
];
const BOOK_PATH = /^\/catalogue\/[^/]+_\d+\/index\.html$/;

const CURRENCIES: Record<string, string> = { '£': 'GBP', $: 'USD', '€': 'EUR' };
const RATINGS: Record<string, number> = { One: 1, Two: 2, Three: 3, Four: 4, Five: 5 };

/** A cell of the "Product Information" table, by its row heading. */
function productInfo($: CheerioAPI, heading: string): string | undefined {
    const row = $('table.table-striped tr').filter((_, tr) => $(tr).find('th').text().trim() === heading);
    return textOf($, 'td', row);
}

export default defineSite({
    name: 'books-toscrape',
    startUrls: ['https://books.toscrape.com/'],
    routes: {
        listing: {
            match: (url) => LISTING_PATHS.some((path) => path.test(url.pathname)),
            enqueue: [
                { selector: 'article.product_pod h3 a', label: 'book' },
                { selector: 'li.next a', label: 'listing' },
            ],
        },
        book: {
            match: (url) => BOOK_PATH.test(url.pathname),
            schema: bookSchema,
            extract: ($, page) => {
                const main = $('.product_main');
                const priceText = textOf($, 'p.price_color', main);
                const availabilityText = textOf($, 'p.availability', main) ?? '';
                const ratingWord = $('p.star-rating', main)
                    .attr('class')
                    ?.split(/\s+/)
                    .find((word) => Object.hasOwn(RATINGS, word));
                const available = /\((\d+) available\)/.exec(availabilityText)?.[1];
                const imageSrc = $('#product_gallery img').first().attr('src');
                return {
                    title: textOf($, 'h1', main),
                    price: numberOf($, 'p.price_color', main),
                    currency: priceText && CURRENCIES[priceText.charAt(0)],
                    availability: available === undefined ? undefined : Number(available),
                    inStock: /\bin stock\b/i.test(availabilityText),
                    rating: ratingWord === undefined ? undefined : RATINGS[ratingWord],
                    upc: productInfo($, 'UPC'),
                    // Home > Books > <category> > <title>
                    category: textOf($, 'ul.breadcrumb li:nth-last-child(2)'),
                    description: textOf($, '#product_description + p'),
                    imageUrl: imageSrc === undefined ? undefined : new URL(imageSrc, page.url).href,
                };
            },
        },
    },
});
