/**
 * What the archive keeps of a page the browser stage fetched itself: the redirect Chromium followed
 * as a response of its own (no page), the document it loaded as the page's response with its bytes,
 * and the DOM it rendered as a conversion record referring to that response.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { findChromium } from '../../../src/fetch/browser/chromium.js';
import { createLogger } from '../../../src/monitor/logger.js';
import { crawl } from '../../../src/run.js';
import { defineSite } from '../../../src/site/site.js';
import { ArchiveStore, archiveDirOf } from '../../../src/store/archive/archiveStore.js';
import { type ArchivedRecord, warcFileRecords } from '../../../src/store/archive/warcReader.js';

const chromiumPath = findChromium();

/** The script's paragraph is in the DOM the browser rendered, not in the document the server sent. */
const PAGE =
    '<!DOCTYPE html><html><head><title>moved</title></head><body><h1>Moved page</h1>' +
    "<script>document.body.insertAdjacentHTML('beforeend', '<p id=\"late\">added by script</p>')</script></body></html>";

it('archives the redirect Chromium followed, the document it loaded and the DOM it rendered', {
    skip: chromiumPath ? false : 'no Chromium found',
}, async (t) => {
    const server = createServer((request, response) => {
        if (request.url === '/old') return void response.writeHead(301, { location: '/new' }).end();
        if (request.url === '/new') return void response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
        response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const storageDir = await mkdtemp(join(tmpdir(), 'dragnet-browser-archive-'));
    t.after(async () => {
        await new Promise((resolve) => server.close(resolve));
        await rm(storageDir, { recursive: true, force: true });
    });
    const site = defineSite({
        name: 'browser-archive',
        startUrls: [`${origin}/old`],
        routes: {
            page: {
                match: () => true,
                render: 'always',
                extract: ($) => ({ heading: $('h1').text(), late: $('#late').text() }),
            },
        },
    });
    await crawl({
        site,
        startUrls: [],
        storageDir,
        chromiumPath,
        browserConcurrency: 1,
        respectRobotsTxt: false,
        progressIntervalSecs: 3600,
        log: createLogger({ level: 'silent' }),
    });

    const dir = join(archiveDirOf(storageDir), site.name);
    const records: ArchivedRecord[] = [];
    for (const file of (await readdir(dir)).filter((name) => name.endsWith('.warc.gz')))
        for await (const record of warcFileRecords(join(dir, file))) records.push(record);
    const responses = records.filter((record) => record.type === 'response');
    assert.deepEqual(
        responses.map((record) => `${record.status} ${record.targetUri}`),
        [`301 ${origin}/old`, `200 ${origin}/new`],
        'the redirect first, then the page',
    );
    const [redirect, loaded] = responses as [ArchivedRecord, ArchivedRecord];
    assert.equal(redirect.httpHeaders?.location, '/new');
    assert.equal(redirect.truncated, 'unspecified', 'Chromium keeps no body of a redirect');
    assert.equal(loaded.content.toString(), PAGE, 'the document as the server sent it');
    const conversion = records.find((record) => record.type === 'conversion');
    assert.equal(conversion?.refersTo, loaded.id);
    assert.match(conversion?.content.toString() ?? '', /<p id="late">added by script<\/p>/);
    const metadata = records.filter((record) => record.type === 'metadata');
    assert.deepEqual(
        metadata.map((record) => record.refersTo),
        [loaded.id],
        'one page, and the redirect is none',
    );

    const pages = [];
    for await (const page of (
        await ArchiveStore.open({ archiveDir: archiveDirOf(storageDir), site: site.name })
    ).pages())
        pages.push(page);
    assert.deepEqual(
        pages.map((page) => [page.url, page.finalUrl, page.renderer, page.status]),
        [[`${origin}/old`, `${origin}/new`, 'browser', 200]],
    );
    assert.match(pages[0]?.body ?? '', /added by script/, 'the page read back is the rendered DOM');
});
