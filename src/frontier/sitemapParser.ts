/**
 * The sitemaps protocol's XML (sitemaps.org), parsed as it streams, for the sitemap reader
 * (sitemaps.ts): sax, as Crawlee's parseSitemap uses, in strict mode, fed the body chunk by chunk.
 */
import { StringDecoder } from 'node:string_decoder';
import sax from 'sax';
import type { FailureClass } from '../vocabulary/failure.js';

/** A failure of a sitemap the reader itself finds: one that is not a sitemap, or not well-formed. */
export class SitemapFailure extends Error {
    override readonly name = 'SitemapFailure';

    constructor(
        readonly reason: string,
        message: string,
        readonly failureClass: FailureClass = 'permanent',
    ) {
        super(message);
    }
}

/** What a sitemap says of when its URL changes: kept in the URL's request data (recrawl's revisit policy reads them). */
export interface SitemapHints {
    /** `<lastmod>` as an ISO date. */
    lastmod?: string;
    /** `<changefreq>`: always, hourly, daily, weekly, monthly, yearly or never. */
    changefreq?: string;
}

/**
 * A sitemap's entries as its bytes arrive: `<urlset><url><loc>` entries with their
 * `<lastmod>` and `<changefreq>`, and `<sitemapindex><sitemap><loc>` ones. Only those exact elements at those depths
 * count, so an extension's `<image:loc>` inside a `<url>` is not taken for the page's URL. A
 * document whose root is anything else (an HTML page served at the sitemap's URL) fails at its
 * first tag, one that is not well-formed XML when sax finds it so (a cut-off one at its end).
 */
export class SitemapParser {
    private readonly sax = new sax.SAXParser(true);
    private readonly decoder = new StringDecoder('utf8');
    private root?: 'urlset' | 'sitemapindex';
    private depth = 0;
    private field?: 'loc' | 'lastmod' | 'changefreq';
    private loc = '';
    private lastmod = '';
    private changefreq = '';
    private error?: Error;

    constructor(on: { url(loc: string, hints: SitemapHints): void; sitemap(loc: string): void }) {
        this.sax.onopentag = ({ name }) => {
            this.depth += 1;
            if (this.depth === 1) {
                if (name !== 'urlset' && name !== 'sitemapindex')
                    throw new SitemapFailure(
                        'not-a-sitemap',
                        `its root element is <${name}>, not <urlset> or <sitemapindex>`,
                    );
                this.root = name;
            } else if (this.depth === 2) {
                this.loc = this.lastmod = this.changefreq = '';
            } else if (this.depth === 3 && (name === 'loc' || name === 'lastmod' || name === 'changefreq')) {
                this.field = name;
            }
        };
        this.sax.onclosetag = (name) => {
            this.field = undefined;
            const loc = this.loc.trim();
            if (this.depth === 2 && loc) {
                if (this.root === 'urlset' && name === 'url') on.url(loc, this.hints());
                else if (this.root === 'sitemapindex' && name === 'sitemap') on.sitemap(loc);
            }
            this.depth -= 1;
        };
        this.sax.ontext = this.sax.oncdata = (text) => {
            if (this.field === 'loc') this.loc += text;
            else if (this.field) this[this.field] += text;
        };
        this.sax.onerror = (error) => {
            this.error ??= error;
        };
    }

    /** The `<lastmod>` (as an ISO date) and `<changefreq>` of the entry just read, those it had. */
    private hints(): SitemapHints {
        const lastmod = isoDate(this.lastmod);
        const changefreq = this.changefreq.trim().toLowerCase();
        return { ...(lastmod ? { lastmod } : {}), ...(changefreq ? { changefreq } : {}) };
    }

    write(chunk: Buffer): void {
        this.sax.write(this.decoder.write(chunk));
        this.throwIfMalformed();
    }

    end(): void {
        this.sax.write(this.decoder.end());
        this.sax.close();
        this.throwIfMalformed();
        if (!this.root) throw new SitemapFailure('not-a-sitemap', 'it holds no XML element');
    }

    private throwIfMalformed(): void {
        if (this.error)
            throw new SitemapFailure('malformed', `malformed XML: ${this.error.message.replace(/\s*\n\s*/g, ', ')}`);
    }
}

/** A W3C datetime (`2024-01-02`, `2024-01-02T10:00:00+01:00`, …) as an ISO string; undefined when it is none. */
function isoDate(text: string): string | undefined {
    const trimmed = text.trim();
    const date = trimmed ? new Date(trimmed) : undefined;
    return date && !Number.isNaN(date.getTime()) ? date.toISOString() : undefined;
}
