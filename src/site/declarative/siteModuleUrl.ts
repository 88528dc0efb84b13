/**
 * Where a declarative site's module is (siteModule.ts), and which file a module URL of it names:
 * apart from the file format, so finding a site (site/sites.ts) loads the YAML parser only for a site
 * that is a file.
 */
const SITE_MODULE = new URL('./siteModule.ts', import.meta.url);

/**
 * The URL of the module whose default export is the site declared in `file` (siteModule.ts): a
 * declarative site's `moduleUrl`, which the parse workers import as they import a site module.
 */
export function declarativeSiteUrl(file: string): string {
    const url = new URL(SITE_MODULE);
    url.searchParams.set('file', file);
    return url.href;
}

/** The file a declarative site's module URL names; undefined for the URL of any other module. */
export function declaredFile(moduleUrl: string): string | undefined {
    const url = new URL(moduleUrl);
    return url.pathname === SITE_MODULE.pathname ? (url.searchParams.get('file') ?? undefined) : undefined;
}
