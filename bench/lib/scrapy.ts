/**
 * Finds a Python that can import Scrapy (Debian's python3-scrapy), for the Scrapy baseline.
 * `python3` on PATH first; then Debian's own, since a pyenv or virtualenv `python3` does not
 * see the packages apt installs in /usr/lib/python3/dist-packages.
 */
import { execFileSync } from 'node:child_process';

const PYTHONS = ['python3', '/usr/bin/python3'];

export interface FoundScrapy {
    python: string;
    version: string;
}

export function findScrapy(): FoundScrapy | undefined {
    for (const python of PYTHONS) {
        try {
            const version = execFileSync(python, ['-c', 'import scrapy; print(scrapy.__version__)'], {
                encoding: 'utf8',
                stdio: ['ignore', 'pipe', 'ignore'],
                timeout: 30_000,
            }).trim();
            return { python, version };
        } catch {
            // Not there, or this python lacks it: try the next.
        }
    }
    return undefined;
}
