/**
 * Finding a site: a name resolves to `routes/<name>.ts`, anything with a slash or an
 * extension is a path to a site module.
 */
import { existsSync, readdirSync } from 'node:fs';
import { dirname, extname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ConfigError } from './configError.js';
import type { Site } from './site.js';

const ROUTES_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'routes');

/** Names of the sites in `routes/`. */
export function listSites(): string[] {
    return readdirSync(ROUTES_DIR)
        .filter((file) => /\.[cm]?[tj]s$/.test(file))
        .map((file) => file.replace(/\.[cm]?[tj]s$/, ''))
        .sort();
}

export async function loadSite(nameOrPath: string): Promise<Site> {
    const isPath = nameOrPath.includes('/') || extname(nameOrPath) !== '';
    const file = isPath ? resolve(nameOrPath) : join(ROUTES_DIR, `${nameOrPath}.ts`);
    if (!existsSync(file)) {
        throw new ConfigError(
            isPath
                ? `site module not found: ${file}`
                : `unknown site "${nameOrPath}" (available: ${listSites().join(', ')})`,
        );
    }
    const moduleUrl = pathToFileURL(file).href;
    const module = (await import(moduleUrl)) as { default?: Site };
    if (!module.default?.routes) {
        throw new ConfigError(`${file} does not default-export defineSite({...})`);
    }
    return { ...module.default, moduleUrl };
}
