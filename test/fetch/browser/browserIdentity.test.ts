/**
 * The browser stage's requests claim the Chrome release of the Chromium that renders them: the user
 * agent and client hints of the navigation, and what the page's own scripts read, name its major
 * version (issue 49: they claimed the header generator's Chrome versions while Chromium 156 rendered).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { findChromium } from '../../../src/fetch/browser/chromium.js';
import { createLogger } from '../../../src/monitor/logger.js';
import { crawl } from '../../../src/run.js';
import { defineSite } from '../../../src/site/site.js';
import { storeNames } from '../../../src/store/datasets.js';
import type { StoredItem } from '../../../src/store/records.js';
import { readDataset } from '../../helpers/stores.js';

const chromiumPath = findChromium();

/** The page writes what its scripts see of the browser: they run in the same identity as its request. */
const PAGE = `<!DOCTYPE html><html><head><title>identity</title></head><body><p id="ua"></p><p id="brands"></p>
<script>
document.getElementById('ua').textContent = navigator.userAgent;
document.getElementById('brands').textContent =
    (navigator.userAgentData?.brands ?? []).map((b) => b.brand + '/' + b.version).join(',');
</script></body></html>`;

it("claims the version of the Chromium that renders, in its headers and to the page's scripts", {
    skip: chromiumPath ? false : 'no Chromium found',
}, async (t) => {
    const major = /(\d+)\.\d+\.\d+\.\d+/.exec(execFileSync(chromiumPath!, ['--version'], { encoding: 'utf8' }))?.[1];
    assert.ok(major, 'Chromium gives its version');
    const navigations: IncomingHttpHeaders[] = [];
    const server = createServer((request, response) => {
        if (request.url !== '/') return void response.writeHead(404).end();
        navigations.push(request.headers);
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const storageDir = await mkdtemp(join(tmpdir(), 'dragnet-browser-identity-'));
    t.after(async () => {
        await new Promise((resolve) => server.close(resolve));
        await rm(storageDir, { recursive: true, force: true });
    });
    const site = defineSite({
        name: 'browser-identity',
        startUrls: [`http://127.0.0.1:${(server.address() as AddressInfo).port}/`],
        routes: {
            page: {
                match: () => true,
                render: 'always',
                extract: ($) => ({ userAgent: $('#ua').text(), brands: $('#brands').text() }),
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

    const [item] = await readDataset<StoredItem & { userAgent: string; brands: string }>(
        storageDir,
        storeNames(site.name).items,
    );
    assert.ok(item, 'the page was rendered and stored');
    const [navigation] = navigations;
    assert.ok(navigation);
    const claims = new RegExp(` Chrome/${major}\\.0\\.0\\.0 `);
    assert.match(navigation['user-agent'] ?? '', claims);
    assert.equal(item.userAgent, navigation['user-agent']);
    // Every brand but the GREASE one names the release; the hints and the user agent agree.
    const hinted = [...String(navigation['sec-ch-ua'] ?? '').matchAll(/"([^"]+)";v="(\d+)"/g)];
    assert.ok(hinted.length >= 2, `sec-ch-ua: ${navigation['sec-ch-ua']}`);
    for (const [, brand, version] of hinted) if (!/Not.A.Brand/.test(brand!)) assert.equal(version, major, brand);
    const seen = item.brands.split(',').filter((entry) => !/Not.A.Brand/.test(entry));
    assert.ok(seen.length >= 1);
    for (const entry of seen) assert.equal(entry.split('/')[1], major, entry);
});
