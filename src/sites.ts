/**
 * Finding a site: a name resolves to `routes/<name>.ts`, anything with a slash or an
 * extension is a path to a site module. A file in routes/ must be named after its site: the
 * command line finds it by file name, and its stores are kept under the site's name.
 */
import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ConfigError } from './configError.js';
import type { Site } from './site.js';

/** Where sites are found by name. */
const ROUTES_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'routes');

const MODULE_EXTENSION = /\.[cm]?[tj]s$/;

/** Names of the sites in `routesDir`. */
export function listSites(routesDir = ROUTES_DIR): string[] {
    return readdirSync(routesDir)
        .filter((file) => MODULE_EXTENSION.test(file))
        .map((file) => file.replace(MODULE_EXTENSION, ''))
        .sort();
}

/** The site called `nameOrPath` in `routesDir`, or the site module at that path. Throws ConfigError. */
export async function loadSite(nameOrPath: string, routesDir = ROUTES_DIR): Promise<Site> {
    const isPath = nameOrPath.includes('/') || extname(nameOrPath) !== '';
    const file = isPath ? resolve(nameOrPath) : join(routesDir, `${nameOrPath}.ts`);
    if (!existsSync(file)) {
        throw new ConfigError(
            isPath
                ? `site module not found: ${file}`
                : `unknown site "${nameOrPath}" (available: ${listSites(routesDir).join(', ')})`,
        );
    }
    const moduleUrl = pathToFileURL(file).href;
    const module = (await import(moduleUrl)) as { default?: Site };
    if (!module.default?.routes) {
        throw new ConfigError(`${file} does not default-export defineSite({...})`);
    }
    const site = module.default;
    const fileName = basename(file).replace(MODULE_EXTENSION, '');
    if (resolve(dirname(file)) === resolve(routesDir) && fileName !== site.name) {
        throw new ConfigError(`${file} defines site "${site.name}": a file in routes/ must be named after its site (rename it to ${site.name}.ts, or the site to "${fileName}")`);
    }
    return { ...site, moduleUrl };
}
