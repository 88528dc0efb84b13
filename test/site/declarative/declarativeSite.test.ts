/**
 * Declarative sites (src/declarative/): what a file of selectors reads off a page, and how a file
 * that is wrong is refused — one line naming the file, the line and column, and the key path.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { load } from 'cheerio';
import { ConfigError } from '../../../src/options/configError.js';
import { readDeclarativeSite } from '../../../src/site/declarative/declarativeSite.js';
import type { PageContext, Site } from '../../../src/site/site.js';
import { runCli } from '../../helpers/cli.js';

let dir: string;
let written = 0;

before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dragnet-declarative-site-'));
});
after(() => rm(dir, { recursive: true, force: true }));

/** Writes `text` to a new file with the extension and returns its path. */
async function siteFile(text: string, extension = '.yaml'): Promise<string> {
    const file = join(dir, `site-${++written}${extension}`);
    await writeFile(file, text);
    return file;
}

/** A site file: `name`, `startUrls`, then the routes as given (indented as under `routes:`). */
const withRoutes = (routes: string) => `name: shop\nstartUrls: ['http://127.0.0.1:9/']\nroutes:\n${routes}`;

/** The one-line ConfigError reading `file` gives, after its `file:` prefix. */
async function refusal(file: string): Promise<string> {
    try {
        readDeclarativeSite(file);
    } catch (error) {
        assert.ok(error instanceof ConfigError, String(error));
        assert.ok(!error.message.includes('\n'), error.message);
        assert.ok(error.message.startsWith(`${file}:`), error.message);
        return error.message.slice(file.length + 1);
    }
    assert.fail(`${file} was accepted`);
}

function context(url: string, label: string): PageContext {
    return { url: new URL(url), label, renderer: 'http', userData: {} };
}

function extract(site: Site, label: string, html: string, url = 'https://shop.example/p/1') {
    return site.routes.get(label)!.extract!(load(html), context(url, label));
}

describe('a declarative file that is wrong is one line at its line, column and key', () => {
    it('an unknown key, at the key', async () => {
        const file = await siteFile(withRoutes('  product:\n    fields:\n      title:\n        selecter: h1\n'));
        assert.equal(await refusal(file), '7:9: routes.product.fields.title: unknown key "selecter"');
    });

    it('an unknown key in a flow map, and before what it leaves missing', async () => {
        const file = await siteFile(withRoutes('  product:\n    fields:\n      title: { selecter: h1 }\n'));
        assert.equal(await refusal(file), '6:16: routes.product.fields.title: unknown key "selecter"');
    });

    it('a missing required key, at the key of the object that lacks it', async () => {
        const file = await siteFile(withRoutes('  product:\n    fields:\n      image: { attr: src }\n'));
        assert.equal(await refusal(file), '6:7: routes.product.fields.image: missing key "selector"');
        assert.equal(
            await refusal(await siteFile('name: shop\nroutes: { page: {} }\n')),
            '1:1: missing key "startUrls"',
        );
    });

    it('a YAML syntax error, and a duplicate key', async () => {
        assert.equal(
            await refusal(await siteFile(withRoutes('  product:\n    fields:\n      title: h1: x\n'))),
            '6:14: Nested mappings are not allowed in compact mappings',
        );
        assert.equal(
            await refusal(await siteFile(withRoutes('  product:\n\tfields: {}\n'))),
            '5:1: Tabs are not allowed as indentation',
        );
        assert.match(await refusal(await siteFile(withRoutes('  a: {}\n  a: {}\n'))), /^5:3: .*unique/);
    });

    it('a JSON file, with lines too', async () => {
        const json = (fields: string) =>
            `{\n  "name": "shop",\n  "startUrls": ["http://127.0.0.1:9/"],\n` +
            `  "routes": {\n    "product": {\n      "fields": ${fields}\n    }\n  }\n}\n`;
        assert.equal(
            await refusal(await siteFile(json('{ "title": { "selector": "h1", "requird": true } }'), '.json')),
            '6:48: routes.product.fields.title: unknown key "requird"',
        );
        // The comma missing after "h1" is found at the key that follows it.
        assert.equal(
            await refusal(await siteFile(json('{ "title": "h1" "price": ".price" }'), '.json')),
            '6:33: Unexpected double-quoted-scalar token',
        );
    });

    it('a CSS selector that does not compile', async () => {
        const file = await siteFile(
            withRoutes('  product:\n    fields:\n      title: h1\n      price: { selector: "p.price:first" }\n'),
        );
        assert.equal(
            await refusal(file),
            '7:26: routes.product.fields.price.selector: invalid CSS ' +
                'selector "p.price:first": Unknown pseudo-class :first',
        );
        const enqueue = await siteFile(
            withRoutes('  listing:\n    enqueue:\n      - { selector: "a[href", label: listing }\n'),
        );
        assert.match(
            await refusal(enqueue),
            /^6:21: routes\.listing\.enqueue\[0\]\.selector: invalid CSS selector "a\[href"/,
        );
    });

    it('a regular expression that does not compile, in a transform or a match', async () => {
        const transform = await siteFile(
            withRoutes(
                '  product:\n    fields:\n      sku:\n        selector: .sku\n' +
                    "        transforms: [trim, { regex: '(\\d+' }]\n",
            ),
        );
        assert.match(
            await refusal(transform),
            new RegExp(
                String.raw`^8:37: routes\.product\.fields\.sku\.transforms\[1\]\.regex: ` +
                    'Invalid regular expression: .*Unterminated group',
            ),
        );
        const match = await siteFile(withRoutes("  product:\n    match: { path: ['^/p/', '^/item/[' ] }\n"));
        assert.match(
            await refusal(match),
            /^5:29: routes\.product\.match\.path\[1\]: Invalid regular expression: .*Unterminated character class/,
        );
    });

    it('a whole-URL match written as a path pattern, which could never match', async () => {
        const file = await siteFile(withRoutes("  product: { match: ['^https://shop\\.example/p/', '^/p/'] }\n"));
        assert.equal(
            await refusal(file),
            '4:51: routes.product.match[1]: ^/p/ is tested against the whole URL ' +
                '(https://…), which never starts with /: write match: { path: ^/p/ }',
        );
    });

    it('an enqueue rule to a route the file does not have', async () => {
        const file = await siteFile(
            withRoutes(
                '  listing:\n    enqueue:\n      - selector: a.product\n' +
                    '        label: prodcut\n  product:\n    fields: { title: h1 }\n',
            ),
        );
        assert.equal(
            await refusal(file),
            '7:16: routes.listing.enqueue[0].label: no route "prodcut" to enqueue links to (routes: listing, product)',
        );
    });

    it('transforms that do not fit one another or the type, and constraints of another type', async () => {
        const field = (lines: string) =>
            withRoutes(`  product:\n    fields:\n      price:\n        selector: .price\n${lines}`);
        assert.equal(
            await refusal(await siteFile(field("        transforms: [{ matches: 'x' }, number]\n"))),
            '8:40: routes.product.fields.price.transforms[1]: number takes text, and the value is a boolean by then',
        );
        assert.equal(
            await refusal(await siteFile(field('        type: number\n'))),
            '8:15: routes.product.fields.price.type: type number ' +
                'does not fit the value, which is text after no transform',
        );
        assert.equal(
            await refusal(await siteFile(field('        transforms: [price]\n        minLength: 1\n'))),
            '9:20: routes.product.fields.price.minLength: minLength ' +
                'is for string and url fields, and this one is number',
        );
        assert.equal(
            await refusal(await siteFile(field('        transforms: [trimm]\n'))),
            '8:22: routes.product.fields.price.transforms[0]: unknown transform ' +
                '"trimm" (the named ones: trim, number, price, absoluteUrl)',
        );
        assert.equal(
            await refusal(await siteFile(field("        transforms: [{ regex: 'x', map: { a: 1 } }]\n"))),
            '8:22: routes.product.fields.price.transforms[0]: one transform per list item: regex and map are two',
        );
    });

    it('a value of the wrong kind says what the key may be', async () => {
        assert.equal(
            await refusal(await siteFile(withRoutes('  product:\n    render: sometimes\n'))),
            '5:13: routes.product.render: Invalid option: expected one of "auto"|"never"|"always"',
        );
        assert.match(
            await refusal(await siteFile(withRoutes('  product:\n    fields: { title: 3 }\n'))),
            /^5:22: routes\.product\.fields\.title: a field is a CSS selector, or an object/,
        );
    });

    it('from the command line: exit 2 and that one line', async () => {
        const file = await siteFile(withRoutes('  product:\n    fields:\n      title:\n        selecter: h1\n'));
        const result = await runCli(['--site', file, '--storage-dir', join(dir, 'storage')]);
        assert.equal(result.code, 2, result.stderr);
        assert.equal(result.stderr, `dragnet: ${file}:7:9: routes.product.fields.title: unknown key "selecter"\n`);
    });
});

describe('what a declarative route reads', () => {
    it(`a shorthand field is the text of its selector's first match, \
collapsed and trimmed; a field not found is left out`, async () => {
        const site = readDeclarativeSite(
            await siteFile(withRoutes('  product:\n    fields: { title: h1, subtitle: h2 }\n')),
        );
        assert.deepEqual(extract(site, 'product', '<h1>\n  A   <b>big</b>\n chair </h1><h1>second</h1>'), {
            title: 'A big chair',
        });
        assert.equal(site.routes.get('product')!.minRecords, 1);
    });

    it(`one record per \`records\` match, fields read within it, \`all\` \
and \`split\` as lists, empty when nothing was found`, async () => {
        const site = readDeclarativeSite(
            await siteFile(
                withRoutes(
                    [
                        '  quotes:',
                        '    records: div.quote',
                        '    fields:',
                        '      text: { selector: .text, required: true }',
                        '      tags: { selector: a.tag, all: true, required: true }',
                        '      keywords: { selector: meta, attr: content, transforms: [{ split: "," }] }',
                        '',
                    ].join('\n'),
                ),
            ),
        );
        const html =
            '<div class="quote"><span class="text"> One </span><a class="tag">a</a>' +
            '<a class="tag"> b </a><meta content="x, y,,z"></div>' +
            '<div class="quote"><span class="text">Two</span></div>';
        const records = extract(site, 'quotes', html) as Record<string, unknown>[];
        assert.deepEqual(records, [
            { text: 'One', tags: ['a', 'b'], keywords: ['x', 'y', 'z'] },
            { text: 'Two', tags: [], keywords: [] },
        ]);
        const schema = site.routes.get('quotes')!.schema!;
        assert.deepEqual(
            records.map((record) => schema.safeParse(record).success),
            [true, false],
            'a required list needs an item',
        );
        assert.equal(schema.safeParse({ text: 'One', tags: 'a', keywords: [] }).success, false);
    });

    it('a missing value stays missing through the transforms, and a required field then fails the schema', async () => {
        const site = readDeclarativeSite(
            await siteFile(
                withRoutes(
                    [
                        '  product:',
                        '    fields:',
                        '      inStock: { selector: .stock, transforms: [{ ' +
                            'matches: "in stock", flags: i }], required: true }',
                        '      size: { selector: .size, transforms: [{ map: { S: small, M: medium } }] }',
                        '',
                    ].join('\n'),
                ),
            ),
        );
        assert.deepEqual(extract(site, 'product', '<p class="stock">In Stock</p><p class="size">M</p>'), {
            inStock: true,
            size: 'medium',
        });
        assert.deepEqual(extract(site, 'product', '<p class="stock">Sold out</p><p class="size">XL</p>'), {
            inStock: false,
        });
        const blank = extract(site, 'product', '<p class="other">In stock</p>');
        assert.deepEqual(blank, {});
        assert.equal(site.routes.get('product')!.schema!.safeParse(blank).success, false);
    });

    it("an absolute URL resolves against the page's <base href>, as its links do", async () => {
        const site = readDeclarativeSite(
            await siteFile(
                withRoutes(
                    '  product:\n    fields: { image: { selector: img, attr: src, transforms: [absoluteUrl] } }\n',
                ),
            ),
        );
        assert.deepEqual(extract(site, 'product', '<img src="a.jpg">'), { image: 'https://shop.example/p/a.jpg' });
        assert.deepEqual(extract(site, 'product', '<base href="/media/"><img src="a.jpg">'), {
            image: 'https://shop.example/media/a.jpg',
        });
        const schema = site.routes.get('product')!.schema!;
        assert.equal(schema.safeParse({ image: 'a.jpg' }).success, false, 'an absoluteUrl field is a url');
    });

    it("match: one pattern is a RegExp on the whole URL, a list any of them, `path` the URL's path only", async () => {
        const site = readDeclarativeSite(
            await siteFile(
                withRoutes(
                    [
                        "  product: { match: '^https://shop\\.example/p/\\d+$' }",
                        "  listing: { match: ['/list$', '/list\\?page=\\d+$'] }",
                        "  help: { match: { path: '^/help/' } }",
                        '',
                    ].join('\n'),
                ),
            ),
        );
        assert.ok(site.routes.get('product')!.match instanceof RegExp);
        const label = (url: string) => site.routeFor(undefined, new URL(url))?.label;
        assert.equal(label('https://shop.example/p/12'), 'product');
        assert.equal(label('http://127.0.0.1/p/12'), undefined);
        assert.equal(label('http://127.0.0.1/list?page=2'), 'listing');
        assert.equal(label('http://127.0.0.1/help/faq?q=1'), 'help');
        assert.equal(label('http://127.0.0.1/x/help/'), undefined);
    });

    it('passes the site and route options through to defineSite', async () => {
        const site = readDeclarativeSite(
            await siteFile(
                [
                    '{ "name": "shop", "startUrls": ["http://127.0.0.1:9/"], ' +
                        '"allowedDomains": ["cdn.example"], "trackingParams": ["sid"],',
                    '  "maxLinksPerPage": 50, "headers": { "Authorization": ' +
                        '"Bearer x" }, "maxRate": 2, "maxConcurrency": 3,',
                    '  "proxyTiers": [{ "name": "direct", "proxyUrls": "direct" ' +
                        '}], "sitemaps": ["http://127.0.0.1:9/sitemap.xml"],',
                    '  "routes": { "page": { "match": "/", "render": "always", ' +
                        '"waitFor": "#app", "waitUntil": "fields", "minRecords": 0,',
                    '    "contentTypes": ["text/html"], "fields": { "title": "h1" } } } }',
                ].join('\n'),
                '.json',
            ),
        );
        const { routes, routeFor, ...options } = site;
        assert.equal(typeof routeFor, 'function');
        assert.deepEqual(options, {
            name: 'shop',
            startUrls: ['http://127.0.0.1:9/'],
            allowedDomains: ['cdn.example'],
            trackingParams: ['sid'],
            maxLinksPerPage: 50,
            headers: { Authorization: 'Bearer x' },
            maxRate: 2,
            maxConcurrency: 3,
            proxyTiers: [{ name: 'direct', proxyUrls: 'direct' }],
            sitemaps: ['http://127.0.0.1:9/sitemap.xml'],
        });
        const { render, waitFor, waitUntil, minRecords, contentTypes } = routes.get('page')!;
        assert.deepEqual(
            { render, waitFor, waitUntil, minRecords, contentTypes },
            { render: 'always', waitFor: '#app', waitUntil: 'fields', minRecords: 0, contentTypes: ['text/html'] },
        );
    });
});
