/**
 * Finding a site: a name resolves to `routes/<name>.ts`, else to the declarative file
 * `routes/<name>.yaml`, `.yml` or `.json` (site/declarative/declarativeSite.ts); anything with a slash
 * or an extension is a path to a site module or file. A file in routes/ must be named after its
 * site: the command line finds it by file name, and its stores are kept under the site's name.
 */
import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ConfigError } from '../options/configError.js';
import { declarativeSiteUrl, declaredFile } from './declarative/siteModuleUrl.js';
import type { Route, Site } from './site.js';

/** Where sites are found by name. */
const ROUTES_DIR = fileURLToPath(new URL('../../routes', import.meta.url));

/** The extensions of declarative site files, in the order a name looks for them (after `<name>.ts`). */
const DECLARATIVE_EXTENSIONS = ['.yaml', '.yml', '.json'];
const SITE_EXTENSION = /\.(?:[cm]?[tj]s|ya?ml|json)$/;

/**
 * Names of the sites in `routesDir`, each once (a site module and a declarative file of the same name are one site).
 */
export function listSites(routesDir = ROUTES_DIR): string[] {
    const names = readdirSync(routesDir)
        .filter((file) => SITE_EXTENSION.test(file))
        .map((file) => file.replace(SITE_EXTENSION, ''));
    return [...new Set(names)].sort();
}

/** Whether `--site` names a file (`routes/shop.ts`, `shop.yaml`) rather than a site in routes/. */
function isSitePath(nameOrPath: string): boolean {
    return nameOrPath.includes('/') || extname(nameOrPath) !== '';
}

/**
 * The name a site's stores are kept under: a name as given (the stores may outlive its module), the
 * name a file declares when given a path (loaded, as `loadSite` loads it).
 */
export async function siteNameOf(nameOrPath: string): Promise<string> {
    return isSitePath(nameOrPath) ? (await loadSite(nameOrPath)).name : nameOrPath;
}

/**
 * The site called `nameOrPath` in `routesDir`, or the site module or declarative file at that path. Throws ConfigError.
 */
export async function loadSite(nameOrPath: string, routesDir = ROUTES_DIR): Promise<Site> {
    const isPath = isSitePath(nameOrPath);
    const file = isPath ? resolve(nameOrPath) : siteFilesNamed(nameOrPath, routesDir)[0];
    if (!file || !existsSync(file)) {
        throw new ConfigError(
            isPath
                ? `site module not found: ${resolve(nameOrPath)}`
                : `unknown site "${nameOrPath}" (available: ${listSites(routesDir).join(', ')})`,
        );
    }
    const site = DECLARATIVE_EXTENSIONS.includes(extname(file)) ? await readSiteFile(file) : await importSite(file);
    const extension = extname(file);
    const fileName = basename(file, extension);
    if (resolve(dirname(file)) === resolve(routesDir) && fileName !== site.name) {
        throw new ConfigError(
            `${file} defines site "${site.name}": a file in routes/ must be named after its site (rename it ` +
                `to ${site.name}${extension}, or the site to "${fileName}")`,
        );
    }
    return site;
}

/**
 * The site's route called `label`, as a flag (`flag`, e.g. `--route`)
 * names it; a label that is no route is a ConfigError listing them.
 */
export function namedRoute(site: Site, label: string, flag: string): Route {
    const route = site.routes.get(label);
    if (!route)
        throw new ConfigError(
            `${flag} ${label}: site ${site.name} has no such route (routes: ${[...site.routes.keys()].join(', ')})`,
        );
    return route;
}

/** The file a site was loaded from: its module, or its declarative file; undefined for a site defined in place. */
export function siteSourceFile(site: Site): string | undefined {
    if (!site.moduleUrl) return undefined;
    return declaredFile(site.moduleUrl) ?? fileURLToPath(site.moduleUrl);
}

/**
 * The files in `routesDir` that define a site called `name`, in the
 * order a name finds them: `<name>.ts`, `.yaml`, `.yml`, `.json`.
 */
export function siteFilesNamed(name: string, routesDir = ROUTES_DIR): string[] {
    return ['.ts', ...DECLARATIVE_EXTENSIONS]
        .map((extension) => join(routesDir, `${name}${extension}`))
        .filter((file) => existsSync(file));
}

/** A declarative site; its reader (and the YAML parser) loaded only for one. */
async function readSiteFile(file: string): Promise<Site> {
    const { readDeclarativeSite } = await import('./declarative/declarativeSite.js');
    return { ...readDeclarativeSite(file), moduleUrl: declarativeSiteUrl(file) };
}

async function importSite(file: string): Promise<Site> {
    const moduleUrl = pathToFileURL(file).href;
    const module = (await import(moduleUrl)) as { default?: Site };
    if (!module.default?.routes) {
        throw new ConfigError(`${file} does not default-export defineSite({...})`);
    }
    return { ...module.default, moduleUrl };
}
