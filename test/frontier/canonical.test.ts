import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { load } from 'cheerio';

import { pageUrls } from '../../src/frontier/canonical.js';

/** What the CSS selectors `base[href]` and `link[rel="canonical"]` pick, which pageUrls finds by walking the tree. */
function bySelectors(html: string): { base?: string; canonical?: string } {
    const $ = load(html);
    return { base: $('base[href]').first().attr('href'), canonical: $('link[rel="canonical"]').first().attr('href') };
}

describe('pageUrls', () => {
    it('resolves the canonical URL against <base href> and normalizes it', () => {
        const html =
            '<html><head><base href="/shop/"><link rel="canonical" ' +
            'href="item?utm_source=x&id=7"></head><body></body></html>';
        const { base, canonical } = pageUrls(load(html), 'https://a.example/x/y');
        assert.equal(base.href, 'https://a.example/shop/');
        assert.equal(canonical, 'https://a.example/shop/item?id=7');
    });

    it('takes the page URL as base, and no canonical URL, when the page declares neither', () => {
        const { base, canonical } = pageUrls(load('<p>no head</p>'), 'https://a.example/x');
        assert.equal(base.href, 'https://a.example/x');
        assert.equal(canonical, undefined);
    });

    it('falls back to the page URL when <base href> is not a URL', () => {
        assert.equal(
            pageUrls(load('<base href="http://[bad">'), 'https://a.example/x').base.href,
            'https://a.example/x',
        );
    });

    it('picks the same elements as the selectors: the first in document order, anywhere, rel in any case', () => {
        const pages = [
            '<head><base><base href="/b/"><link rel="stylesheet" href="/s.css"></head>' +
                '<body><link REL="Canonical" HREF="/c"><link rel="canonical" href="/d"></body>',
            '<link rel="canonical" href="/first"><base href="/b1/"><base href="/b2/">',
            '<base href=""><link rel="canonical" href="">',
            '<link rel="alternate canonical" href="/no"><link rel="next" href="/no">',
        ];
        for (const html of pages) {
            const expected = bySelectors(html);
            const base = new URL(expected.base ?? 'https://a.example/p', 'https://a.example/p');
            const expectedCanonical = expected.canonical ? new URL(expected.canonical, base).href : undefined;
            const found = pageUrls(load(html), 'https://a.example/p');
            assert.equal(found.base.href, base.href, html);
            assert.equal(found.canonical, expectedCanonical, html);
        }
    });
});
