import { isIP } from 'node:net';

/**
 * A site's scope: the hosts it may crawl. By default the hosts of its start URLs and their
 * subdomains (a start URL on `shop.example` lets in `www.shop.example`, not `example`); a site
 * module adds `allowedDomains`, the command line `--allow-domain`. A link elsewhere is skipped
 * (`linksSkipped.offsite`); a redirect elsewhere is dead-lettered as `offsite-redirect`.
 * An IP address is a host of its own: it matches only itself.
 */
export interface SiteScopeOptions {
    /** The URLs the run starts from: their hosts are in scope. */
    startUrls: readonly string[];
    /** More domains (each with its subdomains): the site's `allowedDomains` and `--allow-domain`. Default: none. */
    allowedDomains?: readonly string[];
}

export class SiteScope {
    /** The domains in scope, lower-case, without a trailing dot. */
    readonly domains: readonly string[];

    constructor({ startUrls, allowedDomains = [] }: SiteScopeOptions) {
        const hosts = startUrls.map((url) => new URL(url).hostname);
        this.domains = [...new Set([...hosts, ...allowedDomains].map(normalizeHost))];
    }

    /** Whether `url`'s host is one of the domains or a subdomain of one. */
    includes(url: URL): boolean {
        const host = normalizeHost(url.hostname);
        return this.domains.some((domain) => host === domain || (!isIpAddress(domain) && host.endsWith(`.${domain}`)));
    }
}

function normalizeHost(host: string): string {
    return host.toLowerCase().replace(/\.$/, '');
}

/** An IPv4 address, or an IPv6 one in the brackets URL.hostname gives it. */
function isIpAddress(host: string): boolean {
    return isIP(host.replace(/^\[(.*)\]$/, '$1')) !== 0;
}
