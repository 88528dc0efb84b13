/**
 * Finding a site by name or path (src/site/sites.ts): every file in routes/ loads under its own name,
 * a name finds its TypeScript module before a declarative file of the same name, and a file in the
 * routes dir whose site has another name is a one-line error naming both.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError } from '../../src/options/configError.js';
import { listSites, loadSite, siteSourceFile } from '../../src/site/sites.js';

const SITE_MODULE = new URL('../../src/site/site.ts', import.meta.url).href;

/** A site module that defines a site called `name`. */
const siteModule = (name: string) =>
    `import { defineSite } from ${JSON.stringify(SITE_MODULE)};\n` +
    `export default defineSite({ name: ${JSON.stringify(name)}, startUrls: ` +
    `['http://127.0.0.1:9/'], routes: { page: { match: () => true } } });\n`;

/** A declarative site file (YAML, and so JSON too) that defines a site called `name`. */
const siteFile = (name: string) =>
    JSON.stringify({ name, startUrls: ['http://127.0.0.1:9/'], routes: { page: { match: '.' } } });

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
        for (const load of [
            () => loadSite('shop-a', routesDir),
            () => loadSite(join(routesDir, 'shop-a.ts'), routesDir),
        ]) {
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

    it(`finds a name's TypeScript module first, then <name>.yaml, \
.yml and .json, and lists each name once`, async (t) => {
        const routesDir = await mkdtemp(join(tmpdir(), 'dragnet-routes-'));
        t.after(() => rm(routesDir, { recursive: true, force: true }));
        await writeFile(join(routesDir, 'both.ts'), siteModule('both'));
        await writeFile(join(routesDir, 'both.yaml'), siteFile('both'));
        for (const file of ['a-yaml.yaml', 'a-yml.yml', 'a-json.json'])
            await writeFile(join(routesDir, file), siteFile(file.replace(/\..*$/, '')));
        await writeFile(join(routesDir, 'notes.txt'), 'not a site');
        assert.deepEqual(listSites(routesDir), ['a-json', 'a-yaml', 'a-yml', 'both']);
        assert.equal(siteSourceFile(await loadSite('both', routesDir)), join(routesDir, 'both.ts'));
        for (const file of ['a-yaml.yaml', 'a-yml.yml', 'a-json.json']) {
            const site = await loadSite(file.replace(/\..*$/, ''), routesDir);
            assert.equal(siteSourceFile(site), join(routesDir, file));
            assert.match(site.moduleUrl ?? '', /siteModule\.ts\?file=/);
        }
        assert.equal(
            (await loadSite(join(routesDir, 'both.yaml'), routesDir)).name,
            'both',
            'a path names the file itself',
        );
    });

    it("holds a declarative file in the routes dir to its site's name too", async (t) => {
        const routesDir = await mkdtemp(join(tmpdir(), 'dragnet-routes-'));
        t.after(() => rm(routesDir, { recursive: true, force: true }));
        await writeFile(join(routesDir, 'shop-a.yaml'), siteFile('shop-b'));
        await assert.rejects(
            () => loadSite('shop-a', routesDir),
            (error: unknown) => {
                assert.ok(error instanceof ConfigError, String(error));
                assert.match(error.message, /shop-a\.yaml defines site "shop-b": .*rename it to shop-b\.yaml/);
                return true;
            },
        );
    });
});
