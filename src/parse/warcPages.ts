/**
 * The pages of WARC files written by any tool, gzipped per record or not, for re-parse (reparse.ts):
 * each `response` record of the site is routed by the routes' `match` and judged as the HTTP stage
 * judges a response, then becomes a page fetched over HTTP, or the dead-letter entry a crawl would
 * have left. A record that could have been a page and is neither is skipped, counted by reason.
 * `request`, `warcinfo`, `metadata` and `conversion` records are no pages and are passed over unsaid.
 */
import { readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { normalizeUrl } from '../frontier/normalize.js';
import { SiteScope } from '../frontier/scope.js';
import type { Site } from '../site/site.js';
import { type RawPage, rawPageKey } from '../store/archive/rawPage.js';
import { type ArchivedRecord, WARC_FILE, warcFileRecords } from '../store/archive/warcReader.js';
import type { HttpHeaders } from '../store/archive/warcRecord.js';
import type { DeadLetterEntry, FailureClass } from '../vocabulary/failure.js';
import { firstValue } from './pageRecords.js';

export type SkipReason =
    /** Cut short by a crash or a partial copy, or its payload cut by its writer (`WARC-Truncated`). */
    | 'cut-short'
    /** A `revisit` record: its payload is another capture's. */
    | 'revisit'
    /** Any other record that may hold content (`resource`, `continuation`). */
    | 'not-response'
    /** No HTTP response of an http(s) URL (a `dns:` record, say). */
    | 'not-http'
    /** A URL outside the site's scope (frontier/scope.ts). */
    | 'other-site'
    /** No route's `match` takes the URL. */
    | 'unrouted'
    /** A redirect: the crawl follows it, and its target is a record of its own. */
    | 'redirect'
    /** Not of a type the route takes (HTML by default), or binary whatever its label. */
    | 'not-html';

export interface Skip {
    reason: SkipReason;
    file: string;
    offset: number;
    /** The record's URL and what was wrong with it. */
    detail: string;
}

export interface Skipped {
    /** Records skipped, by reason. */
    counts: Partial<Record<SkipReason, number>>;
    /** The first few of each reason, in the order read. */
    examples: Skip[];
}

/** Why the crawl would not take a response as a page (a FetchFailure). */
export interface ResponseFailure {
    failureClass: FailureClass;
    reason: string;
    message: string;
    status?: number;
}

/**
 * How the HTTP stage reads a response, which fetch/ decides and parse/ may not import: the command
 * hands in fetch/http/decodeBody.ts's `decodeBody` and fetch/failures/responseCheck.ts's `checkResponse`.
 */
export interface CrawlReading {
    decodeBody(bytes: Buffer, contentType: string | undefined): { html: string; charset: string; binary: boolean };
    checkResponse(
        status: number,
        contentType: string | undefined,
        response?: { headers: HttpHeaders; body?: string; url?: string },
        contentTypes?: readonly string[],
    ): ResponseFailure | undefined;
}

export interface WarcPagesOptions {
    site: Site;
    /** The WARC files, read in this order (`warcFilesAt`). */
    files: readonly string[];
    reading: CrawlReading;
    /** Skipped records kept as examples, per reason. Default: 3. */
    examplesPerReason?: number;
}

/** The WARC file at `path`, or the `*.warc` and `*.warc.gz` files of the directory at `path` in name order. */
export async function warcFilesAt(path: string): Promise<string[]> {
    if (!(await stat(path)).isDirectory()) return [path];
    const files = (await readdir(path)).filter((file) => WARC_FILE.test(file)).sort();
    return files.map((file) => join(path, file));
}

const NO_PAGES = new Set(['request', 'warcinfo', 'metadata', 'conversion']);

/** What one whole read of the files found besides pages. */
interface Read {
    skipped: Skipped;
    /** By URL: the crawl leaves one entry per URL. */
    failures: Map<string, DeadLetterEntry>;
    /** URLs read as pages: a failure of one of them is one a crawl's retry would have got past. */
    pageUrls: Set<string>;
}

export class WarcPages {
    private readonly scope: SiteScope;
    private readonly examplesPerReason: number;
    private lastRead: Read | undefined;

    constructor(private readonly options: WarcPagesOptions) {
        this.scope = new SiteScope({ startUrls: options.site.startUrls, allowedDomains: options.site.allowedDomains });
        this.examplesPerReason = options.examplesPerReason ?? 3;
    }

    /** Every page of the files, in file order. Each call reads the files anew. */
    async *pages(): AsyncGenerator<RawPage> {
        const read: Read = { skipped: { counts: {}, examples: [] }, failures: new Map(), pageUrls: new Set() };
        for (const file of this.options.files) {
            const name = basename(file);
            const records = warcFileRecords(file, {
                onSkipped: ({ offset, detail }) => this.skip(read, { reason: 'cut-short', file: name, offset, detail }),
            });
            for await (const record of records) {
                const page = this.pageOf(record, name, read);
                if (page) yield page;
            }
        }
        this.lastRead = read;
    }

    /** What the last whole read of `pages()` skipped. */
    get skipped(): Skipped {
        return this.lastRead?.skipped ?? { counts: {}, examples: [] };
    }

    /** The responses a crawl would have dead-lettered, as the last whole read of `pages()` found them. */
    async *deadLetters(): AsyncGenerator<DeadLetterEntry> {
        yield* this.lastRead?.failures.values() ?? [];
    }

    private pageOf(record: ArchivedRecord, file: string, read: Read): RawPage | undefined {
        if (NO_PAGES.has(record.type)) return undefined;
        const skip = (reason: SkipReason, detail: string) =>
            this.skip(read, { reason, file, offset: record.offset, detail });
        // WARC/1.0's grammar put the URI in angle brackets, and some writers still do.
        const uri = record.targetUri?.replace(/^<(.*)>$/, '$1') ?? '';
        if (record.type !== 'response') return skip(record.type === 'revisit' ? 'revisit' : 'not-response', uri);
        const { site, reading } = this.options;
        let url: string;
        try {
            url = normalizeUrl(uri, { trackingParams: site.trackingParams });
        } catch (error) {
            return skip('not-http', (error as Error).message);
        }
        const { status } = record;
        const headers = record.httpHeaders ?? {};
        if (status === undefined) return skip('not-http', `${url}: no HTTP response`);
        if (!this.scope.includes(new URL(url))) return skip('other-site', url);
        if (record.truncated) return skip('cut-short', `${url}: WARC-Truncated: ${record.truncated}`);
        const contentType = firstValue(headers['content-type']);
        const route = site.routeFor(undefined, new URL(url));
        // Images, scripts and styles are a web archive's everyday companions of pages, no failures of the site's:
        // the crawl, which never asks for them, dead-letters a wrong type (`unsupported-content-type`).
        if (status >= 200 && status < 300 && reading.checkResponse(status, contentType, undefined, route?.contentTypes))
            return skip('not-html', `${url}: ${contentType || 'no content type'}`);
        if (!route) return skip('unrouted', url);
        const { html, charset, binary } = reading.decodeBody(record.content, contentType);
        const failure = reading.checkResponse(status, contentType, { headers, body: html, url }, route.contentTypes);
        if (status >= 300 && status < 400 && failure?.failureClass !== 'blocked')
            return skip('redirect', `${url}: ${status} to ${firstValue(headers.location) ?? 'nowhere'}`);
        if (failure) {
            if (!read.pageUrls.has(url))
                read.failures.set(url, {
                    url,
                    label: route.label,
                    failureClass: failure.failureClass,
                    reason: failure.reason,
                    error: failure.message,
                    status: failure.status,
                    attempts: 1,
                    stage: 'http',
                    firstFailedAt: record.date,
                    deadLetteredAt: new Date().toISOString(),
                });
            return undefined;
        }
        if (binary) return skip('not-html', `${url}: binary content labelled ${contentType || 'with no type'}`);
        read.pageUrls.add(url);
        read.failures.delete(url);
        return {
            key: rawPageKey(url, 'http'),
            url,
            finalUrl: url,
            status,
            headers,
            fetchedAt: record.date,
            renderer: 'http',
            label: route.label,
            body: html,
            charset,
        };
    }

    private skip(read: Read, skipped: Skip): undefined {
        const { counts, examples } = read.skipped;
        const count = (counts[skipped.reason] ?? 0) + 1;
        counts[skipped.reason] = count;
        if (count <= this.examplesPerReason) examples.push(skipped);
        return undefined;
    }
}
