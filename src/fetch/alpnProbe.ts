/**
 * got-scraping asks an https origin which protocol it speaks (ALPN: h2 or http/1.1) before the
 * request, to generate headers of the right kind, and that probe opens its own TLS connection,
 * resolving the host by the system's DNS: past the egress's checks, and a second resolution a
 * rebinding DNS server could answer differently. So the stage asks first, through the egress's
 * lookup, and leaves the answer in http2-wrapper's protocol cache, where got-scraping's probe
 * finds it and connects no more. (With a proxy, got-scraping probes through the proxy instead.)
 */
import { connect } from 'node:tls';
import http2 from 'http2-wrapper';
import type { Egress, LookupFunction } from './egress.js';

type ResolveProtocol = (options: object) => Promise<{ alpnProtocol: string }>;

export function alpnProbe(lookup: LookupFunction, timeoutMs: number): (url: URL) => Promise<void> {
    const resolveProtocol = (http2.auto as unknown as { createResolveProtocol: (...args: unknown[]) => ResolveProtocol }).createResolveProtocol(
        http2.auto.protocolCache,
        new Map(),
        async (options: object, callback: () => void) => connect({ ...options, lookup }, callback),
    );
    return async (url) => {
        if (url.protocol !== 'https:') return;
        // The same options got-scraping's probe gives, so the cache key (host, port, protocols) matches.
        await resolveProtocol({
            host: url.hostname,
            port: url.port || 443,
            rejectUnauthorized: false,
            ALPNProtocols: ['h2', 'http/1.1'],
            servername: url.hostname,
            timeout: timeoutMs,
        });
    };
}

/**
 * What a fetch of its own (robots.txt, a sitemap) checks of a URL before it connects: through a
 * proxy, which resolves the host itself, the host's addresses (checked, not pinned); direct, the URL,
 * and the protocol asked through the egress's lookup. Throws what the egress throws.
 */
export function egressPreflight(egress: Egress, timeoutMs: number): (url: URL, viaProxy: boolean) => Promise<void> {
    const probeAlpn = alpnProbe(egress.lookup, timeoutMs);
    return async (url, viaProxy) => {
        if (viaProxy) return egress.check(url);
        egress.assertAllowed(url);
        await probeAlpn(url);
    };
}
