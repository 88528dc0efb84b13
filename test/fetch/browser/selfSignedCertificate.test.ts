/**
 * The browser stage does not verify certificates, as the HTTP stage does not (issue 49): a page of an HTTPS site
 * with a self-signed certificate is rendered and stored, where Chromium refused it (ERR_CERT_AUTHORITY_INVALID,
 * test/fetch/failures/tlsFailures.test.ts). One `crawl()` of one page whose content only a script writes.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:https';
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
import type { DeadLetterEntry } from '../../../src/vocabulary/failure.js';
import { readDataset } from '../../helpers/stores.js';
import { selfSignedCert } from '../../helpers/selfSignedCert.js';

const chromiumPath = findChromium();

const PAGE = `<!DOCTYPE html><html><head><title>self-signed</title></head><body><h1></h1>
<script>document.querySelector('h1').textContent = 'rendered over TLS';</script></body></html>`;

it('renders and stores a page of an HTTPS site whose certificate is self-signed', {
    skip: chromiumPath ? false : 'no Chromium found',
}, async (t) => {
    const server = createServer(selfSignedCert('127.0.0.1'), (request, response) => {
        if (request.url !== '/') return void response.writeHead(404).end();
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const storageDir = await mkdtemp(join(tmpdir(), 'dragnet-self-signed-'));
    t.after(async () => {
        await new Promise((resolve) => server.close(resolve));
        await rm(storageDir, { recursive: true, force: true });
    });
    const site = defineSite({
        name: 'self-signed',
        startUrls: [`https://127.0.0.1:${(server.address() as AddressInfo).port}/`],
        routes: { page: { match: () => true, render: 'always', extract: ($) => ({ title: $('h1').text() }) } },
    });

    const { summary } = await crawl({
        site,
        startUrls: [],
        storageDir,
        chromiumPath,
        browserConcurrency: 1,
        retry: { maxAttempts: 1 },
        progressIntervalSecs: 3600,
        log: createLogger({ level: 'silent' }),
    });

    const names = storeNames(site.name);
    const deadLetters = await readDataset<DeadLetterEntry>(storageDir, names.deadLetter);
    assert.deepEqual(
        deadLetters.map(({ reason, error }) => ({ reason, error })),
        [],
    );
    assert.equal(summary.browser.rendered, 1);
    const items = await readDataset<StoredItem>(storageDir, names.items);
    assert.deepEqual(
        items.map(({ title, _renderer }) => ({ title, _renderer })),
        [{ title: 'rendered over TLS', _renderer: 'browser' }],
    );
});
