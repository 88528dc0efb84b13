/**
 * What the browser stage's pages never load: images, media, fonts and stylesheets (no field we
 * extract is in them) and the ad, analytics and tag-manager hosts most shops embed, whose scripts
 * only cost CPU and requests and never fill a field. Chromium drops a matching request itself
 * (CDP `Network.setBlockedURLs`, as Crawlee's `blockRequests` does): no round trip to Node per
 * request, unlike request interception. A pattern matches anywhere in the URL; `*` is a wildcard.
 * The page's own document is never blocked.
 */

/** Crawlee's blockRequests defaults, and the rest of the images, fonts and media a page pulls in. */
const RESOURCE_PATTERNS = [
    '.css',
    '.jpg',
    '.jpeg',
    '.png',
    '.svg',
    '.gif',
    '.woff',
    '.pdf',
    '.zip',
    '.webp',
    '.avif',
    '.ico',
    '.bmp',
    '.woff2',
    '.ttf',
    '.otf',
    '.eot',
    '.mp4',
    '.webm',
    '.mp3',
    '.ogg',
    '.wav',
    '.m4a',
    '.mov',
];

/** Ads, analytics, tag managers, session recorders and error trackers. */
const THIRD_PARTY_HOSTS = [
    'google-analytics.com',
    'googletagmanager.com',
    'doubleclick.net',
    'googlesyndication.com',
    'googleadservices.com',
    'connect.facebook.net',
    'hotjar.com',
    'cdn.segment.com',
    'api.segment.io',
    'mixpanel.com',
    'amplitude.com',
    'clarity.ms',
    'bat.bing.com',
    'scorecardresearch.com',
    'quantserve.com',
    'criteo.com',
    'criteo.net',
    'taboola.com',
    'outbrain.com',
    'nr-data.net',
    'js-agent.newrelic.com',
    'sentry.io',
    'sentry-cdn.com',
    'widget.intercom.io',
    'cdn.optimizely.com',
    'adnxs.com',
    'amazon-adsystem.com',
    'ads-twitter.com',
    'analytics.tiktok.com',
];

/**
 * The patterns for a crawl of `siteHosts` (its start URLs' hosts): a listed host the site itself
 * is on, or under, stays allowed (crawling a tracker's own site still renders it).
 */
export function blockedUrlPatterns(siteHosts: readonly string[]): string[] {
    const ownHost = (listed: string) =>
        siteHosts.some((host) => host === listed || host.endsWith(`.${listed}`) || listed.endsWith(`.${host}`));
    const hosts = THIRD_PARTY_HOSTS.filter((listed) => !ownHost(listed));
    // The scheme's `//` anchors the host: `*//*.hotjar.com/*` and
    // `*//hotjar.com/*`, not `notjar.com`'s pages that mention it.
    return [...RESOURCE_PATTERNS, ...hosts.flatMap((host) => [`*//${host}/*`, `*//*.${host}/*`])];
}
