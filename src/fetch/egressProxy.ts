/**
 * The browser's way out: Chromium sends every request (the page, its scripts, images, XHRs,
 * WebSockets) to this proxy on loopback, and the proxy connects only where the egress allows,
 * resolving each host with the egress's checking lookup. Chromium then resolves no host itself,
 * so the address checked is the address connected to, subresources included. A refused request
 * is answered 403 (a CONNECT fails); the page goes on without it. proxy-chain is Crawlee's own
 * proxy library.
 */
import { RequestError, Server } from 'proxy-chain';
import type { Egress } from './egress.js';

export interface EgressProxy {
    /** The proxy's URL, for the browser's launch options. */
    url: string;
    close(): Promise<void>;
}

export async function startEgressProxy(egress: Egress): Promise<EgressProxy> {
    const server = new Server({
        host: '127.0.0.1',
        port: 0,
        verbose: false,
        prepareRequestFunction: ({ hostname, port, isHttp }) => {
            // proxy-chain gives an IPv6 address in brackets already, as a URL writes it.
            const refusal = egress.refusal(new URL(`${isHttp ? 'http' : 'https'}://${hostname}:${port}/`));
            if (refusal) throw new RequestError(`forbidden-address: ${refusal}`, 403);
            return { dnsLookup: egress.lookup as never };
        },
    });
    await server.listen();
    return { url: `http://127.0.0.1:${server.port}`, close: () => server.close(true) };
}
