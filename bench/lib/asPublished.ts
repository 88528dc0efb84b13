import { fileURLToPath } from 'node:url';

/**
 * Node flags that run Crawlee as npm publishes it, without dragnet's
 * stand-ins (crawlers/asPublished.cjs): for the plain Crawlee baselines.
 */
export const AS_PUBLISHED = ['--require', fileURLToPath(new URL('../crawlers/asPublished.cjs', import.meta.url))];
