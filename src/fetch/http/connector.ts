/**
 * How the HTTP client's connections to sites are made (undici's `connect` hook): straight to the
 * host, its name resolved by the given lookup (the egress's), or through a proxy's CONNECT tunnel;
 * then, for https, TLS with Chrome's settings (tlsProfile.ts) and Chrome's ALPN order, h2 first.
 *
 * The tunnel is ours rather than undici's ProxyAgent: when a proxy closes a CONNECT without
 * answering (proxy-chain does, for a site that refuses), ProxyAgent 7.30 reports "other side
 * closed" (UND_ERR_SOCKET), which undici takes for a recoverable socket error: it connects again at
 * once, thousands of times a second, and the request's abort signal never ends it. Every failure
 * here has a code undici fails the waiting requests on: the tunnel's (proxyTunnel.ts);
 * `UND_ERR_CONNECT_TIMEOUT`, for no connection, answer or handshake within `timeoutMs`; Node's own
 * (ECONNREFUSED, ENOTFOUND, TLS errors); or the lookup's (forbidden-address).
 */
import net from 'node:net';
import tls from 'node:tls';
import type { buildConnector } from 'undici';
import type { LookupFunction } from '../egress/egress.js';
import { coded, openTunnel } from '../egress/proxyTunnel.js';
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
        const authority = `${host.includes(':') ? `[${host}]` : host}:${targetPort}`;
        const raw = proxy
            ? openTunnel(proxy, authority, (error) => (error ? finish(error) : secure(raw)))
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
        if (!proxy) raw.once('connect', () => secure(raw));
    };
}
