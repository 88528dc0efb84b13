/**
 * A fetched page's HTML dies with its parse: what the crawl keeps of a page for longer (its links
 * waiting for the frontier, the page waiting for its raw write and its commit) holds no part of it,
 * or V8 promotes every page's HTML (~30 KB a real-weight page, as UTF-16) to the old generation.
 * Measured through promotionLoop.ts, each page a fresh copy of the HTML, as every fetched page is.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { promotedPerPage } from '../helpers/promotion.js';

describe('a page kept past its parse', () => {
    it("keeps none of the HTML in the crawling thread's parse result, whose strings would otherwise be slices of it", async () => {
        const [parsed, sliced] = await Promise.all([promotedPerPage('parser'), promotedPerPage('parsePage-kept')]);
        // Measured: ~4 KB a page through the parser, ~23 KB when parsePage's own result is kept.
        assert.ok(sliced > 15_000, `keeping parsePage's own result keeps the HTML (${Math.round(sliced)} B a page promoted); if not, this test measures nothing`);
        assert.ok(parsed < 10_000, `the parser's result kept ${Math.round(parsed)} B a page`);
    });

    it('keeps none of the HTML in the page handler while the raw write and the commit are pending', async () => {
        const promoted = await promotedPerPage('handle');
        // Measured: ~7 KB a page; ~37 KB when handle() was an async function holding the page.
        assert.ok(promoted < 15_000, `the page handler kept ${Math.round(promoted)} B a page`);
    });
});
