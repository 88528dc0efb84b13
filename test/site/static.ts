/**
 * A static file server for saved sites (test/fixtures/<host>/), so a real browser or crawler
 * can load them from 127.0.0.1 the way it would load the live site.
 *
 * The fixture tree mirrors URL paths: `/x/` is `x/index.html`, `/x` (a directory) redirects
 * to `/x/`, and `/api/quotes?page=N` is `api/quotes/page-N.json` (a static tree cannot hold
 * query strings; see test/fixtures/quotes.toscrape.com/MANIFEST.md).
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { extname, isAbsolute, join, relative, resolve } from 'node:path';

export interface StaticSiteOptions {
    /**
     * Serve the npm `jquery` package at `/static/jquery.js`; the saved JS pages load it from there
     * but the fixtures may not include script files. Default: true.
     */
    jquery?: boolean;
    /** Port on 127.0.0.1. Default: 0, a free one. */
    port?: number;
}

export interface StaticSite {
    /** Base URL without a trailing slash, e.g. `http://127.0.0.1:40123`. */
    url: string;
    port: number;
    /** Request targets (path and query) in the order they arrived. */
    requests: string[];
    close(): Promise<void>;
}

const CONTENT_TYPES: Record<string, string> = {
    '.html': 'text/html; charset=utf-8',
    '.css': 'text/css; charset=utf-8',
    '.js': 'text/javascript; charset=utf-8',
    '.json': 'application/json',
    '.jpg': 'image/jpeg',
    '.jpeg': 'image/jpeg',
    '.png': 'image/png',
    '.gif': 'image/gif',
    '.svg': 'image/svg+xml',
    '.ico': 'image/x-icon',
};

const JQUERY_PATH = '/static/jquery.js';

export async function startStaticSite(rootDir: string, options: StaticSiteOptions = {}): Promise<StaticSite> {
    const root = resolve(rootDir);
    const jquery =
        (options.jquery ?? true) ? createRequire(import.meta.url).resolve('jquery/dist/jquery.min.js') : undefined;
    const requests: string[] = [];

    const server = createServer((req, res) => {
        requests.push(req.url ?? '');
        handle(req, res).catch(() => {
            if (!res.headersSent) notFound(res);
            else res.destroy();
        });
    });

    async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
        if (req.method !== 'GET' && req.method !== 'HEAD') {
            res.writeHead(405, { allow: 'GET, HEAD' }).end();
            return;
        }
        const url = new URL(req.url ?? '/', 'http://127.0.0.1');
        let pathname: string;
        try {
            pathname = decodeURIComponent(url.pathname);
        } catch {
            return notFound(res);
        }

        if (jquery && pathname === JQUERY_PATH) return sendFile(req, res, jquery);

        if (pathname === '/api/quotes' || pathname === '/api/quotes/') {
            const page = url.searchParams.get('page') ?? '1';
            if (!/^\d+$/.test(page)) return notFound(res);
            pathname = `/api/quotes/page-${page}.json`;
        }

        // `..` in the raw path is already collapsed by URL parsing, but an encoded `%2F..` is not.
        const file = join(root, pathname);
        const inside = relative(root, file);
        if (pathname.includes('\0') || inside.startsWith('..') || isAbsolute(inside)) return notFound(res);

        const info = await stat(file).catch(() => undefined);
        if (info?.isDirectory()) {
            if (!pathname.endsWith('/')) {
                res.writeHead(301, { location: `${url.pathname}/${url.search}` }).end();
                return;
            }
            return sendFile(req, res, join(file, 'index.html'));
        }
        if (info?.isFile()) return sendFile(req, res, file);
        notFound(res);
    }

    async function sendFile(req: IncomingMessage, res: ServerResponse, file: string): Promise<void> {
        const info = await stat(file).catch(() => undefined);
        if (!info?.isFile()) return notFound(res);
        res.writeHead(200, {
            'content-type': CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream',
            'content-length': info.size,
        });
        if (req.method === 'HEAD') {
            res.end();
            return;
        }
        createReadStream(file)
            .on('error', () => res.destroy())
            .pipe(res);
    }

    await new Promise<void>((resolveListen, reject) => {
        server.once('error', reject);
        server.listen(options.port ?? 0, '127.0.0.1', () => resolveListen());
    });
    const { port } = server.address() as AddressInfo;

    return {
        url: `http://127.0.0.1:${port}`,
        port,
        requests,
        close: () =>
            new Promise<void>((resolveClose, reject) => {
                server.close((error) => (error ? reject(error) : resolveClose()));
                // A browser keeps connections alive; without this, close() waits for them to time out.
                server.closeAllConnections();
            }),
    };
}

function notFound(res: ServerResponse): void {
    const body =
        '<!DOCTYPE html><html><head><title>404 Not Found</title></head><body><h1>Not Found</h1></body></html>\n';
    res.writeHead(404, { 'content-type': CONTENT_TYPES['.html'], 'content-length': Buffer.byteLength(body) }).end(body);
}
