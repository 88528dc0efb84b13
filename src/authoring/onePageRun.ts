/**
 * One page fetched the way a run fetches it: `crawl()` itself, over a site cut down to that page, in a
 * storage dir of its own that is deleted afterwards. So the request goes out with a run's headers,
 * session, proxy tier, egress and size checks, retries and robots.txt, and comes back as a run stores
 * it (the raw page, or a dead-letter entry with its reason) — and the site's own stores are never
 * opened.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CrawlOptions } from '../options/crawlOptions.js';
import { crawl } from '../run.js';
import type { RenderPolicy, Route, Site } from '../site/site.js';
import { DeadLetterStore } from '../store/deadLetterStore.js';
import { ArchiveStore, archiveDirOf } from '../store/archive/archiveStore.js';
import type { RawPage } from '../store/archive/rawPage.js';
import type { DeadLetterEntry } from '../vocabulary/failure.js';
import type { LinksSkipped } from '../vocabulary/report.js';

export interface OnePageRunOptions
    extends Omit<
        CrawlOptions,
        'site' | 'startUrls' | 'storageDir' | 'fresh' | 'distributed' | 'maxRequests' | 'metricsPort'
    > {
    site: Site;
    /** The page (normalized). */
    url: string;
    /** The route that handles it. */
    route: Route;
    /** `never`: the cheap fetch only; `always`: the browser only. */
    render: Extract<RenderPolicy, 'never' | 'always'>;
}

export interface OnePageResult {
    /** The page as the raw store keeps it: the last one fetched, after redirects. */
    page?: RawPage;
    /** Why the page was given up on, when it was. */
    deadLetter?: DeadLetterEntry;
    /** Why the page was never queued (robots.txt, say), as the run counted it. */
    skipped: LinksSkipped;
}

export async function fetchOnePage(options: OnePageRunOptions): Promise<OnePageResult> {
    const { site, url, route, render, ...crawlOptions } = options;
    const storageDir = await mkdtemp(join(tmpdir(), 'dragnet-try-'));
    try {
        const { summary } = await crawl({
            ...crawlOptions,
            site: onePageSite(site, route, render),
            startUrls: [url],
            storageDir,
            fresh: true,
            // One page: no progress line, live or logged.
            progress: 'off',
            // A parse worker would load the site module whole, enqueue rules and all.
            parseWorkers: 0,
        });
        return {
            page: await lastPage(storageDir, site.name),
            deadLetter: await firstDeadLetter(storageDir, site.name),
            skipped: summary.linksSkipped,
        };
    } finally {
        await rm(storageDir, { recursive: true, force: true });
    }
}

/**
 * The site with `route` handling every URL given no label (the page, and where it redirects), at
 * the render policy asked for, and no route enqueueing anything: only the page is fetched.
 */
function onePageSite(site: Site, route: Route, render: OnePageRunOptions['render']): Site {
    const routes = new Map(
        [...site.routes].map(([label, each]) => [
            label,
            { ...each, enqueue: [], render: each === route ? render : each.render },
        ]),
    );
    const only = routes.get(route.label);
    if (!only) throw new Error(`route ${route.label} is not a route of site ${site.name}`);
    return { ...site, routes, routeFor: (label) => (label ? routes.get(label) : only) };
}

async function lastPage(storageDir: string, site: string): Promise<RawPage | undefined> {
    const raw = await ArchiveStore.open({ archiveDir: archiveDirOf(storageDir), site });
    let last: RawPage | undefined;
    for await (const page of raw.pages()) last = page;
    return last;
}

async function firstDeadLetter(storageDir: string, site: string): Promise<DeadLetterEntry | undefined> {
    const store = DeadLetterStore.open(storageDir, site);
    try {
        for await (const entry of store?.entries() ?? []) return entry;
        return undefined;
    } finally {
        store?.close();
    }
}
