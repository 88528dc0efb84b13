/**
 * A site whose extractors break their schemas on purpose: each `@ts-expect-error` marks a line
 * `defineSite` must reject at compile time. `npm test` type-checks this file (an unused directive
 * is an error too), and typedRoutes.test.ts compiles it without the directives to see each error.
 */
import { z } from 'zod';
import { defineSite, numberOf, textOf } from '../../src/site/site.js';

const productSchema = z.object({
    title: z.string().min(1),
    price: z.number().positive(),
    availability: z.enum(['in_stock', 'out_of_stock']).optional(),
});

export default defineSite({
    name: 'typed-site',
    startUrls: ['http://127.0.0.1/'],
    routes: {
        wellTyped: {
            schema: productSchema,
            extract: ($) => ({
                title: textOf($, 'h1'),
                price: numberOf($, '.price'),
                availability: 'in_stock' as const,
            }),
        },
        priceAsText: {
            schema: productSchema,
            // @ts-expect-error price is text where the schema wants a number
            extract: ($) => ({ title: textOf($, 'h1'), price: textOf($, '.price') }),
        },
        misspelledField: {
            schema: productSchema,
            // @ts-expect-error "titel" is not a field of the schema
            extract: ($) => [{ titel: textOf($, 'h1'), price: numberOf($, '.price') }],
        },
        noSchema: {
            extract: ($) => ({ anything: textOf($, 'h1') }),
        },
    },
});
