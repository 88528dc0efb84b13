import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { blockedUrlPatterns } from '../../../src/fetch/browser/blockedResources.js';

/** CDP's setBlockedURLs matching: the pattern anywhere in the URL, `*` any run of characters. */
const blocks = (patterns: string[], url: string) =>
    patterns.some((pattern) =>
        new RegExp(
            pattern
                .split('*')
                .map((part) => part.replace(/[.?+^$()[\]{}|\\/]/g, '\\$&'))
                .join('.*'),
        ).test(url),
    );

describe('blockedUrlPatterns', () => {
    const patterns = blockedUrlPatterns(['shop.example']);

    it(`blocks stylesheets, images, fonts and media, and the ad \
and analytics hosts, but no page or script of the site`, () => {
        for (const url of [
            'https://shop.example/assets/app.css',
            'https://cdn.shop.example/p/1-400.webp',
            'https://shop.example/f.woff2',
            'https://shop.example/v.mp4',
        ]) {
            assert.ok(blocks(patterns, url), url);
        }
        for (const url of [
            'https://www.google-analytics.com/analytics.js',
            'https://www.googletagmanager.com/gtm.js?id=1',
            'https://static.hotjar.com/c/hotjar-1.js',
            'https://hotjar.com/x',
        ]) {
            assert.ok(blocks(patterns, url), url);
        }
        for (const url of [
            'https://shop.example/products/1',
            'https://shop.example/app.js',
            'https://api.shop.example/price?id=1',
            'https://nothotjar.com/app.js',
        ]) {
            assert.ok(!blocks(patterns, url), url);
        }
    });

    it('leaves a listed host alone when the crawl is of that site', () => {
        const own = blockedUrlPatterns(['www.hotjar.com']);
        assert.ok(!blocks(own, 'https://static.hotjar.com/c/hotjar-1.js'));
        assert.ok(blocks(own, 'https://www.google-analytics.com/analytics.js'));
    });
});
