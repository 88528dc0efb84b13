/**
 * The site module for the hostile fixture server (test/site/hostile.ts): its index links products
 * as `a.p` and the page of many links as `a.m`. Loaded by path (`--site test/site/hostileSite.ts`)
 * so that parse workers can load it too: only a worker's timeout can end the extractor's loop on
 * HANG. The run gives the start URL (`--start-url http://shop.hostile.test:<port>/`).
 */
import { z } from 'zod';
import { defineSite, numberOf, textOf } from '../../src/site/site.js';

export default defineSite({
    name: 'hostile',
    // A placeholder: the .test domain never resolves, so a run without --start-url asks nothing of anyone.
    startUrls: ['http://shop.hostile.test/'],
    // So that internal.hostile.test is in scope and must be refused for its address, not its name.
    allowedDomains: ['hostile.test'],
    // /many-links has 10,000: 200 of them keep the suite quick and still show the cut.
    maxLinksPerPage: 200,
    routes: {
        home: {
            match: (url) => url.pathname === '/',
            enqueue: [
                { selector: 'a.p', label: 'product' },
                { selector: 'a.m', label: 'item' },
            ],
        },
        product: {
            schema: z.object({ title: z.string().min(1), price: z.number().optional() }),
            render: 'never',
            extract: ($) => {
                const title = textOf($, 'h1.title');
                if (title === 'THROW') throw new Error('the extractor was told to throw');
                if (title === 'HANG') for (;;);
                return { title, price: numberOf($, 'p.price') };
            },
        },
        // /many-links and the pages it links to.
        item: {
            schema: z.object({ title: z.string().min(1) }),
            render: 'never',
            extract: ($) => ({ title: textOf($, 'h1.title') }),
            enqueue: [{ selector: 'a.m', label: 'item' }],
        },
    },
});
