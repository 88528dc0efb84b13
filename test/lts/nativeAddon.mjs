/**
 * Preloaded (`NODE_OPTIONS=--import=…`) under the LTS Node by ltsNode.ts: resolves better-sqlite3's
 * native module to the one built for this Node (`LTS_BETTER_SQLITE3_ADDON`) instead of the one in
 * node_modules, which was built for the Node that installed them. A process started under any
 * other Node than `LTS_NODE_VERSION` fails here: the demo must not pass by running on another Node.
 */
import module from 'node:module';
import { pathToFileURL } from 'node:url';

const addon = process.env.LTS_BETTER_SQLITE3_ADDON;
const expected = process.env.LTS_NODE_VERSION;
if (expected && process.version !== `v${expected}`) {
    throw new Error(`${process.argv.slice(1).join(' ')} runs under Node ${process.version}, not the LTS ${expected}`);
}
const installed = /[\\/]better-sqlite3[\\/]build[\\/]Release[\\/]better_sqlite3\.node$/;

if (addon) {
    module.registerHooks({
        resolve(specifier, context, nextResolve) {
            if (installed.test(specifier)) return { url: pathToFileURL(addon).href, shortCircuit: true };
            return nextResolve(specifier, context);
        },
    });
}
