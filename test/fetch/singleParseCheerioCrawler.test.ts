/**
 * The HTTP stage's crawler parses a page once and hands out the same document as `dom` and `$`,
 * parsed the way Crawlee's CheerioCrawler parses it (htmlparser2, not parse5).
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { Configuration } from '@crawlee/core';
import { SingleParseCheerioCrawler } from '../../src/fetch/singleParseCheerioCrawler.js';

// A fragment: parse5 would wrap it in <html><body> and move the <tr> out of the <p>; htmlparser2 keeps it as written.
const PAGE = '<p class="lede">caf&eacute; <tr><td>cell</td></tr></p><a href="/next">next</a>';

describe('SingleParseCheerioCrawler', () => {
    it('gives `$` and `dom` one document, parsed as Crawlee parses it', async (t) => {
        const site = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE));
        await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
        t.after(() => site.close());

        const seen: { html: number; lede: string; cellInLede: number; sameDocument: boolean; enqueueError?: string }[] = [];
        const crawler = new SingleParseCheerioCrawler(
            {
                async requestHandler({ $, dom, enqueueLinks }) {
                    const enqueueError = await enqueueLinks().then(
                        () => undefined,
                        (error: Error) => error.message,
                    );
                    seen.push({
                        html: $('html').length,
                        lede: $('p.lede').text(),
                        cellInLede: $('p.lede td').length,
                        sameDocument: dom === $.root()[0],
                        enqueueError,
                    });
                },
            },
            new Configuration({ persistStorage: false }),
        );
        await crawler.run([`http://127.0.0.1:${(site.address() as AddressInfo).port}/`]);

        assert.equal(seen.length, 1);
        assert.deepEqual({ ...seen[0], enqueueError: undefined }, { html: 0, lede: 'café cell', cellInLede: 1, sameDocument: true, enqueueError: undefined });
        assert.match(seen[0]!.enqueueError ?? '', /through the frontier/);
    });
});
