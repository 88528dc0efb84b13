/**
 * A hostile site on loopback: an index page linking to five ordinary product pages and to every
 * way a page can hurt a crawler — too large (declared, streamed, compressed), too slow, lying,
 * looping, leading off-site or to an address a crawler must not reach, huge in links or depth,
 * badly encoded, not HTML, or a trap for the site's own extractor. Written for the crawl suite
 * (and test/site/hostileSite.ts, the site module that crawls it); not a capture of any real site.
 *
 * HOSTILE_CASES below is the table: each case's path, what the server sends there, and what a safe
 * crawler ends with, in the reasons the crawler reports. The crawl suite asserts against it, so it
 * is the one place the expectations are written.
 *
 * The suite starts the crawl at a host NAME, `http://shop.hostile.test:<port>/` (HOSTILE_DNS, an
 * injected lookup, sends it to 127.0.0.1), so that 127.0.0.1 itself is not the start host: the
 * decimal and hex spellings of 127.0.0.1 below are then another host. The WHATWG URL parser turns
 * `http://2130706433:P/` and `http://0x7f.1:P/` into `http://127.0.0.1:P/` and
 * `http://[::ffff:127.0.0.1]:P/` into `http://[::ffff:7f00:1]:P/` before anything else sees them;
 * started at `http://127.0.0.1:P/` instead, a crawl would rightly fetch /decimal and /hex.
 *
 * For the crawl: load the site module by path with `--parse-workers 1` or more (only a worker's
 * timeout ends the loop on /hangs; on 2 cores the default is none, and the run would hang), and give
 * it a short `--request-timeout`: /trickle and /slow-headers take the whole timeout, every attempt.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
    constants as zlibConstants,
    crc32,
    createBrotliCompress,
    createDeflateRaw,
    type BrotliCompress,
    type DeflateRaw,
} from 'node:zlib';
import iconv from 'iconv-lite';
import type { FailureClass } from '../../src/vocabulary/failure.js';

/** Redirect hops from /chain/0 to the product page at /chain/30: three times a crawler's ~10-hop limit. */
export const CHAIN_HOPS = 30;
/** Links on /many-links: far more than a crawler should take from one page. */
export const MANY_LINKS = 10_000;
/** `<div>`s around /deep's title. */
export const DEEP_NESTING = 100_000;
/** What /gzip-bomb and /brotli-bomb decompress to: 1 GiB of zeros, ~1 MiB and ~13 KiB on the wire. */
export const BOMB_BYTES = 1 << 30;
/** The length of the relative link to /long/aaa…: 100 KiB. */
export const LONG_LINK_LENGTH = 100 * 1024;
/** The host names the suite's injected DNS lookup answers, and with what. Nothing else resolves. */
export const HOSTILE_DNS: Readonly<Record<string, string>> = {
    'shop.hostile.test': '127.0.0.1', // the start host
    'internal.hostile.test': '127.0.0.9', // in scope (the run allows hostile.test), but a forbidden loopback address
};
const METADATA_URL = 'http://169.254.169.254/latest/meta-data/';
const LONG_PATH = `/long/${'a'.repeat(LONG_LINK_LENGTH - '/long/'.length)}`;

export interface HostileExpectation {
    /** The request is dead-lettered with this reason. */
    reason?: string;
    /** Dead-lettered with a reason that depends on the HTTP client, but of this class. */
    failureClass?: FailureClass;
    /** The link is skipped before the queue and counted under this key of the run's `linksSkipped`. */
    linksSkipped?: 'offsite' | 'invalid';
    /** A record is stored with this exact title. */
    title?: string;
    /** The page is quarantined with an issue starting with this. */
    quarantine?: string;
}

export interface HostileCase {
    /** Where the server answers it: what `asked` would record. For a non-http link, the link itself. */
    path: string;
    /** The index page's link, when it is not `path` (another host, or this one spelled oddly). */
    href?: (site: { port: number; offsiteOrigin: string }) => string;
    /** The class of its link on the index: `p` (label `product`) or `m` (label `item`). */
    linkClass: 'p' | 'm';
    /** What the server sends there. */
    serves: string;
    /** What a safe crawler ends with. */
    expected: HostileExpectation;
    /** Asking the server for `path` at all is the failure. */
    neverAsked?: true;
}

export const NORMAL_PRODUCTS: ReadonlyArray<{ path: string; expected: { title: string; price: number } }> = [
    1, 2, 3, 4, 5,
].map((n) => ({
    path: `/products/${n}`,
    expected: { title: `Product ${n}`, price: 11.5 + n },
}));

export const HOSTILE_CASES: readonly HostileCase[] = [
    {
        path: '/huge-declared',
        linkClass: 'p',
        serves: 'Content-Length: 2147483648, six bytes, then nothing until the client leaves',
        expected: { reason: 'too-large' },
    }, // refused on the header, before reading
    {
        path: '/huge-streamed',
        linkClass: 'p',
        serves: 'chunked (no length), 1 MiB chunks for as long as the client reads',
        expected: { reason: 'too-large' },
    }, // cut while streaming (10 MiB cap)
    {
        path: '/gzip-bomb',
        linkClass: 'p',
        serves: `Content-Encoding: gzip, ~1 MiB that inflates to ${BOMB_BYTES} zero bytes`,
        expected: { reason: 'too-large' },
    }, // on the decompressed size
    {
        path: '/brotli-bomb',
        linkClass: 'p',
        serves: `Content-Encoding: br, ~13 KiB that decompresses to ${BOMB_BYTES} zero bytes`,
        expected: { reason: 'too-large' },
    },
    // The client's word for a premature close varies (undici: "other side
    // closed", UND_ERR_SOCKET; node:http: ECONNRESET); the class does not.
    {
        path: '/lying-length',
        linkClass: 'p',
        serves: 'Content-Length: 100000, 10 bytes, then the connection is closed',
        expected: { failureClass: 'transient' },
    }, // retried, then dead-lettered
    {
        path: '/trickle',
        linkClass: 'p',
        serves: '200 and headers at once, then one body byte a second, forever',
        expected: { reason: 'etimedout' },
    }, // the HTTP client's request timeout, which covers the body
    {
        path: '/slow-headers',
        linkClass: 'p',
        serves: 'the connection is accepted; nothing is ever sent',
        expected: { reason: 'timeout' },
    },
    {
        path: '/redirect-loop-a',
        linkClass: 'p',
        serves: '301 to /redirect-loop-b, which 301s back',
        expected: { reason: 'redirect-loop' },
    },
    // With the frontier's default of 10 hops, the request that would take
    // the 11th (/chain/10) is dead-lettered; /chain/11 on are never asked.
    {
        path: '/chain/0',
        linkClass: 'p',
        serves: `302 to /chain/1, … to /chain/${CHAIN_HOPS}, a product page`,
        expected: { reason: 'redirect-loop' },
    }, // or `too-many-redirects`, if the crawler names it so
    {
        path: '/redirect-offsite',
        linkClass: 'p',
        serves: '302 to <offsite origin>/x (127.0.0.2)',
        expected: { reason: 'offsite-redirect' },
    },
    {
        path: '/redirect-metadata',
        linkClass: 'p',
        serves: `302 to ${METADATA_URL}`,
        expected: { reason: 'offsite-redirect' },
    }, // never connected to
    {
        path: '/offsite',
        href: ({ offsiteOrigin }) => `${offsiteOrigin}/offsite`,
        linkClass: 'p',
        serves: 'a link to 127.0.0.2',
        expected: { linksSkipped: 'offsite' },
        neverAsked: true,
    },
    {
        path: '/latest/meta-data/',
        href: () => METADATA_URL,
        linkClass: 'p',
        serves: 'a link to the cloud metadata address',
        expected: { linksSkipped: 'offsite' },
        neverAsked: true,
    },
    {
        path: '/mapped',
        href: ({ port }) => `http://[::ffff:127.0.0.1]:${port}/mapped`,
        linkClass: 'p',
        serves: 'a link to 127.0.0.1 as an IPv4-mapped IPv6 address ([::ffff:7f00:1] once parsed)',
        expected: { linksSkipped: 'offsite' },
        neverAsked: true,
    },
    {
        path: '/decimal',
        href: ({ port }) => `http://2130706433:${port}/decimal`,
        linkClass: 'p',
        serves: 'a link to 127.0.0.1 as one decimal number (127.0.0.1 once parsed)',
        expected: { linksSkipped: 'offsite' },
        neverAsked: true,
    },
    {
        path: '/hex',
        href: ({ port }) => `http://0x7f.1:${port}/hex`,
        linkClass: 'p',
        serves: 'a link to 127.0.0.1 in hex, shortened (127.0.0.1 once parsed)',
        expected: { linksSkipped: 'offsite' },
        neverAsked: true,
    },
    { path: 'file:///etc/passwd', linkClass: 'p', serves: 'a file: link', expected: { linksSkipped: 'invalid' } },
    {
        path: 'javascript:alert(1)',
        linkClass: 'p',
        serves: 'a javascript: link',
        expected: { linksSkipped: 'invalid' },
    },
    { path: 'data:text/html,hi', linkClass: 'p', serves: 'a data: link', expected: { linksSkipped: 'invalid' } },
    // If asked anyway, the server answers 414 (it accepts request heads up to 256 KiB so that `asked` can record it).
    {
        path: LONG_PATH,
        linkClass: 'p',
        serves: `a same-site link ${LONG_LINK_LENGTH} characters long`,
        expected: { linksSkipped: 'invalid' },
        neverAsked: true,
    },
    // In scope (the run allows hostile.test); HOSTILE_DNS resolves it
    // to 127.0.0.9, where nothing listens. Refused before connecting.
    {
        path: '/secret',
        href: ({ port }) => `http://internal.hostile.test:${port}/secret`,
        linkClass: 'p',
        serves: 'a link to a name that resolves to 127.0.0.9',
        expected: { reason: 'forbidden-address' },
        neverAsked: true,
    },
    // The page itself is stored; of its links the crawler takes at most its per-page limit, as label `item`.
    {
        path: '/many-links',
        linkClass: 'm',
        serves: `${MANY_LINKS} links (class m) to /many-links/item/N, each a page titled "Item N"`,
        expected: { title: 'Many links' },
    },
    // A recursive walk of the tree overflows Node's default stack (it gives out near 11,000 levels).
    // htmlparser2 parses it in ~0.3 s, but a selector's walk into it is O(depth²) (domutils' find()
    // shifts and unshifts a stack as deep as the page): ~2 s to reach the title on the 2-core development
    // machine, ~5 s for a selector that matches nothing. The price comes before the nesting so the
    // product route's parse stays well inside the 10 s extract timeout and the page is stored.
    {
        path: '/deep',
        linkClass: 'p',
        serves: `<p class="price">, then ${DEEP_NESTING} nested <div>s around <h1 class="title">Deep title</h1>`,
        expected: { title: 'Deep title' },
    },
    {
        path: '/malformed',
        linkClass: 'p',
        serves:
            'stray </div>s, unquoted attributes, unclosed tags, ' +
            '<h1 class=title>Malformed ok to the end of the file',
        expected: { title: 'Malformed ok' },
    },
    // Each bad sequence is replaced per the WHATWG decoder (maximal subparts): FF
    // → 1, C3 28 → 1 and "(", E2 82 → 1, C0 AF → 2, ED A0 80 (a surrogate) → 3.
    {
        path: '/invalid-utf8',
        linkClass: 'p',
        serves: 'charset=utf-8, a title with invalid UTF-8 bytes',
        expected: {
            title: 'Bad \uFFFD byte \uFFFD( cut \uFFFD overlong \uFFFD\uFFFD surrogate \uFFFD\uFFFD\uFFFD end',
        },
    },
    {
        path: '/cp1252-meta',
        linkClass: 'p',
        serves: 'text/html (no charset), <meta charset="windows-1252">, windows-1252 bytes',
        expected: { title: 'Café Crème – 5€' },
    },
    {
        path: '/sjis-header',
        linkClass: 'p',
        serves: 'charset=Shift_JIS in the header, no meta, Shift_JIS bytes',
        expected: { title: '日本語のタイトル' },
    },
    // Half its bytes are NULs: a binary check must come after the BOM is honoured.
    {
        path: '/utf16-bom',
        linkClass: 'p',
        serves: 'text/html (no charset), UTF-16LE with a BOM (FF FE)',
        expected: { title: 'UTF-16 ünïcödé' },
    },
    // Not iso-8859-1 in the header: WHATWG reads it as windows-1252, the same as the meta, and nothing would be tested.
    {
        path: '/header-vs-meta',
        linkClass: 'p',
        serves: 'charset=utf-8 in the header, <meta charset="windows-1252">, UTF-8 bytes',
        expected: { title: 'Ünïcode wins' },
    }, // the header wins
    {
        path: '/binary',
        linkClass: 'p',
        serves: 'text/html, 64 KiB of random bytes, one in 16 a NUL',
        expected: { reason: 'binary-content' },
    }, // permanent
    { path: '/pdf', linkClass: 'p', serves: 'application/pdf', expected: { reason: 'unsupported-content-type' } },
    {
        path: '/throws',
        linkClass: 'p',
        serves: "a product page titled THROW; hostileSite's extractor throws on it",
        expected: { quarantine: 'extractor-error' },
    },
    // Ended by the parse worker's timeout: the crawl needs
    // --parse-workers 1 or more (default 0 on 2 cores), or it hangs.
    {
        path: '/hangs',
        linkClass: 'p',
        serves: "a product page titled HANG; hostileSite's extractor loops forever on it",
        expected: { quarantine: 'extractor-timeout' },
    },
];

export interface HostileSiteOptions {
    /** Address to listen on; loopback only. Default: 127.0.0.1. */
    host?: string;
    /** Default: 0, a free port. */
    port?: number;
    /**
     * Where /offsite and /redirect-offsite point. Default:
     * `http://127.0.0.2:<port>`, where nothing of ours listens.
     */
    offsiteOrigin?: string;
}

export interface HostileSite {
    /** `http://<host>:<port>`, no trailing slash. */
    origin: string;
    port: number;
    /** Every request in arrival order: its Host header and its target (path and query). */
    asked: Array<{ host: string; path: string }>;
    /** The most body bytes written to one response of the endless routes (/huge-*, /trickle). */
    readonly peakBytesSent: number;
    /** The most bytes one response ever held queued in the server, unsent: backpressure keeps it near a chunk. */
    readonly peakBuffered: number;
    /** Endless responses still open; each ends when its client goes away. */
    readonly openStreams: number;
    close(): Promise<void>;
}

const HTML = 'text/html; charset=utf-8';
const MiB = 1 << 20;

export async function startHostileSite(options: HostileSiteOptions = {}): Promise<HostileSite> {
    const host = options.host ?? '127.0.0.1';
    bombs ??= Promise.all([gzipOfZeros(BOMB_BYTES), brotliOfZeros(BOMB_BYTES)]);
    const [gzipBomb, brotliBomb] = await bombs;
    const asked: HostileSite['asked'] = [];
    const open = new Set<ServerResponse>();
    let peakBytesSent = 0;
    let peakBuffered = 0;
    let offsiteOrigin = '';
    let port = 0;

    /** Keeps `res` open until its client leaves, accounting for what it writes. */
    function endless(res: ServerResponse): { write(chunk: Buffer | string): boolean; stopped(): boolean } {
        let sent = 0;
        let closed = false;
        open.add(res);
        res.once('close', () => {
            closed = true;
            open.delete(res);
        });
        return {
            write(chunk) {
                sent += chunk.length;
                peakBytesSent = Math.max(peakBytesSent, sent);
                const more = res.write(chunk);
                peakBuffered = Math.max(peakBuffered, res.writableLength);
                return more;
            },
            stopped: () => closed,
        };
    }

    const exact: Record<string, (res: ServerResponse) => void> = {
        '/': (res) => send(res, 200, HTML, indexPage(port, offsiteOrigin)),
        '/robots.txt': (res) => send(res, 200, 'text/plain; charset=utf-8', 'User-agent: *\nAllow: /\n'),
        '/huge-declared': (res) => {
            res.writeHead(200, { 'content-type': HTML, 'content-length': '2147483648' });
            endless(res).write('<html>');
        },
        '/huge-streamed': (res) => {
            res.writeHead(200, { 'content-type': HTML });
            const stream = endless(res);
            const chunk = Buffer.alloc(MiB, ' ');
            const pump = (): void => {
                // Write until the socket's buffer is full, then wait for it to drain: never more than a chunk queued.
                while (!stream.stopped()) if (!stream.write(chunk)) return void res.once('drain', pump);
            };
            stream.write('<!DOCTYPE html><html><body>');
            pump();
        },
        '/gzip-bomb': (res) => send(res, 200, HTML, gzipBomb, { 'content-encoding': 'gzip' }),
        '/brotli-bomb': (res) => send(res, 200, HTML, brotliBomb, { 'content-encoding': 'br' }),
        '/lying-length': (res) => {
            res.writeHead(200, { 'content-type': HTML, 'content-length': '100000' });
            res.write('<html><h1>', () => res.destroy());
        },
        '/trickle': (res) => {
            res.writeHead(200, { 'content-type': HTML });
            const stream = endless(res);
            stream.write('<');
            const timer = setInterval(() => stream.write(' '), 1000);
            res.once('close', () => clearInterval(timer));
        },
        '/slow-headers': (res) => void endless(res),
        '/redirect-loop-a': (res) => redirect(res, 301, '/redirect-loop-b'),
        '/redirect-loop-b': (res) => redirect(res, 301, '/redirect-loop-a'),
        '/redirect-offsite': (res) => redirect(res, 302, `${offsiteOrigin}/x`),
        '/redirect-metadata': (res) => redirect(res, 302, METADATA_URL),
        '/many-links': (res) => {
            manyLinksPage ??= page(
                'Many links',
                Array.from({ length: MANY_LINKS }, (_, n) => `<a class="m" href="/many-links/item/${n}">${n}</a>`).join(
                    '\n',
                ),
            );
            send(res, 200, HTML, manyLinksPage);
        },
        '/deep': (res) => {
            deepPage ??= page(
                'Deep',
                `<p class="price">£9.99</p>\n${'<div>'.repeat(DEEP_NESTING)}` +
                    `<h1 class="title">Deep title</h1>${'</div>'.repeat(DEEP_NESTING)}`,
                undefined,
                '',
            );
            send(res, 200, HTML, deepPage);
        },
        '/malformed': (res) => send(res, 200, HTML, MALFORMED),
        '/invalid-utf8': (res) => send(res, 200, HTML, INVALID_UTF8),
        '/cp1252-meta': (res) =>
            send(
                res,
                200,
                'text/html',
                iconv.encode(page('Café Crème – 5€', '', '<meta charset="windows-1252">'), 'windows-1252'),
            ),
        '/sjis-header': (res) =>
            send(res, 200, 'text/html; charset=Shift_JIS', iconv.encode(page('日本語のタイトル', ''), 'Shift_JIS')),
        '/utf16-bom': (res) =>
            send(
                res,
                200,
                'text/html',
                Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(page('UTF-16 ünïcödé', ''), 'utf16le')]),
            ),
        '/header-vs-meta': (res) => send(res, 200, HTML, page('Ünïcode wins', '', '<meta charset="windows-1252">')),
        '/binary': (res) => {
            binaryBody ??= noisyBytes(64 * 1024);
            send(res, 200, 'text/html', binaryBody);
        },
        '/pdf': (res) =>
            send(
                res,
                200,
                'application/pdf',
                '%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n',
            ),
        '/throws': (res) => send(res, 200, HTML, page('THROW', '<p class="price">£1.00</p>')),
        '/hangs': (res) => send(res, 200, HTML, page('HANG', '<p class="price">£1.00</p>')),
        [LONG_PATH]: (res) => send(res, 414, HTML, page('URI Too Long', '')),
    };

    function respond(path: string, res: ServerResponse): void {
        const handler = exact[path];
        if (handler) {
            handler(res);
            return;
        }
        const [, kind, n] = /^\/(products|chain|many-links\/item)\/(\d+)$/.exec(path) ?? [];
        const number = Number(n);
        if (kind === 'products' && number >= 1 && number <= NORMAL_PRODUCTS.length) {
            const { title, price } = NORMAL_PRODUCTS[number - 1]!.expected;
            send(res, 200, HTML, page(title, `<p class="price">£${price.toFixed(2)}</p>`));
        } else if (kind === 'chain' && number < CHAIN_HOPS) redirect(res, 302, `/chain/${number + 1}`);
        else if (kind === 'chain' && number === CHAIN_HOPS)
            send(res, 200, HTML, page('Chain end', '<p class="price">£30.00</p>'));
        else if (kind === 'many-links/item' && number < MANY_LINKS) send(res, 200, HTML, page(`Item ${n}`, ''));
        else send(res, 404, HTML, page('Not found', ''));
    }

    // Heads up to 256 KiB, so that a crawler asking for the 100
    // KiB link is seen here rather than refused by Node (16 KiB).
    const server = createServer({ maxHeaderSize: 256 * 1024 }, (req: IncomingMessage, res: ServerResponse) => {
        const target = req.url ?? '/';
        asked.push({ host: req.headers.host ?? '', path: target });
        respond(target.replace(/\?.*$/s, ''), res);
    });
    await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(options.port ?? 0, host, resolve);
    });
    port = (server.address() as AddressInfo).port;
    offsiteOrigin = options.offsiteOrigin ?? `http://127.0.0.2:${port}`;

    return {
        origin: `http://${host}:${port}`,
        port,
        asked,
        get peakBytesSent() {
            return peakBytesSent;
        },
        get peakBuffered() {
            return peakBuffered;
        },
        get openStreams() {
            return open.size;
        },
        close: () =>
            new Promise<void>((resolve, reject) => {
                server.close((error) => (error ? reject(error) : resolve()));
                // The endless responses never finish on their own.
                server.closeAllConnections();
            }),
    };
}

function indexPage(port: number, offsiteOrigin: string): string {
    const links = [
        ...NORMAL_PRODUCTS.map(({ path }) => ({ href: path, linkClass: 'p' })),
        ...HOSTILE_CASES.map(({ path, href, linkClass }) => ({
            href: href?.({ port, offsiteOrigin }) ?? path,
            linkClass,
        })),
    ];
    return page(
        'Hostile shop',
        links
            .map(({ href, linkClass }) => `<a class="${linkClass}" href="${href}">${href.slice(0, 40)}</a>`)
            .join('\n'),
        undefined,
        '<h1>Hostile shop</h1>',
    );
}

/** An HTML page with `<h1 class="title">` (unless `h1` is given) and `body` after it. */
function page(
    title: string,
    body: string,
    head = '<meta charset="utf-8">',
    h1 = `<h1 class="title">${title}</h1>`,
): string {
    return `<!DOCTYPE html>\n<html><head>${head}<title>${title}</title></head>\n<body>${h1}\n${body}\n</body></html>\n`;
}

function send(
    res: ServerResponse,
    status: number,
    contentType: string,
    body: string | Buffer,
    headers: Record<string, string> = {},
): void {
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    res.writeHead(status, { 'content-type': contentType, 'content-length': bytes.length, ...headers }).end(bytes);
}

function redirect(res: ServerResponse, status: 301 | 302, location: string): void {
    res.writeHead(status, { location, 'content-length': 0 }).end();
}

const MALFORMED = `<!DOCTYPE html>
<html><head><title>Malformed page</title>
<body class=shop data-x=a"b>
</div></div></span>
<div class=wrap><p class=price>£4.00
<span>unclosed <b>bold <i>italic</div>
<img src=x.png alt=no quotes here>
</td></tr></table></section><ul><li>one<li>two
<h1 class=title>Malformed ok`;

const INVALID_UTF8 = Buffer.concat([
    Buffer.from(
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">' +
            '<title>Invalid UTF-8</title></head>\n<body><h1 class="title">',
    ),
    Buffer.from('Bad '),
    Buffer.from([0xff]),
    Buffer.from(' byte '),
    Buffer.from([0xc3, 0x28]),
    Buffer.from(' cut '),
    Buffer.from([0xe2, 0x82]),
    Buffer.from(' overlong '),
    Buffer.from([0xc0, 0xaf]),
    Buffer.from(' surrogate '),
    Buffer.from([0xed, 0xa0, 0x80]),
    Buffer.from(' end</h1>\n<p class="price">£2.00</p>\n</body></html>\n'),
]);

let bombs: Promise<[Buffer, Buffer]> | undefined;
let manyLinksPage: string | undefined;
let deepPage: string | undefined;
let binaryBody: Buffer | undefined;

/** Random bytes with every 16th a NUL: binary by any test, and not valid text in any charset. */
function noisyBytes(length: number): Buffer {
    const bytes = randomBytes(length);
    for (let i = 0; i < length; i += 16) bytes[i] = 0;
    return bytes;
}

/**
 * A gzip member of `total` zero bytes (a multiple of 1 MiB), built without compressing them all:
 * deflating 1 GiB takes ~5 s. Each MiB of zeros deflated from a fresh state and ended by a full flush
 * (which resets the state) comes out as the same ~1 KB, so that segment is repeated; the CRC-32 is
 * still computed over every byte (~0.4 s). hostile.test.ts inflates the whole result to check it.
 */
async function gzipOfZeros(total: number): Promise<Buffer> {
    const [segment, again, end] = await flushedSegments(createDeflateRaw({ level: 9 }), zlibConstants.Z_FULL_FLUSH);
    if (!segment!.equals(again!))
        throw new Error('deflate: a flushed MiB of zeros does not repeat; build the bomb by compressing all of it');
    const zero = Buffer.alloc(MiB);
    let crc = 0;
    for (let done = 0; done < total; done += MiB) crc = crc32(zero, crc);
    const trailer = Buffer.alloc(8);
    trailer.writeUInt32LE(crc, 0);
    trailer.writeUInt32LE(total % 2 ** 32, 4);
    const header = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 0xff]);
    return Buffer.concat([header, ...Array<Buffer>(total / MiB).fill(segment!), end!, trailer]);
}

/**
 * A brotli stream of `total` zero bytes the same way (compressing 1 GiB takes ~2 s): after the first
 * flushed MiB, which carries the stream header, every further flushed MiB is the same 13 bytes.
 */
async function brotliOfZeros(total: number): Promise<Buffer> {
    const [first, segment, again, end] = await flushedSegments(
        createBrotliCompress({ params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 5 } }),
        zlibConstants.BROTLI_OPERATION_FLUSH,
        3,
    );
    if (!segment!.equals(again!))
        throw new Error('brotli: a flushed MiB of zeros does not repeat; build the bomb by compressing all of it');
    return Buffer.concat([first!, ...Array<Buffer>(total / MiB - 1).fill(segment!), end!]);
}

/** The output for each of `count` MiB of zeros, each followed by `flush`, then what ending the stream adds. */
async function flushedSegments(stream: DeflateRaw | BrotliCompress, flush: number, count = 2): Promise<Buffer[]> {
    const segments: Buffer[] = [];
    let pending: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => pending.push(chunk));
    const take = () => {
        segments.push(Buffer.concat(pending));
        pending = [];
    };
    for (let i = 0; i < count; i++) {
        stream.write(Buffer.alloc(MiB));
        await new Promise<void>((resolve) => stream.flush(flush, () => resolve()));
        take();
    }
    const ended = new Promise<void>((resolve, reject) => stream.once('end', resolve).once('error', reject));
    stream.end();
    await ended;
    take();
    return segments;
}
