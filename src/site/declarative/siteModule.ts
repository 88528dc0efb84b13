/**
 * A declarative site as a module. Parse workers load a site by importing its module's URL
 * (parse/parseWorker.ts), and a YAML or JSON file is no module: this one's default export is the
 * site declared in the file its own URL names, `…/siteModule.ts?file=/path/to/site.yaml`
 * (declarativeSiteUrl). That URL is a declarative site's `moduleUrl`, so the workers load it with
 * no code of their own for it; the query is part of the URL, so each file is a module of its own.
 */
import { readDeclarativeSite } from './declarativeSite.js';
import { declaredFile } from './siteModuleUrl.js';

const file = declaredFile(import.meta.url);
if (!file) throw new Error(`${import.meta.url} names no site file: import it as siteModule.ts?file=PATH`);

export default readDeclarativeSite(file);
