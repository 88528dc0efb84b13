/**
 * The route API's reference, `docs/api/`: TypeDoc's markdown (typedoc-plugin-markdown) of what
 * `'dragnet'` exports (src/index.ts), made from their TSDoc. TypeDoc type-checks nothing here
 * (`npm run typecheck` does, with TypeScript's native compiler): it only reads the declarations.
 */
import { join } from 'node:path';
import { Application, type TypeDocOptions } from 'typedoc';
import type { PluginOptions } from 'typedoc-plugin-markdown';

/** Where the reference is kept, relative to the project root. */
export const API_REFERENCE_DIR = 'docs/api';

/** Writes the reference of the project at `root` into `out` (a folder TypeDoc empties first). */
export async function writeApiReference(root: string, out: string): Promise<void> {
    const options: Partial<TypeDocOptions & PluginOptions> = {
        entryPoints: [join(root, 'src/index.ts')],
        tsconfig: join(root, 'tsconfig.json'),
        plugin: ['typedoc-plugin-markdown'],
        out,
        name: 'dragnet',
        readme: 'none',
        skipErrorChecking: true,
        disableSources: true,
        hideGenerator: true,
        hideBreadcrumbs: true,
        logLevel: 'Warn',
        treatWarningsAsErrors: true,
    };
    const app = await Application.bootstrapWithPlugins(options);
    const project = await app.convert();
    if (project) app.validate(project);
    if (!project || app.logger.hasErrors())
        throw new Error('TypeDoc could not read src/index.ts: see the errors above');
    await app.generateOutputs(project);
    if (app.logger.hasErrors()) throw new Error('TypeDoc could not write the API reference: see the errors above');
}
