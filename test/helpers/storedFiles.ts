/** What a run left in a directory, for tests that search it (for secrets, or for what must be there). */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';

/**
 * Every file under `dir`, by its path relative to `dir`, as its bytes; a gzipped file (the raw
 * pages' segments) decompressed, so a search sees what is stored and not its compressed form.
 */
export async function storedFiles(dir: string): Promise<Map<string, Buffer>> {
    const files = new Map<string, Buffer>();
    for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
        if (!entry.isFile()) continue;
        const path = join(entry.parentPath, entry.name);
        const bytes = await readFile(path);
        files.set(path.slice(dir.length + 1), entry.name.endsWith('.gz') ? gunzipSync(bytes) : bytes);
    }
    return files;
}
