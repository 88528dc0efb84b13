/**
 * How the HTTP client's connections to sites are made (undici's `connect` hook): straight to the
 * host, its name resolved by the given lookup (the egress's), or through a proxy's CONNECT tunnel;
 * then, for https, TLS with Chrome's settings (tlsProfile.ts) and Chrome's ALPN order, h2 first.
 *
 * The tunnel is ours rather than undici's ProxyAgent: when a proxy closes a CONNECT without
 * answering (proxy-chain does, for a site that refuses), ProxyAgent 7.30 reports "other side
 * closed" (UND_ERR_SOCKET), which undici takes for a recoverable socket error: it connects again at
 * once, thousands of times a second, and the request's abort signal never ends it. Every failure
 * here has a code undici fails the waiting requests on:
 * - `ERR_TUNNEL_REFUSED` (with the proxy's `status`): the proxy answered CONNECT with another status;
 * - `ECONNRESET`: it closed the connection before answering;
 * - `UND_ERR_CONNECT_TIMEOUT`: no connection, answer or handshake within `timeoutMs`;
 * - and Node's own (ECONNREFUSED, ENOTFOUND, TLS errors), or the lookup's (forbidden-address).
 */
import net from 'node:net';
import tls from 'node:tls';
import type { buildConnector } from 'undici';
import type { LookupFunction } from '../egress/egress.js';
import { CHROME_TLS } from './tlsProfile.js';

export interface ConnectorOptions {
    /** Resolves the site's host for a direct connection. Default: `dns.lookup`. */
    lookup?: LookupFunction;
    /**
     * Connect through this proxy's CONNECT tunnel (`http://user:password@host:port`, or https://) instead of directly.
     */
    proxyUrl?: string;
    /** For the connection, the tunnel and the TLS handshake together. */
    timeoutMs: number;
}

/** Chrome's: HTTP/2 first. */
const ALPN = ['h2', 'http/1.1'];
/** The most a proxy's answer to CONNECT may take before its blank line; more is no proxy. */
const MAX_TUNNEL_ANSWER_BYTES = 16 * 1024;

export function connector(options: ConnectorOptions): buildConnector.connector {
    const proxy = options.proxyUrl ? new URL(options.proxyUrl) : undefined;
    return ({ hostname, port, protocol, servername }, callback) => {
        const host = hostname.replace(/^\[(.*)\]$/, '$1');
        const targetPort = Number(port) || (protocol === 'https:' ? 443 : 80);
        let done = false;
        const finish = (...[error, socket]: [error: Error] | [error: null, socket: net.Socket]) => {
            if (done) return;
            done = true;
            clearTimeout(timer);
            if (error === null) {
                callback(null, socket);
            } else {
                raw.destroy();
                callback(error, null);
            }
        };
        const raw = proxy
            ? openToProxy(proxy)
            : net.connect({ host, port: targetPort, ...(options.lookup ? { lookup: options.lookup } : {}) });
        const timer = setTimeout(
            () =>
                finish(
                    coded(
                        `connect timeout: no connection to ${host}:${targetPort} within ${options.timeoutMs} ms`,
                        'UND_ERR_CONNECT_TIMEOUT',
                    ),
                ),
            options.timeoutMs,
        );
        raw.once('error', (error) => finish(error));
        const secure = (socket: net.Socket) => {
            if (protocol !== 'https:') return finish(null, socket);
            const name = servername || (net.isIP(host) ? undefined : host);
            const secured = tls.connect({ ...CHROME_TLS, socket, servername: name, ALPNProtocols: ALPN });
            secured.once('error', (error) => finish(error));
            secured.once('secureConnect', () => finish(null, secured));
        };
        if (!proxy) {
            raw.once('connect', () => secure(raw));
            return;
        }
        raw.once(proxy.protocol === 'https:' ? 'secureConnect' : 'connect', () => {
            raw.write(connectRequest(proxy, `${host.includes(':') ? `[${host}]` : host}:${targetPort}`));
            readTunnelAnswer(raw, (error) => (error ? finish(error) : secure(raw)));
        });
    };
}

function openToProxy(proxy: URL): net.Socket {
    const port = Number(proxy.port) || (proxy.protocol === 'https:' ? 443 : 80);
    const host = proxy.hostname.replace(/^\[(.*)\]$/, '$1');
    return proxy.protocol === 'https:'
        ? tls.connect({ host, port, servername: net.isIP(host) ? undefined : host, rejectUnauthorized: false })
        : net.connect({ host, port });
}

function connectRequest(proxy: URL, authority: string): string {
    const credentials = proxy.username
        ? `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`
        : undefined;
    const authorization = credentials
        ? `Proxy-Authorization: Basic ${Buffer.from(credentials).toString('base64')}\r\n`
        : '';
    return (
        `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${authorization}Proxy-Connection: ` +
        `keep-alive\r\n\r\n`
    );
}

/** Reads the proxy's answer to CONNECT up to its blank line; calls back with nothing when it is 200. */
function readTunnelAnswer(socket: net.Socket, callback: (error?: Error) => void): void {
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end === -1) {
            if (head.length > MAX_TUNNEL_ANSWER_BYTES)
                stop(
                    coded(
                        `the proxy's answer to CONNECT has no end within ${MAX_TUNNEL_ANSWER_BYTES} bytes`,
                        'ECONNRESET',
                    ),
                );
            return;
        }
        const statusLine = head.subarray(0, head.indexOf('\r\n')).toString('latin1');
        const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
        if (status !== 200)
            return stop(
                Object.assign(
                    coded(`the proxy refused the tunnel: CONNECT answered "${statusLine}"`, 'ERR_TUNNEL_REFUSED'),
                    { status: status || undefined },
                ),
            );
        const rest = head.subarray(end + 4);
        stop();
        if (rest.length > 0) socket.unshift(rest);
    };
    const onClose = () => stop(coded('the proxy closed the connection before answering CONNECT', 'ECONNRESET'));
    const stop = (error?: Error) => {
        socket.off('data', onData);
        socket.off('close', onClose);
        socket.pause();
        callback(error);
    };
    socket.on('data', onData);
    socket.once('close', onClose);
}

function coded(message: string, code: string): Error {
    return Object.assign(new Error(message), { code });
}
