/**
 * How the plain Crawlee crawlers (plainCrawlee.ts, plainPlaywright.ts)
 * read the fixture shop, as a Crawlee user would write it.
 */
import type { CheerioAPI, RequestOptions } from 'crawlee';

/**
 * The shop's product links carry `?ref=related`, `?ref=category` or `utm_*` parameters.
 * Crawlee's unique key already drops `utm_*` and fragments but not `ref`, so without this a
 * product would be fetched up to three times; a user who saw the duplicates would add this.
 */
export function withoutQuery(request: RequestOptions): RequestOptions {
    const url = new URL(request.url);
    url.search = '';
    return { ...request, url: url.href };
}

/** A product page's fields, the ones dragnet's demo-shop route extracts. */
export function productFields($: CheerioAPI, url: string) {
    const availabilityLine = $('p.availability').first();
    const inStock = availabilityLine.hasClass('in-stock');
    const available = /\((\d+) available\)/.exec(availabilityLine.text())?.[1];
    return {
        url,
        title: $('h1.product-title').text().trim(),
        price: Number(
            $('.buy-box .price')
                .text()
                .replace(/[^0-9.]/g, ''),
        ),
        currency: $('.buy-box .price').attr('data-currency'),
        sku: $('.buy-box .sku').text().trim(),
        availability: inStock ? 'in_stock' : 'out_of_stock',
        stock: available !== undefined ? Number(available) : 0,
        description: $('.description').text().trim(),
        category: $('nav.breadcrumb a.breadcrumb-category').text().trim(),
    };
}
