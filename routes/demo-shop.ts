/**
 * The demo shop (src/demo/shop.ts), the site `npm start` crawls with no arguments.
 * Home → category listings (paginated) → product pages. Some product pages fill in their
 * title and price with a script, so their cheap fetch fails the schema and goes to the browser.
 */
import { z } from 'zod';
import { defineSite, numberOf, textOf } from 'dragnet';

const productSchema = z.object({
    title: z.string().min(1, 'title is empty'),
    price: z.number().positive().max(100_000),
    currency: z
        .string()
        .regex(/^[A-Z]{3}$/)
        .optional(),
    sku: z.string().regex(/^SKU-\d{6}$/, 'SKU is SKU- and six digits'),
    availability: z.enum(['in_stock', 'out_of_stock']).optional(),
    stock: z.number().int().nonnegative().optional(),
    description: z.string().min(1).optional(),
    category: z.string().min(1).optional(),
});

export default defineSite({
    name: 'demo-shop',
    // The CLI replaces the host with the shop it starts in-process.
    startUrls: ['http://127.0.0.1:8080/'],
    routes: {
        home: {
            match: (url) => url.pathname === '/',
            enqueue: [
                { selector: 'a.category-link', label: 'category' },
                // Alias links (`/p/<id>` answers 301 to the product page): the redirect goes through the frontier.
                { selector: 'a.featured-link', label: 'product' },
            ],
        },
        category: {
            // The anti-bot mode's hard category lists at /premium/<slug>, its products at /premium/items/….
            match: (url) => url.pathname.startsWith('/category/') || /^\/premium\/(?!items\/)[^/]+$/.test(url.pathname),
            enqueue: [
                { selector: 'a.product-link', label: 'product' },
                { selector: 'a.next', label: 'category' },
            ],
        },
        product: {
            match: (url) => url.pathname.startsWith('/products/') || url.pathname.startsWith('/premium/items/'),
            schema: productSchema,
            render: 'auto',
            // Script-only pages fill in title and price after parsing: wait until the record is valid.
            waitUntil: 'fields',
            enqueue: [{ selector: 'a.related-link', label: 'product' }],
            extract: ($) => {
                const availabilityLine = $('p.availability').first();
                const availability: z.input<typeof productSchema>['availability'] = availabilityLine.hasClass(
                    'in-stock',
                )
                    ? 'in_stock'
                    : availabilityLine.hasClass('out-of-stock')
                      ? 'out_of_stock'
                      : undefined;
                // "In stock (12 available)"; an out-of-stock product has none left.
                const available = /\((\d+) available\)/.exec(availabilityLine.text())?.[1];
                return {
                    // Empty on script-only pages until the script has run: the schema sends those to the browser.
                    title: textOf($, 'h1.product-title'),
                    price: numberOf($, '.buy-box .price'),
                    currency: $('.buy-box .price').attr('data-currency'),
                    sku: textOf($, '.buy-box .sku'),
                    availability,
                    stock:
                        available !== undefined ? Number(available) : availability === 'out_of_stock' ? 0 : undefined,
                    description: textOf($, '.description'),
                    category: textOf($, 'nav.breadcrumb a.breadcrumb-category'),
                };
            },
        },
    },
});
