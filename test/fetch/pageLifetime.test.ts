/**
 * A fetched page's HTML dies with its parse: the HTTP stage does not hold it while the page's raw
 * write and outcome commit are pending. An async function suspended at an `await` keeps its
 * registers, the page's HTML among them, until it resumes; at ~50 pages in flight each such page
 * outlived young collections and was promoted (src/fetch/http/httpStage.ts, parse/pageHandler.ts).
 *
 * One `crawl()` of a loopback page, with the raw store's write held until the heap has been looked
 * at. The HTML is found in a heap snapshot by a comment at its start that no string of this process
 * holds otherwise (it is served as bytes).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { getHeapSnapshot, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createLogger } from '../../src/monitor/logger.js';
import { crawl } from '../../src/run.js';
import { defineSite } from '../../src/site/site.js';
import { ArchiveStore } from '../../src/store/archive/archiveStore.js';
import type { RawPage } from '../../src/store/archive/rawPage.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** The start of a page, as bytes: no JS string of this process holds it until a page is decoded. */
function pageStart(marker: string): Buffer {
    return Buffer.concat([Buffer.from('<!--'), Buffer.from(marker)]);
}

/**
 * Whether, after a full collection, a string of the heap starts with
 * `needle` (a snapshot names each string by its first 1,024 characters).
 */
async function heapHolds(needle: Buffer): Promise<boolean> {
    gc();
    const chunks: Buffer[] = [];
    for await (const chunk of getHeapSnapshot()) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).includes(needle);
}

it('the heap look finds a string that is held (the control for the test below)', async () => {
    const marker = randomUUID();
    // Decoded from bytes, as the stage decodes a page: a flat string (a snapshot names a concatenation by its parts).
    const held = [Buffer.concat([pageStart(marker), Buffer.from('--><html></html>')]).toString('utf8')];
    assert.equal(await heapHolds(pageStart(marker)), true);
    held.length = 0;
});

it("the HTTP stage holds no page's HTML while its raw write and its outcome are pending", async (t) => {
    const marker = randomUUID();
    const page = Buffer.concat([
        pageStart(marker),
        Buffer.from('--><html><head><title>one page</title></head><body><h1>one page</h1></body></html>'),
    ]);
    const server = createServer((request, response) => {
        if (request.url !== '/') return void response.writeHead(404).end();
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const storageDir = await mkdtemp(join(tmpdir(), 'dragnet-page-lifetime-'));
    t.after(async () => {
        await new Promise((resolve) => server.close(resolve));
        await rm(storageDir, { recursive: true, force: true });
    });
    const site = defineSite({
        name: 'page-lifetime',
        startUrls: [`http://127.0.0.1:${(server.address() as AddressInfo).port}/`],
        routes: { page: { match: () => true, extract: ($) => ({ title: $('h1').text() }) } },
    });
    let looked: Promise<boolean> | undefined;
    const put = ArchiveStore.prototype.put;
    t.after(() => {
        ArchiveStore.prototype.put = put;
    });
    // The page is parsed, and its handler has returned to the stage, long before the look.
    ArchiveStore.prototype.put = function (this: ArchiveStore, raw: RawPage) {
        const written = put.call(this, raw);
        looked ??= new Promise((resolve) => setTimeout(() => resolve(heapHolds(pageStart(marker))), 200));
        return written.then(() => looked).then(() => undefined);
    };
    const { summary } = await crawl({
        site,
        startUrls: [],
        storageDir,
        chromiumPath: undefined,
        parseWorkers: 0,
        progressIntervalSecs: 3600,
        log: createLogger({ level: 'silent' }),
    });

    assert.ok(looked, 'the page was fetched and its raw page written');
    assert.equal(await looked, false, "the page's HTML outlived its parse while its write was pending");
    assert.equal(summary.items.stored, 1);
});
