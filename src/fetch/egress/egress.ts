/**
 * Where a crawl may connect: http(s) only, to ports 80 and 443 or a port a start URL names, and
 * only to public addresses, so a page cannot steer the crawler at a cloud metadata service
 * (169.254.169.254), a database on the private network or the crawler's own machine.
 *
 * A host name is resolved once, by `lookup` here, and the connection is made to the address it
 * checked: the HTTP client connects with it (httpClient.ts: the pages, robots.txt and sitemaps), and
 * the browser's traffic goes through the same function (egressProxy.ts). There is no second resolution
 * for a rebinding DNS server to answer differently. A URL whose host is an address literal is
 * checked by `refusal` (Node does not call a lookup for those).
 *
 * Exempt: the start URLs' own hosts, whatever they resolve to (a site on loopback is crawled as
 * asked), and with `allowPrivateNetwork` the private ranges. Address classes are ipaddr.js's;
 * an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) is judged as the IPv4 address it carries, and
 * the WHATWG URL parser has already turned `2130706433` and `0x7f.1` into `127.0.0.1`.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import ipaddr from 'ipaddr.js';

/** `dns.lookup`'s shape, as node:net (the HTTP client's connections) and proxy-chain call it. */
export type LookupFunction = (
    hostname: string,
    options: LookupOneOptions | LookupAllOptions | number,
    callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void;

export interface EgressOptions {
    /** The URLs the run starts from: their hosts may have any address, their ports are allowed. */
    startUrls: readonly string[];
    /** Also connect to loopback, private (RFC 1918, fc00::/7), CGNAT and link-local addresses. Default: false. */
    allowPrivateNetwork?: boolean;
    /** Resolves host names, with `dns.lookup`'s signature. Default: `dns.lookup` (tests inject their own). */
    lookup?: LookupFunction;
}

/** The error a refused connection fails with; failures.ts classes it as the permanent `forbidden-address`. */
export class ForbiddenAddressError extends Error {
    override readonly name = 'ForbiddenAddressError';
    readonly code = 'ERR_FORBIDDEN_ADDRESS';

    constructor(detail: string) {
        super(`forbidden-address: ${detail}`);
    }
}

/** What `--allow-private-network` opens; multicast, broadcast, unspecified and reserved ranges stay refused. */
const PRIVATE_RANGES = new Set(['loopback', 'private', 'uniqueLocal', 'carrierGradeNat', 'linkLocal']);
const DEFAULT_PORTS = ['80', '443'];

export class Egress {
    private readonly exemptHosts: ReadonlySet<string>;
    private readonly allowedPorts: ReadonlySet<string>;
    private readonly allowPrivateNetwork: boolean;
    private readonly resolve: LookupFunction;

    constructor(options: EgressOptions) {
        const starts = options.startUrls.map((url) => new URL(url));
        this.exemptHosts = new Set(starts.map((url) => bareHost(url.hostname)));
        this.allowedPorts = new Set([...DEFAULT_PORTS, ...starts.map((url) => url.port).filter(Boolean)]);
        this.allowPrivateNetwork = options.allowPrivateNetwork ?? false;
        this.resolve = options.lookup ?? (dnsLookup as LookupFunction);
    }

    /**
     * Why `url` may not be requested at all (its scheme, its port,
     * an address literal as host), in words; undefined when it may.
     */
    refusal(url: URL): string | undefined {
        if (url.protocol !== 'http:' && url.protocol !== 'https:') return `scheme ${url.protocol} is not http(s)`;
        const port = url.port || (url.protocol === 'https:' ? '443' : '80');
        if (!this.allowedPorts.has(port)) return `port ${port} of ${url.hostname} is neither 80/443 nor a start URL's`;
        const host = bareHost(url.hostname);
        if (this.exemptHosts.has(host) || !ipaddr.isValid(host)) return undefined;
        const why = this.addressRefusal(host);
        return why && `${url.hostname} is ${why}`;
    }

    /** Throws ForbiddenAddressError when `url` may not be requested at all (see `refusal`). */
    assertAllowed(url: URL): void {
        const refusal = this.refusal(url);
        if (refusal) throw new ForbiddenAddressError(refusal);
    }

    /**
     * Throws ForbiddenAddressError when `url` may not be requested, its host's resolution
     * included. For requests that connect elsewhere (a proxy, the browser's egress proxy), which
     * resolve the host themselves: the address is checked here, not pinned.
     */
    async check(url: URL): Promise<void> {
        this.assertAllowed(url);
        if (ipaddr.isValid(bareHost(url.hostname))) return;
        await new Promise<void>((resolve, reject) =>
            this.lookup(url.hostname, { all: true }, (error) =>
                error instanceof ForbiddenAddressError ? reject(error) : resolve(),
            ),
        );
    }

    /**
     * What is checked before a request connects: through a proxy, which resolves the host itself,
     * the host's addresses too (`check`); direct, the URL alone (`assertAllowed`), since the
     * connection resolves the host with this egress's `lookup`.
     */
    async preflight(url: URL, { viaProxy }: { viaProxy: boolean }): Promise<void> {
        if (viaProxy) return this.check(url);
        this.assertAllowed(url);
    }

    /**
     * Resolves a host name and answers with only the addresses that may be connected to, failing
     * with ForbiddenAddressError when none may: the caller connects to what this returned.
     */
    readonly lookup: LookupFunction = (hostname, options, callback) => {
        const host = bareHost(hostname);
        const wantsAll = typeof options === 'object' && options.all === true;
        const family = typeof options === 'number' ? options : options.family;
        this.resolve(
            host,
            { all: true, family, hints: typeof options === 'object' ? options.hints : undefined },
            (error, found) => {
                if (error) return callback(error, wantsAll ? [] : '');
                const addresses = found as LookupAddress[];
                const allowed = this.exemptHosts.has(host)
                    ? addresses
                    : addresses.filter(({ address }) => !this.addressRefusal(address));
                const [first] = allowed;
                if (!first) {
                    const refused = addresses
                        .map(({ address }) => `${address} (${this.addressRefusal(address)})`)
                        .join(', ');
                    return callback(
                        new ForbiddenAddressError(`${host} resolves only to refused addresses: ${refused || 'none'}`),
                        wantsAll ? [] : '',
                    );
                }
                if (wantsAll) return callback(null, allowed);
                callback(null, first.address, first.family);
            },
        );
    };

    /** Why an address may not be connected to (its range, in words), or undefined for a public one. */
    private addressRefusal(address: string): string | undefined {
        const range = rangeOf(address);
        if (range === 'unicast' || (this.allowPrivateNetwork && PRIVATE_RANGES.has(range))) return undefined;
        return PRIVATE_RANGES.has(range)
            ? `a ${range} address (--allow-private-network opens it)`
            : `a ${range} address`;
    }
}

/**
 * The ipaddr.js range of an address. An IPv6 address that carries an IPv4 address is judged as
 * that one: IPv4-mapped (`::ffff:127.0.0.1`, ipaddr's `process`), NAT64 (64:ff9b::/96, how
 * IPv6-only networks reach IPv4 hosts) and the old IPv4-compatible form (`::127.0.0.1`, which
 * ipaddr.js calls plain unicast).
 */
function rangeOf(address: string): string {
    const parsed = ipaddr.process(address);
    if (parsed.kind() === 'ipv4') return parsed.range();
    const { parts } = parsed as ipaddr.IPv6;
    const range = parsed.range();
    const ipv4Compatible = range === 'unicast' && parts.slice(0, 6).every((part) => part === 0);
    if (range !== 'rfc6052' && !ipv4Compatible) return range;
    // An IPv6 address has eight 16-bit parts; the IPv4 address is the last two.
    const high = parts[6] ?? 0;
    const low = parts[7] ?? 0;
    return ipaddr.fromByteArray([high >> 8, high & 0xff, low >> 8, low & 0xff]).range();
}

/** A host as a lookup or an exemption compares it: no IPv6 brackets, no trailing dot, lower case. */
function bareHost(hostname: string): string {
    return hostname
        .replace(/^\[(.*)\]$/, '$1')
        .replace(/\.$/, '')
        .toLowerCase();
}
