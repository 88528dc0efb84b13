import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { load, type CheerioAPI } from 'cheerio';
import { chromium } from 'playwright';
import site from '../../routes/quotes-toscrape.js';
import type { PageContext, Renderer, Route } from '../../src/site/site.js';
import { CHROMIUM_ARGS, findChromium } from '../../src/fetch/browser/chromium.js';
import { startStaticSite } from '../site/static.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/quotes.toscrape.com/', import.meta.url));
const LIVE = 'https://quotes.toscrape.com';

interface Quote {
    text: string;
    author: string;
    authorUrl?: string;
    tags: string[];
}

function route(label: string): Route {
    const found = site.routes.get(label);
    assert.ok(found, `route ${label}`);
    return found;
}

/** The saved page for a URL path: the tree mirrors URL paths, `/x/` is `x/index.html`. */
function fixture(path: string): CheerioAPI {
    return load(readFileSync(`${FIXTURES}${path.replace(/^\//, '')}index.html`));
}

function context(path: string, label: string, renderer: Renderer = 'http'): PageContext {
    return { url: new URL(path, LIVE), label, renderer, userData: {} };
}

function extractQuotes($: CheerioAPI, page: PageContext): Quote[] {
    const records = route('quotes').extract?.($, page);
    assert.ok(Array.isArray(records), 'the quotes route returns a list');
    return records as Quote[];
}

// From MANIFEST.md: the static list pages (path, quotes, first author, first 50 chars, tags on page).
const LIST_PAGES: [string, number, string, string, number][] = [
    ['/page/1/', 10, 'Albert Einstein', '“The world as we have created it is a process of o', 30],
    ['/page/2/', 10, 'Marilyn Monroe', '“This life is what you make it. No matter what, yo', 38],
    ['/page/3/', 10, 'Pablo Neruda', '“I love you without knowing how, or when, or from ', 14],
    ['/page/4/', 10, 'Dr. Seuss', '“The more that you read, the more things you will ', 21],
    ['/page/5/', 10, 'George R.R. Martin', '“A reader lives a thousand lives before he dies, s', 18],
    ['/page/6/', 10, 'Jane Austen', '“There is nothing I would not do for those who are', 20],
    ['/tag/love/', 10, 'André Gide', '“It is better to be hated for what you are than to', 31],
    ['/tag/humor/', 10, 'Jane Austen', '“The person, be it gentleman or lady, who has not ', 26],
    ['/tag/love/page/2/', 4, 'C.S. Lewis', '“To love at all is to be vulnerable. Love anything', 9],
];

for (const [path, count, firstAuthor, firstText, tagTotal] of LIST_PAGES) {
    test(`quotes: ${path} yields ${count} valid quotes`, () => {
        const quotes = extractQuotes(fixture(path), context(path, 'quotes'));
        assert.equal(quotes.length, count);
        assert.equal(quotes[0]?.author, firstAuthor);
        assert.equal(quotes[0]?.text.slice(0, 50), firstText);
        assert.equal(quotes.flatMap((quote) => quote.tags).length, tagTotal);
        for (const quote of quotes) {
            const result = route('quotes').schema?.safeParse(quote);
            assert.ok(result?.success, `${JSON.stringify(quote)}: ${result?.error?.message}`);
            assert.match(quote.authorUrl ?? '', /^https:\/\/quotes\.toscrape\.com\/author\/[^/]+$/);
        }
    });
}

test('quotes: the first record on /page/1/ in full', () => {
    const [first] = extractQuotes(fixture('/page/1/'), context('/page/1/', 'quotes'));
    assert.deepEqual(first, {
        text:
            '“The world as we have created it is a process of our ' +
            'thinking. It cannot be changed without changing our thinking.”',
        author: 'Albert Einstein',
        authorUrl: 'https://quotes.toscrape.com/author/Albert-Einstein',
        tags: ['change', 'deep-thoughts', 'thinking', 'world'],
    });
});

test('quotes: the cheap parse of /js/page/N/ finds nothing, so the page escalates to the browser', () => {
    const quotes = route('quotes');
    assert.equal(quotes.render, 'auto');
    assert.equal(quotes.waitFor, 'div.quote');
    assert.equal(quotes.minRecords, 1);
    for (let n = 1; n <= 6; n++) {
        const path = `/js/page/${n}/`;
        assert.equal(extractQuotes(fixture(path), context(path, 'quotes')).length, 0, path);
    }
});

const AUTHORS: [string, { name: string; born: string; location: string }][] = [
    ['/author/Albert-Einstein/', { name: 'Albert Einstein', born: 'March 14, 1879', location: 'Ulm, Germany' }],
    [
        '/author/J-K-Rowling/',
        {
            name: 'J.K. Rowling',
            born: 'July 31, 1965',
            location: 'Yate, South Gloucestershire, England, The United Kingdom',
        },
    ],
    [
        '/author/Jane-Austen/',
        {
            name: 'Jane Austen',
            born: 'December 16, 1775',
            location: 'Steventon Rectory, Hampshire, The United Kingdom',
        },
    ],
];

for (const [path, expected] of AUTHORS) {
    test(`author: ${path}`, () => {
        const author = route('author').extract?.(fixture(path), context(path, 'author')) as Record<string, unknown>;
        assert.deepEqual({ name: author.name, born: author.born, location: author.location }, expected);
        assert.ok(String(author.description).length > 100, 'has a description');
        assert.ok(route('author').schema?.safeParse(author).success);
    });
}

test('author: the schema requires name and born', () => {
    const schema = route('author').schema;
    assert.equal(schema?.safeParse({ name: '', born: 'March 14, 1879' }).success, false);
    assert.equal(schema?.safeParse({ name: 'Albert Einstein', born: '' }).success, false);
});

test('routeFor: list and JS pages are quotes, author pages are author, on any host', () => {
    const label = (href: string) => site.routeFor(undefined, new URL(href))?.label;
    for (const path of ['/', '/page/2/', '/tag/love/', '/tag/love/page/2/', '/js/', '/js/page/3/']) {
        assert.equal(label(`${LIVE}${path}`), 'quotes', path);
        assert.equal(label(`http://127.0.0.1:8080${path}`), 'quotes', path);
    }
    for (const path of ['/author/Albert-Einstein', '/author/Albert-Einstein/']) {
        assert.equal(label(`${LIVE}${path}`), 'author', path);
        assert.equal(label(`http://127.0.0.1:8080${path}`), 'author', path);
    }
    for (const path of ['/login', '/scroll', '/tableful/', '/api/quotes?page=1', '/author/']) {
        assert.equal(label(`${LIVE}${path}`), undefined, path);
    }
    assert.equal(site.routeFor('author', new URL(`${LIVE}/`))?.label, 'author');
});

test('enqueue: the next link and the author links', () => {
    const selectorFor = (label: string) => {
        const rule = route('quotes').enqueue?.find((r) => r.label === label);
        assert.ok(rule && 'selector' in rule, `a selector rule for ${label}`);
        return rule.selector;
    };
    const hrefs = ($: CheerioAPI, selector: string) =>
        $(selector)
            .toArray()
            .map((a) => $(a).attr('href'));

    assert.deepEqual(hrefs(fixture('/page/1/'), selectorFor('quotes')), ['/page/2/']);
    assert.deepEqual(hrefs(fixture('/js/page/1/'), selectorFor('quotes')), ['/js/page/2/']);
    assert.deepEqual(hrefs(fixture('/tag/love/page/2/'), selectorFor('quotes')), [], 'the last tag page has no next');

    const authors = hrefs(fixture('/page/1/'), selectorFor('author'));
    assert.equal(authors.length, 10);
    assert.equal(authors[0], '/author/Albert-Einstein');
});

test('browser: /js/page/1/ rendered in Chromium yields the same quotes as /page/1/', async (t) => {
    const executablePath = findChromium();
    if (!executablePath) {
        t.skip('no Chromium found (set CHROMIUM_PATH or install chromium)');
        return;
    }
    const server = await startStaticSite(FIXTURES);
    const browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
    try {
        const page = await browser.newPage();
        await page.goto(`${server.url}/js/page/1/`);
        await page.waitForSelector(route('quotes').waitFor ?? 'div.quote', { timeout: 15_000 });
        const rendered = load(await page.content());
        const url = new URL(page.url());

        const quotes = extractQuotes(rendered, { url, label: 'quotes', renderer: 'browser', userData: {} });
        assert.equal(quotes.length, 10);
        assert.equal(quotes[0]?.author, 'Albert Einstein');
        assert.equal(quotes.flatMap((quote) => quote.tags).length, 30);
        for (const quote of quotes) assert.ok(route('quotes').schema?.safeParse(quote).success, JSON.stringify(quote));
        // The script renders no "(about)" links, so everything but authorUrl matches the static page.
        const withoutUrl = ({ text, author, tags }: Quote) => ({ text, author, tags });
        const staticQuotes = extractQuotes(fixture('/page/1/'), context('/page/1/', 'quotes'));
        assert.deepEqual(quotes.map(withoutUrl), staticQuotes.map(withoutUrl));
        assert.ok(server.requests.includes('/static/jquery.js'), 'the page loaded jQuery from the test server');
    } finally {
        await browser.close();
        await server.close();
    }
});
