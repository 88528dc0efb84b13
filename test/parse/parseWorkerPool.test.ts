/**
 * The parse workers against route code that hangs (fixtures/failingSite.ts, loaded by path as a
 * crawl loads a site): the hung page ends as `extractor-timeout` at the limit, its worker is
 * replaced, the pages waiting behind it are parsed elsewhere, and the other workers never stop.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createPageParser, type PageParser } from '../../src/parse/pageParser.js';
import type { PageToParse, ParsedPage } from '../../src/parse/parsePage.js';
import { loadSite } from '../../src/site/sites.js';

const LIMIT_SECS = 1;
const site = await loadSite(fileURLToPath(new URL('fixtures/failingSite.ts', import.meta.url)));
const route = site.routes.get('product')!;

const at = (path: string): PageToParse => ({
    html: `<html><body><h1>title of ${path}</h1></body></html>`,
    finalUrl: `http://127.0.0.1:9${path}`,
    renderer: 'http',
    userData: {},
});

/** A pool whose workers have loaded the site (a worker's time starts then, and booting takes a second or so). */
async function warmPool(t: { after: (fn: () => Promise<void>) => void }, workers: number): Promise<PageParser> {
    const parser = createPageParser(site, workers, { extractTimeoutSecs: LIMIT_SECS });
    t.after(() => parser.close());
    await Promise.all(Array.from({ length: workers * 2 }, (_, i) => parser.parse(route, at(`/warm/${i}`))));
    return parser;
}

/** The page's parse, and when it settled (ms since `since`). */
async function timed(parsing: Promise<ParsedPage>, since: number): Promise<{ parsed: ParsedPage; ms: number }> {
    const parsed = await parsing;
    return { parsed, ms: performance.now() - since };
}

const titleOf = (parsed: ParsedPage) => parsed.verdict.valid[0]?.title;

describe('parse workers and route code that hangs', () => {
    it(`end the hung page as extractor-timeout at the limit, and \
parse the pages that waited behind it in a new worker`, async (t) => {
        const parser = await warmPool(t, 1);
        const started = performance.now();
        const hung = timed(parser.parse(route, at('/products/1?hang')), started);
        const waiting = [parser.parse(route, at('/products/2')), parser.parse(route, at('/products/3'))];

        const { parsed, ms } = await hung;
        assert.equal(parsed.verdict.extractorFailed, `extractor-timeout: parsing the page took over ${LIMIT_SECS} s`);
        assert.deepEqual(parsed.verdict.invalid, [
            { record: null, issues: [parsed.verdict.extractorFailed], fields: ['(extract)'] },
        ]);
        assert.deepEqual(parsed.links, []);
        assert.ok(ms >= LIMIT_SECS * 1000 - 50 && ms < LIMIT_SECS * 1000 + 1500, `ended after ${Math.round(ms)} ms`);
        // Not lost, not quarantined for the other page's hang.
        assert.deepEqual((await Promise.all(waiting)).map(titleOf), ['title of /products/2', 'title of /products/3']);
        assert.equal(
            titleOf(await parser.parse(route, at('/products/4'))),
            'title of /products/4',
            'the new worker goes on',
        );
    });

    it('keep parsing in the other workers while one hangs', async (t) => {
        const parser = await warmPool(t, 2);
        const started = performance.now();
        const hung = timed(parser.parse(route, at('/products/1?hang')), started);
        const meanwhile: number[] = [];
        for (let i = 2; i <= 6; i++) {
            const { parsed, ms } = await timed(parser.parse(route, at(`/products/${i}`)), started);
            assert.equal(titleOf(parsed), `title of /products/${i}`);
            meanwhile.push(ms);
        }
        const { parsed, ms } = await hung;
        assert.match(parsed.verdict.extractorFailed ?? '', /^extractor-timeout: /);
        assert.ok(
            meanwhile.every((done) => done < ms),
            `the other pages settled at ${meanwhile.map(Math.round).join(', ')} ` +
                `ms, the hung one at ${Math.round(ms)} ms`,
        );
    });

    it(`time each page from its own turn: two slow pages in one \
worker, each under the limit, are not cut for their sum`, async (t) => {
        const parser = await warmPool(t, 1);
        const holdMs = Math.round(LIMIT_SECS * 1000 * 0.6);
        const pages = await Promise.all([
            parser.parse(route, at(`/products/1?holdMs=${holdMs}`)),
            parser.parse(route, at(`/products/2?holdMs=${holdMs}`)),
        ]);
        assert.deepEqual(pages.map(titleOf), [
            `title of /products/1?holdMs=${holdMs}`,
            `title of /products/2?holdMs=${holdMs}`,
        ]);
    });

    it('fail a hung page when the pool closes, and start no worker after', async (t) => {
        const parser = await warmPool(t, 1);
        const hung = parser.parse(route, at('/products/1?hang'));
        await new Promise((resolve) => setTimeout(resolve, 100));
        await parser.close();
        await assert.rejects(hung, /parse worker exited/);
        await new Promise((resolve) => setTimeout(resolve, LIMIT_SECS * 1000 + 200));
        await assert.rejects(parser.parse(route, at('/products/2')), /closed/);
    });
});
