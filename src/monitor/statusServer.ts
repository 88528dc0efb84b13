/**
 * The live endpoint of a run (`--metrics-port`): `GET /metrics` for Prometheus, `GET /status`
 * for a person or a script — the same numbers as the progress line, as JSON. Anything else is
 * a 404. It listens on loopback unless told otherwise: a run's numbers are nobody else's business
 * until someone decides they are.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metrics } from './metrics.js';

export interface StatusServerOptions {
    /** The port to listen on; 0 picks a free one (see `port` on the result). */
    port: number;
    /** The address to listen on. Default: 127.0.0.1. */
    host?: string;
    metrics: Pick<Metrics, 'scrape'>;
    /** The body of `/status`, built at each request. */
    status: () => object;
}

export interface StatusServer {
    /** `http://host:port`, no trailing slash. */
    url: string;
    /** The bound port. */
    port: number;
    close(): Promise<void>;
}

/** The address listened on when none is given. */
export const DEFAULT_METRICS_HOST = '127.0.0.1';

export async function startStatusServer({
    port,
    host = DEFAULT_METRICS_HOST,
    metrics,
    status,
}: StatusServerOptions): Promise<StatusServer> {
    const server = createServer((request, response) => {
        respond(request, response, metrics, status).catch((error: unknown) => {
            const message = error instanceof Error ? error.message : String(error);
            if (!response.headersSent) reply(response, 500, 'text/plain; charset=utf-8', `${message}\n`);
            else response.destroy();
        });
    });
    await new Promise<void>((resolve, reject) => {
        server.once('error', (error: NodeJS.ErrnoException) => {
            reject(new Error(`cannot serve metrics on ${host}:${port}: ${error.code ?? error.message}`));
        });
        server.listen(port, host, () => resolve());
    });
    const bound = (server.address() as AddressInfo).port;
    const urlHost = host.includes(':') ? `[${host}]` : host;
    return {
        url: `http://${urlHost}:${bound}`,
        port: bound,
        close: () =>
            new Promise<void>((resolve, reject) => {
                server.close((error) => (error ? reject(error) : resolve()));
                // A scraper's keep-alive connection would otherwise hold the run open.
                server.closeAllConnections();
            }),
    };
}

async function respond(
    request: IncomingMessage,
    response: ServerResponse,
    metrics: StatusServerOptions['metrics'],
    status: StatusServerOptions['status'],
): Promise<void> {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (path !== '/metrics' && path !== '/status')
        return reply(response, 404, 'text/plain; charset=utf-8', 'not found: try /metrics or /status\n');
    if (request.method !== 'GET' && request.method !== 'HEAD') {
        response.setHeader('allow', 'GET, HEAD');
        return reply(response, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
    }
    if (path === '/metrics') {
        const { contentType, body } = await metrics.scrape();
        return reply(response, 200, contentType, body, request.method === 'HEAD');
    }
    return reply(
        response,
        200,
        'application/json; charset=utf-8',
        `${JSON.stringify(status())}\n`,
        request.method === 'HEAD',
    );
}

function reply(response: ServerResponse, code: number, contentType: string, body: string, headOnly = false): void {
    response.writeHead(code, {
        'content-type': contentType,
        'content-length': Buffer.byteLength(body),
        'cache-control': 'no-store',
    });
    response.end(headOnly ? undefined : body);
}
