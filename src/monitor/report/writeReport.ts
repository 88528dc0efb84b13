/**
 * Where run reports go: `<storageDir>/reports/<runId>.html`, one file per run, never overwritten
 * by a run with another id.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A run's id: the site and its start time, safe in a file name, e.g. `demo-shop-2026-11-29T23-18-53Z`;
 * a fleet's worker adds its id, as workers that share a storage dir may start in the same second.
 */
export function runId(site: string, startedAt: Date | string, worker?: string): string {
    const time = new Date(startedAt)
        .toISOString()
        .replace(/\.\d+Z$/, 'Z')
        .replace(/:/g, '-');
    return [site, time, ...(worker ? [worker] : [])].map((part) => part.replace(/[^A-Za-z0-9._-]+/g, '_')).join('-');
}

/** Writes the report and returns its path. */
export async function writeReport(storageDir: string, id: string, html: string): Promise<string> {
    if (!/^[A-Za-z0-9._-]+$/.test(id) || id.startsWith('.'))
        throw new Error(`run id not usable as a file name: ${JSON.stringify(id)}`);
    const dir = join(storageDir, 'reports');
    await mkdir(dir, { recursive: true });
    const path = join(dir, `${id}.html`);
    await writeFile(path, html);
    return path;
}
