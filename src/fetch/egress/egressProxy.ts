/**
 * The browser's way out: Chromium sends every request (the page, its scripts, images, XHRs,
 * WebSockets) to a proxy on loopback, one per exit, and that proxy connects only where the egress
 * allows. For the direct exit it resolves each host with the egress's checking lookup, so the
 * address checked is the address connected to, subresources included; for a proxy exit it checks
 * the host's addresses and hands the request to the upstream proxy, whose credentials stay in
 * this process (Chromium never sees them, so no page can read them). A refused request is
 * answered 403 (a CONNECT fails); the page goes on without it. proxy-chain is Crawlee's own proxy
 * library.
 *
 * A plain-http request goes to the upstream proxy through a CONNECT tunnel opened before the
 * request is forwarded, as the HTTP client sends it (proxyTunnel.ts). That way the upstream proxy
 * sees one kind of traffic from either wire profile, and a proxy that cannot be reached is told
 * apart from a site that cannot: proxy-chain would answer both with the same 594, which reads as
 * the site's refusal. The egress proxy answers its own failure to reach the exit with 590, the
 * status a proxy gives when its upstream proxy failed (failures.ts classes it as the exit's).
 */
import http from 'node:http';
import type net from 'node:net';
import { RequestError, Server } from 'proxy-chain';
import type { Egress } from './egress.js';
import { openTunnel } from './proxyTunnel.js';

export interface EgressProxy {
    /** The proxy's URL, for the browser's launch or context options. */
    url: string;
    close(): Promise<void>;
}

/** proxy-chain's `badGatewayStatusCodes.NON_200`: the upstream proxy failed. */
const UPSTREAM_PROXY_FAILED = 590;
/** proxy-chain's `badGatewayStatusCodes.AUTH_FAILED`: the upstream proxy refused our credentials. */
const UPSTREAM_PROXY_AUTH_FAILED = 597;
/** How long the tunnel to the upstream proxy may take, as the HTTP client's connection (httpClient.ts). */
const TUNNEL_TIMEOUT_MS = 10_000;

/** Starts the egress proxy of one exit: direct when `upstreamProxyUrl` is undefined. */
export async function startEgressProxy(egress: Egress, upstreamProxyUrl?: string): Promise<EgressProxy> {
    const upstream = upstreamProxyUrl ? new URL(upstreamProxyUrl) : undefined;
    const server = new Server({
        host: '127.0.0.1',
        port: 0,
        verbose: false,
        prepareRequestFunction: async ({ hostname, port, isHttp }) => {
            // proxy-chain gives an IPv6 address in brackets already, as a URL writes it.
            const url = new URL(`${isHttp ? 'http' : 'https'}://${hostname}:${port}/`);
            if (!upstream) {
                const refusal = egress.refusal(url);
                if (refusal) throw new RequestError(`forbidden-address: ${refusal}`, 403);
                return { dnsLookup: egress.lookup as never };
            }
            await egress.check(url).catch((error: Error) => {
                throw new RequestError(error.message, 403);
            });
            if (!isHttp) return { upstreamProxyUrl };
            return { httpAgent: agentOver(await tunnelTo(upstream, `${hostname}:${port}`)) };
        },
    });
    await server.listen();
    return { url: `http://127.0.0.1:${server.port}`, close: () => server.close(true) };
}

/**
 * The upstream proxy's tunnel to `authority` (`host:port`). Its refusal of the tunnel is passed on with its own
 * status (a 594 there is the site's refusal), but a 407 as 597: Chromium would take a 407 from its
 * own proxy for a challenge to answer. No answer at all is the exit's fault.
 */
function tunnelTo(proxy: URL, authority: string): Promise<net.Socket> {
    return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
            socket.destroy();
            reject(
                new RequestError(
                    `the proxy is unreachable: no tunnel within ${TUNNEL_TIMEOUT_MS} ms`,
                    UPSTREAM_PROXY_FAILED,
                ),
            );
        }, TUNNEL_TIMEOUT_MS);
        const socket = openTunnel(proxy, authority, (error) => {
            clearTimeout(timer);
            if (!error) return resolve(socket);
            socket.destroy();
            const { code, status } = error as { code?: string; status?: number };
            if (code !== 'ERR_TUNNEL_REFUSED' || status === undefined)
                return reject(new RequestError(`the proxy is unreachable: ${error.message}`, UPSTREAM_PROXY_FAILED));
            reject(new RequestError(error.message, status === 407 ? UPSTREAM_PROXY_AUTH_FAILED : status));
        });
    });
}

/** An agent whose one connection is `socket`, closed once its one request is done. */
function agentOver(socket: net.Socket): http.Agent {
    const agent = new http.Agent({ keepAlive: false });
    agent.createConnection = () => socket.resume();
    return agent;
}
