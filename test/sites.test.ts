/**
 * Finding a site by name or path (src/sites.ts): every file in routes/ loads under its own name,
 * and a file in the routes dir whose site has another name is a one-line error naming both.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError } from '../src/configError.js';
import { listSites, loadSite } from '../src/sites.js';

const SITE_MODULE = new URL('../src/site.ts', import.meta.url).href;

/** A site module that defines a site called `name`. */
const siteModule = (name: string) =>
    `import { defineSite } from ${JSON.stringify(SITE_MODULE)};\n` +
    `export default defineSite({ name: ${JSON.stringify(name)}, startUrls: ['http://127.0.0.1:9/'], routes: { page: { match: () => true } } });\n`;

describe('loadSite', () => {
    it('loads every site in routes/ by its name, and each is named after its file', async () => {
        const names = listSites();
        assert.ok(names.includes('demo-shop'), names.join(', '));
        for (const name of names) assert.equal((await loadSite(name)).name, name);
    });

    it('refuses a file in the routes dir whose site has another name, in one line naming both', async (t) => {
        const routesDir = await mkdtemp(join(tmpdir(), 'dragnet-routes-'));
        t.after(() => rm(routesDir, { recursive: true, force: true }));
        await writeFile(join(routesDir, 'shop-a.ts'), siteModule('shop-b'));
        for (const load of [() => loadSite('shop-a', routesDir), () => loadSite(join(routesDir, 'shop-a.ts'), routesDir)]) {
            await assert.rejects(load, (error: unknown) => {
                assert.ok(error instanceof ConfigError, String(error));
                assert.ok(!error.message.includes('\n'), error.message);
                assert.match(error.message, /shop-a\.ts defines site "shop-b"/);
                return true;
            });
        }
    });

    it('takes a site module outside the routes dir whatever its file is called', async (t) => {
        const dir = await mkdtemp(join(tmpdir(), 'dragnet-site-'));
        t.after(() => rm(dir, { recursive: true, force: true }));
        await writeFile(join(dir, 'my-crawl.ts'), siteModule('shop-b'));
        assert.equal((await loadSite(join(dir, 'my-crawl.ts'))).name, 'shop-b');
    });
});
