/**
 * Which capture of each page is its newest, read from the CDXJ indexes (cdxj.ts). An archive holds
 * every run of its site, so a page may have a response from each; the newest response is the page
 * (a revisit only says the page was found as it was). Newest is the latest WARC-Date; of two at the
 * same moment, the one later in the archive's order (files by name, records in file order).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type CdxjEntry, cdxjName, parseCdxjLine } from './cdxj.js';

/** Where a page's response record is, and when it was captured (ms since the epoch). */
interface Listing {
    file: string;
    offset: number;
    time: number;
}

/** The newest response of each page of the indexed files: ~150 bytes a page, whatever the pages weigh. */
export class NewestCaptures {
    private readonly newest = new Map<string, Listing>();
    /** By file, how many of its responses are not their page's newest. */
    private readonly supersededCounts = new Map<string, number>();

    private constructor(private readonly dir: string) {}

    /** The newest response of each page in the indexes of the WARC files `files` of `dir`. */
    static async read(dir: string, files: readonly string[]): Promise<NewestCaptures> {
        const captures = new NewestCaptures(dir);
        for (const file of files) {
            for (const { key, listing } of await pageLines(dir, file)) captures.add(key, listing);
        }
        return captures;
    }

    /** The offsets in `file` of the responses that are not their page's newest. */
    async superseded(file: string): Promise<Set<number>> {
        const offsets = new Set<number>();
        // Read again only when it holds one: in a site's first run, no file does.
        if (!this.supersededCounts.get(file)) return offsets;
        for (const { key, listing } of await pageLines(this.dir, file)) {
            const newest = this.newest.get(key);
            if (newest?.file !== file || newest.offset !== listing.offset) offsets.add(listing.offset);
        }
        return offsets;
    }

    private add(key: string, listing: Listing): void {
        const before = this.newest.get(key);
        if (!before) {
            this.newest.set(key, listing);
            return;
        }
        const newer = isNewer(listing, before);
        if (newer) this.newest.set(key, listing);
        const older = newer ? before : listing;
        this.supersededCounts.set(older.file, (this.supersededCounts.get(older.file) ?? 0) + 1);
    }
}

/** The index line of the newest response of the page `key` among `files` of `dir`, and the file it is in. */
export async function newestLine(
    dir: string,
    files: readonly string[],
    key: string,
): Promise<{ file: string; entry: CdxjEntry } | undefined> {
    let found: { listing: Listing; entry: CdxjEntry } | undefined;
    for (const file of files)
        for (const line of await pageLines(dir, file))
            if (line.key === key && (!found || isNewer(line.listing, found.listing))) found = line;
    return found && { file: found.listing.file, entry: found.entry };
}

/** The lines of a page's response in the index of the WARC file `file`; none when it has no index. */
async function pageLines(dir: string, file: string): Promise<{ key: string; listing: Listing; entry: CdxjEntry }[]> {
    const index = await readFile(join(dir, cdxjName(file)), 'utf8').catch(() => '');
    return index.split('\n').flatMap((line) => {
        const entry = parseCdxjLine(line);
        if (!entry?.key || !entry.pageLength) return [];
        return [{ key: entry.key, listing: { file, offset: entry.offset, time: Date.parse(entry.date) }, entry }];
    });
}

function isNewer(a: Listing, b: Listing): boolean {
    if (a.time !== b.time) return a.time > b.time;
    return a.file === b.file ? a.offset > b.offset : a.file > b.file;
}
