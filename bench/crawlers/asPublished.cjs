/**
 * `node --require` this to run Crawlee as npm publishes it, for the plain Crawlee baselines:
 * package.json's overrides give this tree's Crawlee dragnet's stand-ins for `ow` (its `optional`
 * built once, vendor/ow-optional-once), `callsites` (ow's stack capture, vendor/callsites-off) and
 * `@apify/timeout` (its AsyncLocalStorage, vendor/apify-timeout-hookless), and a baseline with them
 * would not be Crawlee's default. Where a module resolves to a stand-in, this resolves the published
 * package instead, installed under an alias (`ow-as-published`, which the stand-in wraps, in
 * package.json's dependencies; the others in its devDependencies).
 */
const Module = require('node:module');
const { join } = require('node:path');

const projectRoot = join(__dirname, '..', '..');
const published = {
    [join(projectRoot, 'vendor', 'ow-optional-once', 'index.cjs')]: require.resolve('ow-as-published'),
    [join(projectRoot, 'vendor', 'callsites-off', 'index.cjs')]: require.resolve('callsites-as-published'),
    [join(projectRoot, 'vendor', 'apify-timeout-hookless', 'index.cjs')]:
        require.resolve('@apify/timeout-as-published'),
};
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
    const resolved = resolveFilename.call(this, request, ...rest);
    return published[resolved] ?? resolved;
};
