/**
 * The browser's way out: Chromium sends every request (the page, its scripts, images, XHRs,
 * WebSockets) to a proxy on loopback, one per exit, and that proxy connects only where the egress
 * allows. For the direct exit it resolves each host with the egress's checking lookup, so the
 * address checked is the address connected to, subresources included; for a proxy exit it checks
 * the host's addresses and hands the request to the upstream proxy, whose credentials stay in
 * this process (Chromium never sees them, so no page can read them). A refused request is
 * answered 403 (a CONNECT fails); the page goes on without it. proxy-chain is Crawlee's own proxy
 * library.
 */
import { RequestError, Server } from 'proxy-chain';
import type { Egress } from './egress.js';

export interface EgressProxy {
    /** The proxy's URL, for the browser's launch or context options. */
    url: string;
    close(): Promise<void>;
}

/** Starts the egress proxy of one exit: direct when `upstreamProxyUrl` is undefined. */
export async function startEgressProxy(egress: Egress, upstreamProxyUrl?: string): Promise<EgressProxy> {
    const server = new Server({
        host: '127.0.0.1',
        port: 0,
        verbose: false,
        prepareRequestFunction: async ({ hostname, port, isHttp }) => {
            // proxy-chain gives an IPv6 address in brackets already, as a URL writes it.
            const url = new URL(`${isHttp ? 'http' : 'https'}://${hostname}:${port}/`);
            if (!upstreamProxyUrl) {
                const refusal = egress.refusal(url);
                if (refusal) throw new RequestError(`forbidden-address: ${refusal}`, 403);
                return { dnsLookup: egress.lookup as never };
            }
            await egress.check(url).catch((error: Error) => {
                throw new RequestError(error.message, 403);
            });
            return { upstreamProxyUrl };
        },
    });
    await server.listen();
    return { url: `http://127.0.0.1:${server.port}`, close: () => server.close(true) };
}
