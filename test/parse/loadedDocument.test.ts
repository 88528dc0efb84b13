/**
 * readDocument: a page read through cheerio and released after, so that its DOM dies young (see
 * src/parse/loadedDocument.ts for why cheerio's own load keeps it alive into the old generation).
 */
import assert from 'node:assert/strict';
import { type CheerioAPI, load } from 'cheerio';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { readDocument } from '../../src/parse/loadedDocument.js';

const loop = fileURLToPath(new URL('./fixtures/promotionLoop.ts', import.meta.url));
const PAGES = 1_500;

/** Bytes V8 promoted to the old generation per page over the child's loop, from its `--trace-gc-nvp` lines. */
async function promotedPerPage(mode: 'parsePage' | 'cheerio'): Promise<number> {
    const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--trace-gc-nvp', '--import', 'tsx', loop, mode, String(PAGES)],
        { maxBuffer: 64 * 1024 * 1024 },
    );
    const lines = stdout.split('\n');
    const inLoop = lines.slice(
        lines.indexOf('loop starts'),
        lines.findIndex((line) => line.startsWith('loop ends')),
    );
    assert.ok(inLoop.length > 1, `the child ran its loop: ${stdout.slice(-300)}`);
    const promoted = inLoop
        .map((line) => Number(/\bpromoted=(\d+)/.exec(line)?.[1] ?? 0))
        .reduce((sum, bytes) => sum + bytes, 0);
    return promoted / PAGES;
}

describe('readDocument', () => {
    it('gives what the read returns, and empties the document after it', () => {
        let $kept: CheerioAPI | undefined;
        const title = readDocument('<html><body><h1>Title</h1><p>text</p></body></html>', undefined, ($) => {
            $kept = $;
            return $('h1').text();
        });
        assert.equal(title, 'Title');
        assert.equal($kept!.root().children().length, 0);
        assert.equal($kept!('h1').length, 0);
    });

    it('empties the document when the read throws, and throws its error', () => {
        let $kept: CheerioAPI | undefined;
        assert.throws(
            () =>
                readDocument('<p>a</p>', undefined, ($) => {
                    $kept = $;
                    throw new Error('extractor failed');
                }),
            /extractor failed/,
        );
        assert.equal($kept!.root().children().length, 0);
    });

    it('finds with $(selector) and .find(selector) what cheerio finds, its own selectors and relative ones too', () => {
        const html = `<html><head><title>T</title></head><body>
            <ul id="menu"><li class="x">1<ul><li>1.1</li></ul></li><li>2</li></ul>
            <div><p class="lead">p</p><p>q</p><ul><li>3</li></ul></div></body></html>`;
        const selectors = [
            'li',
            'ul > li',
            'li, p',
            'li:has(ul)',
            'p:not(.lead)',
            'li:contains(2)',
            'li:first',
            'li:eq(2)',
            'p:last',
            '> li',
            ':scope > li',
            '+ div',
            '~ div',
            'html',
            'none',
        ];
        const read = ($: CheerioAPI) =>
            selectors.flatMap((selector) =>
                [$(selector), $('#menu').find(selector), $('div').find(selector), $(selector, 'div')].map((found) =>
                    found.toArray().map((element) => $.html(element)),
                ),
            );
        assert.deepEqual(readDocument(html, undefined, read), read(load(html)));
        assert.equal(
            readDocument(html, undefined, ($) => $('li').find('li').end().length),
            4,
            '.end() goes back to what .find() searched',
        );
        assert.equal(
            readDocument(html, undefined, ($) => $('<p>new</p>').text()),
            'new',
            'HTML still makes elements',
        );
    });

    it(`lets a parsed page's DOM die young: parsePage promotes \
a fraction of what a bare cheerio.load does`, async () => {
        const [parsed, bare] = await Promise.all([promotedPerPage('parsePage'), promotedPerPage('cheerio')]);
        // A real-weight product page's DOM is ~150 KB; measured: ~3
        // KB a page through parsePage, ~150 KB through a bare load.
        assert.ok(
            bare > 50_000,
            `a bare cheerio.load promotes its DOM (${Math.round(bare)} B a ` +
                `page); if it no longer does, readDocument's release may be unneeded`,
        );
        assert.ok(parsed < 20_000, `parsePage promoted ${Math.round(parsed)} B a page`);
    });
});
