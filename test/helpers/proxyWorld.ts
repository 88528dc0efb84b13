/**
 * The proxy tiers of the test world: real forward proxies (proxy-chain) on 127.0.0.1, each asking
 * for its own username and a random password, and each sending its upstream traffic from its own
 * loopback source address (127.0.0.2, 127.0.0.3, … in order: datacenter first, then residential),
 * so the fixture shop's anti-bot mode (src/demo/antiBot.ts) sees one client per proxy, as a real
 * target sees one IP per proxy. Broken proxies answer every request and CONNECT with 407 whatever
 * credentials come. The proxies forward to loopback targets only: anything else is a 403.
 */
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { RequestError, Server, type PrepareRequestFunctionOpts, type PrepareRequestFunctionResult } from 'proxy-chain';

export interface ProxyWorldOptions {
    /** Datacenter proxies, broken ones included. Default: 4. */
    datacenter?: number;
    /** Residential proxies. Default: 2. */
    residential?: number;
    /** How many of the datacenter proxies (the last ones) are broken: 407 to everything. Default: 1. */
    broken?: number;
    /** Last octet of the first source address (127.0.0.<n>); the next proxies count up from it. Default: 2. */
    firstAddress?: number;
}

export type TierName = 'datacenter' | 'residential';

export interface ProxyTier {
    name: TierName;
    /** `http://USER:PASSWORD@127.0.0.1:PORT`, in address order. */
    proxyUrls: string[];
}

/** What one proxy has seen; no password in it, so a test may print it. */
export interface ProxyStats {
    tier: TierName;
    username: string;
    port: number;
    /** The source address it sends from (a broken proxy has one too, but never sends). */
    address: string;
    broken: boolean;
    /** Requests forwarded: absolute-form HTTP requests and CONNECT tunnels, authenticated. */
    requests: number;
    /** Of those, CONNECT tunnels. */
    tunnels: number;
    /** Requests answered 407 (wrong or missing credentials; every request of a broken proxy). */
    authFailures: number;
    /** Requests refused for a target outside 127.0.0.0/8. */
    refusedTargets: number;
    /** Client connections closed (proxy-chain's `connectionClosed`). */
    connectionsClosed: number;
    /** Requests that failed inside the proxy (proxy-chain's `requestFailed`: an upstream error it could not map). */
    failures: number;
}

export interface ProxyWorld {
    /** Cheapest first; a tier with no proxies is left out. */
    tiers: ProxyTier[];
    /** Source addresses of the working proxies, for the shop's `antiBot` options. */
    addresses: { datacenter: string[]; residential: string[] };
    /** Every proxy password, broken proxies' too: nothing should ever log or store one. */
    secrets: string[];
    /** The broken proxies' URLs (also in the datacenter tier). */
    brokenUrls: string[];
    /** `datacenter=url1,url2` per tier, as `--proxy-tier` takes it. */
    tierSpecs(): string[];
    stats(): ProxyStats[];
    /** Closes every proxy, dropping open connections. */
    close(): Promise<void>;
}

interface Proxy {
    server: Server;
    url: string;
    password: string;
    stats: ProxyStats;
}

export async function startProxyWorld(options: ProxyWorldOptions = {}): Promise<ProxyWorld> {
    const datacenter = options.datacenter ?? 4;
    const residential = options.residential ?? 2;
    const broken = options.broken ?? 1;
    const firstAddress = options.firstAddress ?? 2;
    for (const [name, value] of Object.entries({ datacenter, residential, broken })) {
        if (!Number.isInteger(value) || value < 0)
            throw new RangeError(`proxy world option ${name} must be a whole number >= 0`);
    }
    if (broken > datacenter) throw new RangeError('proxy world option broken must be at most datacenter');
    if (!(Number.isInteger(firstAddress) && firstAddress >= 2 && firstAddress + datacenter + residential <= 255)) {
        throw new RangeError('proxy world addresses must stay within 127.0.0.2-127.0.0.254');
    }

    const plan = [
        ...Array.from({ length: datacenter }, (_, i) => ({
            tier: 'datacenter' as const,
            username: `dc-${i + 1}`,
            broken: i >= datacenter - broken,
        })),
        ...Array.from({ length: residential }, (_, i) => ({
            tier: 'residential' as const,
            username: `res-${i + 1}`,
            broken: false,
        })),
    ];
    const proxies: Proxy[] = [];
    try {
        for (const [i, spec] of plan.entries())
            proxies.push(await startProxy({ ...spec, address: `127.0.0.${firstAddress + i}` }));
    } catch (error) {
        await Promise.all(proxies.map((proxy) => proxy.server.close(true)));
        throw error;
    }

    const working = (tier: TierName) =>
        proxies.filter((p) => p.stats.tier === tier && !p.stats.broken).map((p) => p.stats.address);
    const tiers = (['datacenter', 'residential'] as const)
        .map((name) => ({ name, proxyUrls: proxies.filter((p) => p.stats.tier === name).map((p) => p.url) }))
        .filter((tier) => tier.proxyUrls.length > 0);
    return {
        tiers,
        addresses: { datacenter: working('datacenter'), residential: working('residential') },
        secrets: proxies.map((p) => p.password),
        brokenUrls: proxies.filter((p) => p.stats.broken).map((p) => p.url),
        tierSpecs: () => tiers.map((tier) => `${tier.name}=${tier.proxyUrls.join(',')}`),
        stats: () => proxies.map((p) => ({ ...p.stats })),
        close: async () => {
            await Promise.all(proxies.map((proxy) => proxy.server.close(true)));
        },
    };
}

async function startProxy(spec: {
    tier: TierName;
    username: string;
    broken: boolean;
    address: string;
}): Promise<Proxy> {
    const password = randomBytes(12).toString('hex');
    const stats: ProxyStats = {
        ...spec,
        port: 0,
        requests: 0,
        tunnels: 0,
        authFailures: 0,
        refusedTargets: 0,
        connectionsClosed: 0,
        failures: 0,
    };
    const prepareRequestFunction = ({
        username,
        password: given,
        hostname,
        isHttp,
    }: PrepareRequestFunctionOpts): PrepareRequestFunctionResult => {
        if (spec.broken || username !== spec.username || given !== password) {
            stats.authFailures++;
            return { requestAuthentication: true, failMsg: 'Proxy credentials rejected' };
        }
        if (!isLoopback(hostname)) {
            stats.refusedTargets++;
            throw new RequestError(`The test proxies forward to 127.0.0.0/8 only, not ${hostname}`, 403);
        }
        stats.requests++;
        if (!isHttp) stats.tunnels++;
        // ipFamily 4: `localhost` could resolve to ::1, which a 127.0.0.x source address cannot reach.
        return { localAddress: spec.address, ipFamily: 4 };
    };
    const server = new Server({
        port: 0,
        host: '127.0.0.1',
        prepareRequestFunction,
        authRealm: `dragnet-${spec.tier}`,
    });
    server.on('connectionClosed', () => stats.connectionsClosed++);
    server.on('requestFailed', () => stats.failures++);
    await server.listen();
    stats.port = server.port;
    return { server, password, stats, url: `http://${spec.username}:${password}@127.0.0.1:${server.port}` };
}

function isLoopback(hostname: string): boolean {
    const host = hostname.replace(/^\[|\]$/g, '');
    if (host === 'localhost') return true;
    return isIP(host) === 4 && host.startsWith('127.');
}
