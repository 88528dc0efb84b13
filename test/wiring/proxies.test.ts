import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { createLogger } from '../../src/monitor/logger.js';
import { ConfigError } from '../../src/options/configError.js';
import { crawl } from '../../src/run.js';
import { defineSite } from '../../src/site/site.js';

it('refuses the chrome wire profile when there is no Chromium, with the way to get one', async (t) => {
    const storageDir = await mkdtemp(join(tmpdir(), 'dragnet-wire-'));
    t.after(() => rm(storageDir, { recursive: true, force: true }));
    const site = defineSite({
        name: 'wire-needs-chromium',
        startUrls: ['http://127.0.0.1:9/'],
        wire: 'chrome',
        routes: { page: { match: () => true, extract: () => ({}) } },
    });
    await assert.rejects(
        crawl({ site, startUrls: [], storageDir, chromiumPath: undefined, log: createLogger({ level: 'silent' }) }),
        (error: unknown) =>
            error instanceof ConfigError &&
            /chrome wire profile \(site wire-needs-chromium\).*none: install one/.test(error.message),
    );
});
