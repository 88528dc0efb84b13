/**
 * A browser pool torn down while it launches a browser for a page (src/fetch/browser/pagesOpening.ts):
 * Crawlee's pool alone leaves that browser running once it comes up, which kept a process alive
 * after its crawl had failed; followed by PagesOpening, it is closed. Real Chromium, started
 * through a script that waits before it starts it, so the teardown lands inside the launch.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it, type TestContext } from 'node:test';
import { BrowserPool, PlaywrightPlugin } from '@crawlee/browser-pool';
import { chromium, type Page } from 'playwright';
import { CHROMIUM_ARGS, findChromium } from '../../../src/fetch/browser/chromium.js';
import { PagesOpening } from '../../../src/fetch/browser/pagesOpening.js';

const executablePath = findChromium();
const LAUNCH_DELAY_SECS = 2;

/** A pool whose browsers start LAUNCH_DELAY_SECS late, and the file each launch touches as it begins. */
async function slowPool(t: TestContext) {
    const dir = await mkdtemp(join(tmpdir(), 'dragnet-pages-opening-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const marker = join(dir, 'launching');
    const script = join(dir, 'slow-chromium');
    await writeFile(
        script,
        `#!/bin/sh\ntouch '${marker}'\nsleep ${LAUNCH_DELAY_SECS}\nexec '${executablePath}' "$@"\n`,
    );
    await chmod(script, 0o755);
    const pool = new BrowserPool({
        browserPlugins: [
            new PlaywrightPlugin(chromium, {
                launchOptions: { executablePath: script, args: CHROMIUM_ARGS, headless: true },
            }),
        ],
    });
    const launchBegun = async () => {
        while (!existsSync(marker)) await sleep(20);
    };
    return { pool, launchBegun };
}

const connected = (page: Page) => page.context().browser()?.isConnected() ?? false;

describe('a browser pool torn down while it launches a browser for a page', {
    skip: executablePath ? false : 'no Chromium found',
}, () => {
    it('alone, leaves that browser running once it comes up (the Crawlee behaviour PagesOpening is for)', async (t) => {
        const { pool, launchBegun } = await slowPool(t);
        const opening = pool.newPage();
        await launchBegun();
        await pool.destroy();
        const page = await opening;
        t.after(() => page.context().browser()?.close());
        assert.equal(connected(page), true, 'the browser came up after the pool was destroyed, and is still running');
    });

    it('followed by PagesOpening, closes that browser once it is up, and opens no page after', async (t) => {
        const { pool, launchBegun } = await slowPool(t);
        const pagesOpening = new PagesOpening();
        const opening = pagesOpening.track(() => pool.newPage());
        await launchBegun();
        const closed = pagesOpening.closeBrowsers();
        await pool.destroy();
        await closed;
        const page = await opening;
        t.after(() => page.context().browser()?.close());
        assert.equal(connected(page), false, 'the browser that came up after the teardown was closed');
        await assert.rejects(
            pagesOpening.track(() => pool.newPage()),
            /closing/,
        );
    });
});
