/**
 * Plain Node requests through the test proxies (proxyWorld.ts): an absolute-form GET with
 * Proxy-Authorization, as HTTP clients send through a forward proxy, and a GET inside a CONNECT
 * tunnel, as HTTPS clients (and browsers, for any scheme) do. Each uses a connection of its own.
 */
import { once } from 'node:events';
import { request, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

export interface Answer {
    status: number;
    headers: IncomingHttpHeaders;
    body: string;
}

/** What Chrome 120 on Linux sends: the header set the shop's anti-bot mode takes for a browser's. */
export const CHROME_HEADERS: Readonly<Record<string, string>> = {
    'user-agent':
        'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
    accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8',
    'accept-language': 'en-US,en;q=0.9',
    'sec-ch-ua': '"Not_A Brand";v="8", "Chromium";v="120", "Google Chrome";v="120"',
    'sec-ch-ua-mobile': '?0',
    'sec-ch-ua-platform': '"Linux"',
};

/** `Basic base64(user:password)` from a proxy URL's userinfo. */
export function proxyAuthorization(proxyUrl: string): string {
    const { username, password } = new URL(proxyUrl);
    return `Basic ${Buffer.from(`${decodeURIComponent(username)}:${decodeURIComponent(password)}`).toString('base64')}`;
}

/** GET `target` (an absolute URL) through the proxy; the proxy's own refusals (407) come back as answers too. */
export function viaProxy(proxyUrl: string, target: string, headers: Record<string, string> = {}): Promise<Answer> {
    const proxy = new URL(proxyUrl);
    return answer(
        request({
            host: proxy.hostname,
            port: proxy.port,
            path: target,
            agent: false,
            headers: { host: new URL(target).host, 'proxy-authorization': proxyAuthorization(proxyUrl), ...headers },
        }),
    );
}

/** GET `target` directly, from 127.0.0.1. */
export function direct(target: string, headers: Record<string, string> = {}): Promise<Answer> {
    return answer(request(target, { agent: false, headers }));
}

/**
 * CONNECT to `target`'s host and port through the proxy, then GET
 * its path inside the tunnel. A refused CONNECT is the answer.
 */
export async function viaTunnel(
    proxyUrl: string,
    target: string,
    headers: Record<string, string> = {},
): Promise<Answer> {
    const proxy = new URL(proxyUrl);
    const url = new URL(target);
    const connect = request({
        host: proxy.hostname,
        port: proxy.port,
        method: 'CONNECT',
        path: url.host,
        agent: false,
        headers: { host: url.host, 'proxy-authorization': proxyAuthorization(proxyUrl) },
    });
    connect.end();
    const [response, socket] = (await once(connect, 'connect')) as [IncomingMessage, Socket];
    if (response.statusCode !== 200) {
        socket.destroy();
        return { status: response.statusCode ?? 0, headers: response.headers, body: '' };
    }
    return answer(
        request({
            createConnection: () => socket,
            path: url.pathname + url.search,
            headers: { host: url.host, ...headers },
        }),
    );
}

function answer(req: ReturnType<typeof request>): Promise<Answer> {
    return new Promise((resolve, reject) => {
        req.on('error', reject);
        req.on('response', (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () =>
                resolve({
                    status: res.statusCode ?? 0,
                    headers: res.headers,
                    body: Buffer.concat(chunks).toString('utf8'),
                }),
            );
            res.on('error', reject);
        });
        req.end();
    });
}
