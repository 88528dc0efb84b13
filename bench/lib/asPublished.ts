import { fileURLToPath } from 'node:url';

/**
 * Node flags that run Crawlee as npm publishes it, without dragnet's
 * stand-ins (crawlers/asPublished.cjs): for the plain Crawlee baselines.
 */
export const AS_PUBLISHED = ['--require', fileURLToPath(new URL('../crawlers/asPublished.cjs', import.meta.url))];

/**
 * Node flags and variables that put back the published package of one stand-in (its folder in
 * vendor/) and keep the others.
 */
export function asPublishedOnly(standIn: string): { nodeFlags: string[]; env: NodeJS.ProcessEnv } {
    return { nodeFlags: AS_PUBLISHED, env: { AS_PUBLISHED: standIn } };
}
