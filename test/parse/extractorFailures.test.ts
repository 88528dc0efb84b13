/**
 * Route code that fails, parsed in the crawling thread: an extractor that throws or returns what is
 * not records of plain data gives a verdict that quarantines the page with the reason (and the
 * raw page key, through records.ts), never an exception; a parse past the time limit is an
 * `extractor-timeout`. Pages whose extractor works, or that have none, are judged as before.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { createPageParser } from '../../src/parse/pageParser.js';
import { parsePage, type PageToParse } from '../../src/parse/parsePage.js';
import { isIncomplete, mayEscalate, type Verdict } from '../../src/quality/validate.js';
import { defineSite, type Route, type RouteDefinition } from '../../src/site/site.js';
import { quarantineEntries, storedItems } from '../../src/store/records.js';

const PAGE: PageToParse = {
    html: '<html><body><h1>Blue lamp</h1></body></html>',
    finalUrl: 'http://127.0.0.1:9/products/1',
    renderer: 'http',
    userData: {},
};
const ORIGIN = {
    url: PAGE.finalUrl,
    route: 'product',
    rawKey: 'a1b2c3-http',
    renderer: 'http' as const,
    fetchedAt: '2025-01-01T00:00:00.000Z',
};
const SCHEMA = z.object({ title: z.string().min(1) });

function routeWith(definition: RouteDefinition): Route {
    return defineSite({ name: 'failures-test', startUrls: [], routes: { product: definition } }).routes.get('product')!;
}

const verdictOf = (definition: RouteDefinition): Verdict => parsePage(routeWith(definition), PAGE).verdict;

/**
 * The page's one quarantine entry says `issue…`, carries the raw
 * page key, and can be stored (JSON) and cloned to a worker.
 */
function assertQuarantined(verdict: Verdict, issue: string | RegExp): void {
    assert.deepEqual(verdict.valid, []);
    const entries = quarantineEntries(verdict, ORIGIN);
    assert.equal(entries.length, 1, JSON.stringify(entries));
    const [entry] = entries;
    if (typeof issue === 'string')
        assert.ok(entry!.issues[0]!.startsWith(issue), `${entry!.issues[0]} starts with ${issue}`);
    else assert.match(entry!.issues[0]!, issue);
    assert.deepEqual(entry!.fields, ['(extract)']);
    assert.equal(entry!.rawKey, ORIGIN.rawKey);
    assert.equal(entry!.record, null);
    assert.equal(verdict.extractorFailed, entry!.issues[0]);
    assert.ok(isIncomplete(verdict), 'counts as an invalid page');
    assert.equal(mayEscalate(verdict), false, 'the browser would run the same code');
    assert.doesNotThrow(() => JSON.stringify(entries));
    assert.doesNotThrow(() => structuredClone(verdict));
}

describe('an extractor that throws', () => {
    it('quarantines the page as extractor-error with the message and where it was thrown', () => {
        const verdict = verdictOf({
            schema: SCHEMA,
            extract: () => {
                throw new Error('no price block');
            },
        });
        assertQuarantined(verdict, 'extractor-error: no price block');
        assert.match(verdict.invalid[0]!.issues[0]!, /\(at .*extractorFailures\.test\.ts:\d+:\d+\)/);
    });

    it("names the error's class, and takes a thrown non-error as it is", () => {
        assertQuarantined(
            verdictOf({ extract: ($) => ({ title: $('h2').attr('title')!.trim() }) }),
            /^extractor-error: TypeError: Cannot read properties of undefined \(reading 'trim'\)/,
        );
        assertQuarantined(
            verdictOf({
                extract: () => {
                    throw 'gave up';
                },
            }),
            'extractor-error: threw gave up',
        );
        assertQuarantined(verdictOf({ extract: ($) => ({ title: $('h1[').text() }) }), 'extractor-error: ');
    });

    it('and a schema whose refinement throws, likewise', () => {
        const schema = z.object({ title: z.string() }).refine(() => {
            throw new Error('refinement broke');
        });
        assertQuarantined(verdictOf({ schema, extract: () => ({ title: 'x' }) }), 'extractor-error: refinement broke');
    });
});

describe('an extractor that returns what is not records of plain data', () => {
    const circular: Record<string, unknown> = { title: 'loop' };
    circular.self = circular;
    class Product {
        title = 'x';
    }
    const cases: [string, () => unknown, string][] = [
        ['a string', () => 'Blue lamp', 'extractor-non-data: a string ("Blue lamp"), not a record'],
        ['a number', () => 42, 'extractor-non-data: a number (42), not a record'],
        ['a boolean', () => true, 'extractor-non-data: a boolean (true), not a record'],
        ['a list of numbers', () => [1, 2], 'extractor-non-data: record 1 of 2 is a number (1), not a record'],
        [
            'a list with a hole',
            () => [{ title: 'a' }, undefined],
            'extractor-non-data: record 2 of 2 is undefined, not a record',
        ],
        ['a list of lists', () => [[{ title: 'a' }]], 'extractor-non-data: record 1 of 1 is a list, not a record'],
        ['a Promise (an async extractor)', async () => ({ title: 'x' }), 'extractor-non-data: a Promise'],
        ['a function', () => () => ({ title: 'x' }), 'extractor-non-data: a function, not a record'],
        ['a class instance', () => new Product(), 'extractor-non-data: a Product, not a record'],
        ['a circular record', () => circular, 'extractor-non-data: self is circular'],
        [
            'a function in a nested field',
            () => [{ title: 'x', offer: { price: () => 1 } }],
            'extractor-non-data: records[0].offer.price is a function',
        ],
        ['a Map in a field', () => ({ title: 'x', tags: new Map() }), 'extractor-non-data: tags is a Map'],
        [
            'a bigint in a list field',
            () => ({ title: 'x', ids: [1, 2n] }),
            'extractor-non-data: ids[1] is a bigint (2)',
        ],
    ];
    for (const [what, extract, issue] of cases) {
        it(`quarantines ${what} as extractor-non-data, with or without a schema`, () => {
            assertQuarantined(
                verdictOf({ schema: SCHEMA.loose(), extract: extract as RouteDefinition['extract'] }),
                issue,
            );
            assertQuarantined(verdictOf({ extract: extract as RouteDefinition['extract'] }), issue);
        });
    }

    it('quarantines a Cheerio selection returned for its text', () => {
        assertQuarantined(
            verdictOf({ extract: ($) => ({ title: $('h1') }) as never }),
            'extractor-non-data: title is a Cheerio object',
        );
        assertQuarantined(verdictOf({ extract: ($) => $('h1') as never }), 'extractor-non-data: a Cheerio object');
    });

    it('quarantines what a schema turns into non-data', () => {
        const schema = z.object({ title: z.string().transform((title) => new Map([['title', title]])) });
        assertQuarantined(
            verdictOf({ schema, extract: () => ({ title: 'x' }) }),
            'extractor-non-data: after the schema, records[0].title is a Map',
        );
    });

    it('lets a rejecting async extractor fail quietly: no unhandled rejection', async () => {
        const unhandled: unknown[] = [];
        const listener = (reason: unknown) => unhandled.push(reason);
        process.on('unhandledRejection', listener);
        try {
            assertQuarantined(
                verdictOf({
                    extract: (async () => {
                        throw new Error('late');
                    }) as never,
                }),
                'extractor-non-data: a Promise',
            );
            await new Promise((resolve) => setTimeout(resolve, 20));
        } finally {
            process.off('unhandledRejection', listener);
        }
        assert.deepEqual(unhandled, []);
    });
});

describe('pages whose route code works, or that have none', () => {
    it('stores plain records, dates and nested lists included, as before', () => {
        const fetched = new Date('2025-01-01');
        const verdict = verdictOf({
            extract: () => [{ title: 'a', seen: fetched, shared: { n: 1 }, tags: [['x'], null] }, { title: 'b' }],
        });
        assert.equal(verdict.extractorFailed, undefined);
        assert.deepEqual(
            storedItems(verdict, ORIGIN).map((item) => item.title),
            ['a', 'b'],
        );
    });

    it('takes nothing (null, undefined) as no records: a shortfall when the route needs one, as before', () => {
        for (const nothing of [null, undefined]) {
            const verdict = verdictOf({ schema: SCHEMA, extract: () => nothing });
            assert.deepEqual(verdict, { valid: [], invalid: [], shortfall: '0 of at least 1 records' });
            assert.equal(mayEscalate(verdict), true);
        }
    });

    it('judges a route without an extractor as before: no records, nothing wrong', () => {
        assert.deepEqual(verdictOf({ enqueue: [] }), { valid: [], invalid: [] });
    });
});

describe('the time limit in the crawling thread', () => {
    const slowSite = defineSite({
        name: 'slow-site',
        startUrls: [],
        routes: {
            product: {
                extract: ($, { url }) => {
                    const until = performance.now() + Number(url.searchParams.get('holdMs') ?? 0);
                    while (performance.now() < until);
                    return { title: $('h1').text() };
                },
            },
        },
    });
    const route = slowSite.routes.get('product')!;
    const at = (query: string): PageToParse => ({ ...PAGE, finalUrl: `${PAGE.finalUrl}${query}` });

    it('judges a parse that returned past the limit as extractor-timeout, as a parse worker would have', async () => {
        // A site defined in place has no module for workers to load:
        // it is parsed in this thread whatever `workers` says.
        const parser = createPageParser(slowSite, 2, { extractTimeoutSecs: 0.1 });
        const slow = await parser.parse(route, at('?holdMs=150'));
        assert.deepEqual(slow.links, []);
        assert.equal(slow.canonical, undefined);
        assertQuarantined(slow.verdict, 'extractor-timeout: parsing the page took over 0.1 s');
        assert.equal((await parser.parse(route, at('?holdMs=10'))).verdict.valid[0]?.title, 'Blue lamp');
    });

    it('refuses a limit that is not a positive number of seconds', () => {
        for (const extractTimeoutSecs of [0, -1, Number.NaN])
            assert.throws(() => createPageParser(slowSite, 0, { extractTimeoutSecs }), RangeError);
    });
});
