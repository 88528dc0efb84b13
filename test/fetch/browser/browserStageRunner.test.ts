/**
 * The browser stage runner (src/fetch/browser/browserStageRunner.ts) stopped while it creates the stage:
 * SIGTERM arriving while Playwright loads for the first escalated page. The stage it then never
 * runs must still be torn down, or its egress proxy keeps listening and the process never exits
 * (a fleet worker hung after its graceful stop: test/distributed/workerKilled.test.ts failed 1 run in
 * 8, and a copy of it with debug logs 3 in 9).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';

import { PlaywrightCrawler } from '@crawlee/playwright';
import { BrowserStageRunner } from '../../../src/fetch/browser/browserStageRunner.js';
import { findChromium } from '../../../src/fetch/browser/chromium.js';
import { Egress } from '../../../src/fetch/egress/egress.js';
import { type EgressProxy, startEgressProxy } from '../../../src/fetch/egress/egressProxy.js';
import { createLogger } from '../../../src/monitor/logger.js';
import { SqliteOutcomes } from '../../../src/store/sqlite/outcomes.js';
import { openSiteStores } from '../../../src/wiring/open.js';

const chromiumPath = findChromium();
const START_URL = 'http://127.0.0.1:9/';

/** Whether something accepts TCP connections at `url`'s port on loopback. */
function listening(url: string): Promise<boolean> {
    return new Promise((resolve) => {
        const socket = connect(Number(new URL(url).port), '127.0.0.1');
        socket.once('connect', () => {
            socket.destroy();
            resolve(true);
        });
        socket.once('error', () => resolve(false));
    });
}

it('tears down a stage whose creation a stop overtook: its egress proxy stops listening, and it renders nothing', {
    skip: chromiumPath ? false : 'no Chromium found',
}, async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'dragnet-stage-runner-'));
    const stores = await openSiteStores({ site: 'stage-runner', storageDir: dir });
    t.after(async () => {
        stores.lock.release();
        await stores.storage.close();
        await rm(dir, { recursive: true, force: true });
    });
    await stores.browserQueue.addRequest({ url: `${START_URL}escalated` });

    let creating!: () => void;
    const createCalled = new Promise<void>((resolve) => (creating = resolve));
    let loaded!: () => void;
    const codeLoaded = new Promise<void>((resolve) => (loaded = resolve));
    let proxy: EgressProxy | undefined;
    const rendered: string[] = [];
    const runner = new BrowserStageRunner({
        queue: stores.browserQueue,
        chromiumPath,
        outcomes: new SqliteOutcomes(stores),
        log: createLogger({ level: 'silent', pretty: false }),
        pollMillis: 10,
        // As browserStage.ts builds it: an egress proxy started with the stage, closed by its teardown.
        createStage: async (executablePath) => {
            creating();
            await codeLoaded;
            const stageProxy = await startEgressProxy(new Egress({ startUrls: [START_URL] }));
            proxy = stageProxy;
            return new (class extends PlaywrightCrawler {
                override async teardown(): Promise<void> {
                    await super.teardown();
                    await stageProxy.close();
                }
            })(
                {
                    requestQueue: stores.browserQueue,
                    // As the stage's: sessions are dragnet's own (a pool is made only by run(), and teardown ends it).
                    useSessionPool: false,
                    launchContext: { launchOptions: { executablePath, headless: true } },
                    requestHandler: async ({ request }) => void rendered.push(request.url),
                },
                stores.config,
            );
        },
    });

    // Closed here too when the runner did not close it, so a
    // failure ends the test instead of keeping the process alive.
    t.after(() => proxy?.close().catch(() => undefined));
    runner.start();
    await createCalled;
    runner.stop();
    loaded();
    await runner.finish();

    assert.ok(proxy, 'the stage was created');
    assert.equal(await listening(proxy.url), false, 'the egress proxy was closed');
    assert.deepEqual(rendered, []);
    assert.equal(await stores.browserQueue.isEmpty(), false, 'the page stays queued for the next run');
});
