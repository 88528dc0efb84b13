/**
 * package.json overrides callsites with vendor/callsites-off, so ow (Crawlee's and got-scraping's
 * argument validation) captures no stack on every call. This fails if an upgrade brings a real
 * callsites back to either ow, or if ow no longer validates with it.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const projectRoot = fileURLToPath(new URL('../../', import.meta.url));
const vendored = fileURLToPath(new URL('../../vendor/callsites-off/index.cjs', import.meta.url));

/** The ow a package resolves (from its installed directory: got-scraping can only be imported), and the callsites that ow resolves. */
function owOf(dependent: string): { owPath: string; callsitesPath: string } {
    const owPath = createRequire(join(projectRoot, 'node_modules', dependent, 'package.json')).resolve('ow');
    const callsitesPath = createRequire(owPath).resolve('callsites');
    return { owPath, callsitesPath };
}

describe('callsites is turned off for ow', () => {
    for (const dependent of ['@crawlee/core', 'got-scraping']) {
        it(`the ow ${dependent} uses resolves the stand-in, which gives no frames`, async () => {
            const { callsitesPath } = owOf(dependent);
            assert.equal(realpathSync(callsitesPath), vendored, `${dependent}'s ow resolves ${callsitesPath}`);
            const callsites = (await import(pathToFileURL(callsitesPath).href)).default as () => unknown[];
            assert.deepEqual(callsites(), []);
        });
    }

    it("Crawlee's ow still validates: a wrong argument throws its ArgumentError", () => {
        const { owPath } = owOf('@crawlee/core');
        const ow = createRequire(owPath)(dirname(owPath));
        const validate = ow.default ?? ow;
        assert.throws(() => validate(5, validate.string), { name: 'ArgumentError', message: /Expected .*string.*number/ });
        assert.doesNotThrow(() => validate('ok', validate.string));
    });

    it("got-scraping's ow still validates", async () => {
        const { owPath } = owOf('got-scraping');
        const { default: ow } = (await import(pathToFileURL(owPath).href)) as { default: any };
        assert.throws(() => ow(5, ow.string), { name: 'ArgumentError' });
    });
});
