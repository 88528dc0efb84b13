/**
 * The raw pages of dragnet before its WARC archive: `<storageDir>/raw_pages/<site>/pages-NNNNNN.jsonl.gz`,
 * one JSON object per line, gzip members of many lines (or plain `.jsonl`). Read once more, by
 * `npm run reparse -- --convert-raw`, which archives them as WARC; nothing else reads them.
 */
import { createReadStream } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { constants, createGunzip } from 'node:zlib';
import type { RawPages } from '../rawPages.js';
import type { RawPage } from './rawPage.js';

const SEGMENT_FILE = /^pages-(?:[\w.-]+-)?\d{6}\.jsonl(?:\.gz)?$/;

/** The site's directory of JSON-lines segments in `storageDir`. */
export function legacyRawDir(storageDir: string, site: string): string {
    return join(storageDir, 'raw_pages', site);
}

/** The segment files, oldest first. */
export async function legacySegments(storageDir: string, site: string): Promise<string[]> {
    const files = await readdir(legacyRawDir(storageDir, site)).catch(() => []);
    return files.filter((file) => SEGMENT_FILE.test(file)).sort();
}

/** Every page of the JSON-lines segments, oldest first; a line a crash cut short is left out. */
export async function* legacyRawPages(storageDir: string, site: string): AsyncGenerator<RawPage> {
    for (const file of await legacySegments(storageDir, site)) {
        const path = join(legacyRawDir(storageDir, site), file);
        const lines = createInterface({ input: segmentStream(path), crlfDelay: Infinity });
        for await (const line of lines) {
            const page = parseLine(line);
            if (page) yield page;
        }
    }
}

/**
 * Archives every page of the site's JSON-lines segments in `archive` (their body is encoded anew in its
 * charset: the old store kept no bytes), then removes the segments. Resolves with the number of pages.
 * Puts go `window` at a time (default 200), so the archive writes them in batches and few pages wait.
 */
export async function convertLegacyRawPages(
    storageDir: string,
    site: string,
    archive: Pick<RawPages, 'put' | 'flush'>,
    { window = 200 }: { window?: number } = {},
): Promise<number> {
    let converted = 0;
    const writing: Promise<void>[] = [];
    for await (const page of legacyRawPages(storageDir, site)) {
        const written = archive.put(page);
        // Awaited below, in order; until then a failed write must not count as unhandled.
        written.catch(() => {});
        writing.push(written);
        if (writing.length >= window) await writing.shift();
        converted += 1;
    }
    await Promise.all(writing);
    await archive.flush();
    await removeLegacyRawPages(storageDir, site);
    return converted;
}

/** Removes the site's JSON-lines segments. */
export async function removeLegacyRawPages(storageDir: string, site: string): Promise<void> {
    await rm(legacyRawDir(storageDir, site), { recursive: true, force: true });
}

/** A gzip member cut short by a crash ends the stream where its bytes end, not in an error. */
function segmentStream(path: string): Readable {
    const file = createReadStream(path);
    if (!path.endsWith('.gz')) return file;
    const gunzip = createGunzip({ finishFlush: constants.Z_SYNC_FLUSH });
    file.on('error', (error) => gunzip.destroy(error));
    return file.pipe(gunzip);
}

function parseLine(line: string): RawPage | undefined {
    if (line.trim() === '') return undefined;
    try {
        return JSON.parse(line) as RawPage;
    } catch {
        return undefined;
    }
}
