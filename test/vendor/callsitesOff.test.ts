/**
 * package.json makes vendor/callsites-off the `callsites` of Crawlee's ow (its argument validation),
 * so that ow captures no stack on every call. This fails if an upgrade brings a real callsites back
 * to it, or if ow no longer validates with the stand-in. Crawlee's `ow` is a wrapper
 * (vendor/ow-optional-once) of the published ow, installed as `ow-as-published`: that one captures.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const projectRoot = fileURLToPath(new URL('../../', import.meta.url));
const vendored = fileURLToPath(new URL('../../vendor/callsites-off/index.cjs', import.meta.url));

/**
 * The published ow behind the `ow` a package resolves (from its
 * installed directory), and the callsites that ow resolves.
 */
function owOf(dependent: string): { owPath: string; callsitesPath: string } {
    const wrapperPath = createRequire(join(projectRoot, 'node_modules', dependent, 'package.json')).resolve('ow');
    const owPath = createRequire(wrapperPath).resolve('ow-as-published');
    const callsitesPath = createRequire(owPath).resolve('callsites');
    return { owPath, callsitesPath };
}

describe("callsites is turned off for Crawlee's ow", () => {
    it('the ow Crawlee uses resolves the stand-in, which gives no frames', async () => {
        const { callsitesPath } = owOf('@crawlee/core');
        assert.equal(realpathSync(callsitesPath), vendored, `Crawlee's ow resolves ${callsitesPath}`);
        const callsites = (await import(pathToFileURL(callsitesPath).href)).default as () => unknown[];
        assert.deepEqual(callsites(), []);
    });

    it("Crawlee's ow still validates: a wrong argument throws its ArgumentError", () => {
        const { owPath } = owOf('@crawlee/core');
        const ow = createRequire(owPath)(dirname(owPath));
        const validate = ow.default ?? ow;
        assert.throws(() => validate(5, validate.string), {
            name: 'ArgumentError',
            message: /Expected .*string.*number/,
        });
        assert.doesNotThrow(() => validate('ok', validate.string));
    });
});
