import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';

import { chromium, type Browser } from 'playwright';

import { CHROMIUM_ARGS, findChromium } from '../../../src/fetch/browser/chromium.js';
import { renderedHtml } from '../../../src/fetch/browser/renderedPage.js';

const executablePath = findChromium();

/** A page whose script changes the DOM, with a doctype, entities and text outside ASCII. */
const PAGE = `<!DOCTYPE html><html lang="fr"><head><meta charset="utf-8"><title>Café &amp; thé</title></head>
<body><p id="price">…</p><script>document.getElementById('price').textContent = '12,50 €'; \
document.body.insertAdjacentHTML('beforeend', '<ul><li>ajouté</li></ul>');</script></body></html>`;

describe('renderedHtml with Chromium', { skip: executablePath ? false : 'no Chromium found' }, () => {
    let browser: Browser;
    let server: Server;
    let url: string;

    before(async () => {
        server = createServer((request, response) => {
            response.setHeader('content-type', 'text/html; charset=utf-8');
            response.end(request.url === '/' ? PAGE : '<!DOCTYPE html><p>next</p>');
        });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS, headless: true });
    });
    after(async () => {
        await browser?.close();
        server?.close();
    });

    it("gives the document as rendered, the same string as Playwright's page.content()", async () => {
        const page = await browser.newPage();
        const response = await page.goto(`${url}/`);
        const html = await renderedHtml(page, response);
        assert.equal(html, await page.content());
        assert.ok(html.startsWith('<!DOCTYPE html>'), html.slice(0, 40));
        assert.match(html, /<p id="price">12,50 €<\/p>/);
        assert.match(html, /<li>ajouté<\/li>/);
        await page.close();
    });

    it('reads the document the page has moved to', async () => {
        const page = await browser.newPage();
        const first = await page.goto(`${url}/`);
        assert.match(await renderedHtml(page, first), /Café/);
        const second = await page.goto(`${url}/next`);
        assert.equal(
            await renderedHtml(page, second),
            '<!DOCTYPE html><html><head></head><body><p>next</p></body></html>',
        );
        await page.close();
    });
});
