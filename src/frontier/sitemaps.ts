/**
 * Sitemaps (sitemaps.org) as a source of start URLs: the `<url><loc>` entries of a `<urlset>` go to
 * the frontier as start URLs do, links with no label that the routes' `match` patterns route, each
 * with its `<lastmod>` kept in its userData as an ISO string (`lastmod`) and its `<changefreq>` (`changefreq`); the `<sitemap><loc>`
 * entries of a `<sitemapindex>` are read in turn, breadth first. With `sitemaps: true` the site's
 * sitemaps are the `Sitemap:` lines of its robots.txt.
 *
 * - Streamed: a body is parsed as it arrives (sitemapParser.ts) and its entries handed on in
 *   batches; parsing waits while a batch is queued, so the body waits in its stream and its socket.
 *   A 50,000-URL sitemap is never held whole: a batch, and the entries of the chunk being parsed.
 * - Bounded: indexes are followed `maxDepth` deep and `maxSitemaps` sitemaps read in all; the others
 *   an index names are skipped, counted by reason. The fetch bounds each body's bytes and time.
 * - Failing alone: a sitemap that fails is logged and counted by its reason, and the run goes on.
 *   A transient failure is retried `retries` times after a backoff; a retry hands on only the
 *   entries past those an earlier attempt handed on.
 *
 * What may be connected to, decompression, size and time are the injected fetch's business (the
 * wiring passes fetch/http/sitemapFetch.ts's); what is crawled is the frontier's, which every entry goes
 * through like any link.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import robotsParserModule from 'robots-parser';
import type { FailureClass } from '../vocabulary/failure.js';
import type { SitemapReport } from '../vocabulary/report.js';
import type { Link } from '../vocabulary/request.js';
import type { RobotsFetch } from './robots.js';
import { SitemapFailure, SitemapParser } from './sitemapParser.js';

// biome-ignore lint/plugin/noDoubleCast: robots-parser is CommonJS but types itself with an ES default export
const robotsParser = robotsParserModule as unknown as typeof robotsParserModule.default;

/**
 * Opens a sitemap: its body's bytes, decompressed, as they arrive. Throws (or the body does) an
 * error with a `failureClass` and a stable `reason`; an error without them counts as transient.
 * `signal` aborts the fetch and the body.
 */
export type SitemapFetch = (url: string, signal: AbortSignal) => Promise<AsyncIterable<Buffer>>;

export interface SitemapReaderOptions {
    /** How a sitemap is fetched. Required. */
    fetch: SitemapFetch;
    /**
     * Where each batch of URL entries goes (the frontier's `enqueue`, the sitemap's
     * URL as base); reading waits for it. Resolves to how many it queued. Required.
     */
    enqueue: (links: Link[], base: URL) => Promise<number>;
    /** The counters it keeps (the run's `stats.sitemaps`). Required. */
    counters: SitemapReport;
    log: Logger;
    /**
     * URL entries handed on at a time. Default: 1,000 — one seen-set call and one queue insert per
     * batch; reading 200,000 URLs grew the heap by under 1 MB (test/integration/sitemapCrawl.test.ts).
     */
    batchSize?: number;
    /** Levels of index followed: 1 reads the sitemaps an index names, not an index named in those. Default: 3. */
    maxDepth?: number;
    /** Sitemaps (indexes included) read in a run, at most; the rest are skipped. Default: 1,000. */
    maxSitemaps?: number;
    /** Further attempts at a sitemap (or robots.txt) that failed transiently. Default: 2. */
    retries?: number;
    /** The wait before the first retry, in seconds; doubled for each one after. Default: 1. */
    retryBaseSecs?: number;
    /** Whether reading on is pointless (the run's request budget is spent): then no more is read. Default: never. */
    isFull?: () => boolean;
    /** Stops the reading where it is, the sitemap being read counted neither read nor failed. Default: none. */
    signal?: AbortSignal;
}

export const SITEMAP_DEFAULTS = { batchSize: 1000, maxDepth: 3, maxSitemaps: 1000, retries: 2, retryBaseSecs: 1 };

/** Failure classes worth another attempt: the site's transient trouble, or the proxy's. */
const RETRIED: ReadonlySet<FailureClass> = new Set(['transient', 'exit']);

interface Pending {
    url: string;
    /** 0 for a sitemap the site names; one more for each index above it. */
    depth: number;
}

export class SitemapReader {
    private readonly batchSize: number;
    private readonly maxDepth: number;
    private readonly maxSitemaps: number;
    private readonly retries: number;
    private readonly retryBaseMs: number;
    private readonly signal: AbortSignal;
    /** Every sitemap URL taken to be read, so one named twice (or in a loop of indexes) is read once. */
    private readonly taken = new Set<string>();
    private readonly pending: Pending[] = [];
    /** Skip reasons already logged: an index of 50,000 sitemaps past the cap is one warning, not 49,000. */
    private readonly skipsLogged = new Set<string>();
    private fullLogged = false;

    constructor(private readonly options: SitemapReaderOptions) {
        this.batchSize = options.batchSize ?? SITEMAP_DEFAULTS.batchSize;
        this.maxDepth = options.maxDepth ?? SITEMAP_DEFAULTS.maxDepth;
        this.maxSitemaps = options.maxSitemaps ?? SITEMAP_DEFAULTS.maxSitemaps;
        this.retries = options.retries ?? SITEMAP_DEFAULTS.retries;
        this.retryBaseMs = (options.retryBaseSecs ?? SITEMAP_DEFAULTS.retryBaseSecs) * 1000;
        this.signal = options.signal ?? new AbortController().signal;
        for (const [name, value] of Object.entries({ batchSize: this.batchSize, maxSitemaps: this.maxSitemaps })) {
            if (!(Number.isInteger(value) && value >= 1)) throw new RangeError(`${name} must be a whole number >= 1`);
        }
        for (const [name, value] of Object.entries({ maxDepth: this.maxDepth, retries: this.retries })) {
            if (!(Number.isInteger(value) && value >= 0)) throw new RangeError(`${name} must be a whole number >= 0`);
        }
        if (!(this.retryBaseMs >= 0)) throw new RangeError('retryBaseSecs must be >= 0');
    }

    /**
     * Reads the sitemaps at `urls` and those they name, handing
     * their URL entries on; never throws for a sitemap's sake.
     */
    async read(urls: readonly string[]): Promise<void> {
        for (const url of urls) this.take(url, undefined, 0);
        for (let next = this.pending.shift(); next && !this.stopped(); next = this.pending.shift())
            await this.readSitemap(next);
    }

    /** The sitemaps the robots.txt of each origin lists in its `Sitemap:` lines. */
    async listedInRobotsTxt(origins: readonly string[], fetch: RobotsFetch): Promise<string[]> {
        const listed: string[] = [];
        for (const origin of new Set(origins)) {
            const robotsUrl = `${origin}/robots.txt`;
            let answer = { status: 0, body: '' };
            const answered = await this.attempt({ robotsTxt: robotsUrl }, async () => {
                answer = await fetch(robotsUrl);
                // RFC 9309: a 5xx or 429 robots.txt is unreachable,
                // which is worth asking again; a 4xx says there is none.
                if (answer.status >= 500 || answer.status === 429)
                    throw new SitemapFailure(
                        `http-${answer.status}`,
                        `robots.txt answered ${answer.status}`,
                        'transient',
                    );
                return true;
            });
            if (!answered) continue;
            const sitemaps =
                answer.status >= 200 && answer.status < 300 ? robotsParser(robotsUrl, answer.body).getSitemaps() : [];
            if (sitemaps.length === 0)
                this.options.log.warn({ robotsUrl, status: answer.status }, 'robots.txt lists no sitemaps');
            listed.push(...sitemaps);
        }
        return listed;
    }

    /** Reads one sitemap, with its retries, and counts how that went. */
    private async readSitemap(sitemap: Pending): Promise<void> {
        // URL entries handed on by the attempts so far, which a retry skips.
        const progress = { handedOn: 0 };
        const done = await this.attempt({ sitemap: sitemap.url }, () => this.readOnce(sitemap, progress));
        if (done) this.options.counters.read += 1;
    }

    /**
     * Runs `once` until it resolves or fails for good; resolves to what the last attempt resolved to
     * (false: the reading stopped), or to false when it failed, counted and logged. A robots.txt that
     * fails is counted among the failed sitemaps as `robots-txt-unreachable`: the sitemaps it lists are.
     */
    private async attempt(
        source: { sitemap: string } | { robotsTxt: string },
        once: () => Promise<boolean>,
    ): Promise<boolean> {
        const what = 'sitemap' in source ? 'sitemap' : 'robots.txt';
        for (let attempt = 0; ; attempt++) {
            try {
                return await once();
            } catch (error) {
                if (this.stopped()) return false;
                const { failureClass = 'transient', reason = 'error' } = error as {
                    failureClass?: FailureClass;
                    reason?: string;
                };
                const message = error instanceof Error ? error.message : String(error);
                if (RETRIED.has(failureClass) && attempt < this.retries) {
                    const waitMs = this.retryBaseMs * 2 ** attempt;
                    this.options.log.info({ ...source, reason, waitMs }, `${what} failed (${message}): trying again`);
                    await sleep(waitMs, undefined, { signal: this.signal }).catch(() => undefined);
                    continue;
                }
                const counted = 'sitemap' in source ? reason : 'robots-txt-unreachable';
                this.count('failed', counted);
                this.options.log.warn(
                    { ...source, reason: counted, attempts: attempt + 1 },
                    `${what} not read: ${message}`,
                );
                return false;
            }
        }
    }

    /** One attempt at a sitemap: true when it was read to its end, false when the reading stopped. */
    private async readOnce(sitemap: Pending, progress: { handedOn: number }): Promise<boolean> {
        const body = await this.options.fetch(sitemap.url, this.signal);
        const base = new URL(sitemap.url);
        const skip = progress.handedOn;
        let parsed = 0;
        const held: Link[] = [];
        const parser = new SitemapParser({
            url: (loc, hints) => {
                if (parsed++ >= skip)
                    held.push(Object.keys(hints).length > 0 ? { url: loc, userData: { ...hints } } : { url: loc });
            },
            sitemap: (loc) => this.take(loc, base, sitemap.depth + 1),
        });
        const handOn = async (links: Link[]) => {
            const queued = links.length > 0 ? await this.options.enqueue(links, base) : 0;
            this.options.counters.urls += links.length;
            this.options.counters.queued += queued;
            progress.handedOn = Math.max(progress.handedOn, parsed - held.length);
        };
        try {
            for await (const chunk of body) {
                parser.write(chunk);
                // A chunk can hold more than a batch (64 KiB is ~500 entries): handed on a batch at a time.
                while (held.length >= this.batchSize) {
                    await handOn(held.splice(0, this.batchSize));
                    if (this.stopped()) return false; // leaving the loop ends the body's stream
                }
            }
            parser.end();
        } finally {
            // The entries parsed whole go on, from a body that then failed too (a retry skips them).
            if (!this.stopped()) await handOn(held.splice(0));
        }
        return true;
    }

    /** Queues a sitemap to be read, unless it is taken already, too deep or past the cap. */
    private take(loc: string, base: URL | undefined, depth: number): void {
        let url: URL;
        try {
            url = new URL(loc, base);
        } catch {
            this.count('failed', 'invalid-url');
            this.options.log.warn({ sitemap: loc, reason: 'invalid-url' }, 'sitemap not read: not a URL');
            return;
        }
        url.hash = '';
        if (this.taken.has(url.href)) return;
        const skip =
            depth > this.maxDepth ? 'too-deep' : this.taken.size >= this.maxSitemaps ? 'too-many-sitemaps' : undefined;
        if (skip) {
            this.count('skipped', skip);
            if (!this.skipsLogged.has(skip)) {
                this.skipsLogged.add(skip);
                const limit =
                    skip === 'too-deep'
                        ? `indexes nested more than ${this.maxDepth} deep`
                        : `more than ${this.maxSitemaps} sitemaps`;
                this.options.log.warn(
                    { sitemap: url.href, reason: skip },
                    `sitemaps skipped: ${limit} (counted in sitemaps.skipped)`,
                );
            }
            return;
        }
        this.taken.add(url.href);
        this.pending.push({ url: url.href, depth });
    }

    private count(outcome: 'failed' | 'skipped', reason: string): void {
        const { counters } = this.options;
        counters[outcome] += 1;
        counters.reasons[reason] = (counters.reasons[reason] ?? 0) + 1;
    }

    private stopped(): boolean {
        if (this.signal.aborted) return true;
        if (!this.options.isFull?.()) return false;
        if (!this.fullLogged) this.options.log.info('the request budget is spent: no more sitemaps are read');
        this.fullLogged = true;
        return true;
    }
}
