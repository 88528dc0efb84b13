/**
 * `node --require` this to run Crawlee as npm publishes it, for the plain Crawlee baselines:
 * package.json's overrides give this tree's Crawlee dragnet's stand-in for `@apify/timeout` (its
 * AsyncLocalStorage, vendor/apify-timeout-hookless), and a baseline with it would not be Crawlee's
 * default. Where a module resolves to a stand-in, this resolves the published package instead,
 * installed under an alias (`@apify/timeout-as-published`, in package.json's devDependencies).
 *
 * `AS_PUBLISHED` (vendor/ folder names, comma-separated) swaps back only those stand-ins and keeps
 * the others: the vendor suite measures each stand-in so. Unset, all of them.
 */
const Module = require('node:module');

/**
 * Each stand-in, by its folder in vendor/: the root dependency it is installed as, and the alias of
 * the published package. Both are resolved as this tree resolves them, so the stand-in's path is the
 * real one even where node_modules is a link to another checkout's.
 */
const standIns = {
    'apify-timeout-hookless': ['@apify/timeout', '@apify/timeout-as-published'],
};
const named = process.env.AS_PUBLISHED ? process.env.AS_PUBLISHED.split(',') : Object.keys(standIns);
const unknown = named.filter((standIn) => !Object.hasOwn(standIns, standIn));
if (unknown.length > 0) {
    throw new Error(
        `AS_PUBLISHED names no stand-in ${unknown.join(', ')}; the stand-ins: ${Object.keys(standIns).join(', ')}`,
    );
}
const published = Object.fromEntries(named.map((standIn) => standIns[standIn].map((name) => require.resolve(name))));
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
    const resolved = resolveFilename.call(this, request, ...rest);
    return published[resolved] ?? resolved;
};
