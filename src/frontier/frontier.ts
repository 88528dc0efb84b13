/**
 * The frontier: the only door into the crawl. A URL is normalized, routed, checked against
 * robots.txt and the seen-set, counted against the request budget, and only then queued —
 * on the HTTP queue, or straight on the browser queue for `render: 'always'` routes.
 */
import type { RequestOptions } from '@crawlee/core';
import type { Logger } from 'pino';
import type { Route, Site } from '../site/site.js';
import type { RunStats } from '../monitor/stats.js';
import { InvalidUrlError, normalizeUrl, urlKey } from './normalize.js';
import { type RequestBudget, UNLIMITED_BUDGET } from './requestBudget.js';
import type { RobotsPolicy } from './robots.js';
import type { SiteScope } from './scope.js';
import type { SeenSet } from './seenSet.js';
import type { FrontierQueue } from '../vocabulary/queue.js';
import type { Link, RequestData } from '../vocabulary/request.js';

export interface FrontierOptions {
    site: Site;
    seenSet: SeenSet;
    httpQueue: FrontierQueue;
    browserQueue: FrontierQueue;
    robots?: RobotsPolicy;
    /** The hosts the site may crawl; links elsewhere are skipped as `offsite`. Default: every host. */
    scope?: SiteScope;
    stats: RunStats;
    log: Logger;
    /**
     * The most URLs admitted in a run (a fleet's, in the distributed mode); further links are skipped and
     * counted as `overBudget`. Default: no limit.
     */
    budget?: RequestBudget;
    /** Redirect hops followed before a request is a redirect loop. Default: 10. */
    maxRedirects?: number;
}

/** Links taken from one page when its site does not say (`maxLinksPerPage`): a real page has a few hundred. */
export const DEFAULT_MAX_LINKS_PER_PAGE = 1000;

export type CanonicalClaim = 'own' | 'taken' | { key: string };

/** A link that is in scope and routed: the next checks are robots.txt, the seen-set and the budget. */
interface Candidate {
    /** Its place in the links given. */
    index: number;
    url: string;
    route: Route;
    userData?: Record<string, unknown>;
}

/** What became of a link: queued, or why not. */
type Admission = 'queued' | 'seen' | 'offsite' | 'invalid' | 'unrouted' | 'disallowed' | 'overBudget';

/**
 * `queued`: the target will be fetched; `duplicate`: it already was (or is queued); `disallowed`,
 * `overBudget`, `unrouted`: robots.txt, the budget or the routes keep it out; `invalid`: the
 * Location is not a crawlable URL; `loop`: it leads back to where it came from or too many hops
 * deep; `offsite`: it leads out of the site's scope.
 */
export type RedirectOutcome =
    | 'queued'
    | 'duplicate'
    | 'invalid'
    | 'loop'
    | 'offsite'
    | 'unrouted'
    | 'disallowed'
    | 'overBudget';

export class Frontier {
    private readonly site: Site;
    private readonly budget: RequestBudget;
    private readonly maxRedirects: number;
    private readonly maxLinksPerPage: number;
    /**
     * URL keys a page of this process is admitting right now (from the seen-set look-up until they
     * are marked), each with a promise that settles when that admission is over: to every other
     * page they are seen, and a canonical claim on one waits for it.
     */
    private readonly admitting = new Map<string, Promise<void>>();

    constructor(private readonly options: FrontierOptions) {
        this.site = options.site;
        this.budget = options.budget ?? UNLIMITED_BUDGET;
        this.maxRedirects = options.maxRedirects ?? 10;
        this.maxLinksPerPage = options.site.maxLinksPerPage ?? DEFAULT_MAX_LINKS_PER_PAGE;
    }

    /** Admits the links that are new, routable and allowed; returns how many were queued. */
    async enqueue(links: Iterable<Link>, base?: URL): Promise<number> {
        const admissions = await this.admit(links, base);
        return admissions.filter((admission) => admission === 'queued').length;
    }

    /**
     * Admits a page's links as `enqueue` does, the first
     * `maxLinksPerPage` of them; the rest are counted as `overLimit`.
     */
    async enqueueFromPage(links: readonly Link[], base: URL): Promise<number> {
        const taken = links.slice(0, this.maxLinksPerPage);
        const queued = await this.enqueue(taken, base);
        this.options.stats.linksSkipped.overLimit += links.length - taken.length;
        return queued;
    }

    /**
     * The links of a page that the frontier would route (crawlable, in scope, routed), in fetch form
     * with their routes' labels, the first `maxLinksPerPage`: what a recrawl keeps of a listing, to
     * queue again when the listing is found unchanged.
     */
    routedLinks(links: readonly Link[], base: URL): Link[] {
        return links.slice(0, this.maxLinksPerPage).flatMap((link) => {
            const url = this.fetchForm(link.url, base);
            if (!url || (this.options.scope && !this.options.scope.includes(new URL(url)))) return [];
            const route = this.site.routeFor(link.label, new URL(url));
            return route ? [{ url, label: route.label }] : [];
        });
    }

    /**
     * What became of each link, in order. Every skip is counted in the stats by its reason once the
     * links are admitted: an admission that fails counts nothing, and the page's retry counts them.
     */
    private async admit(links: Iterable<Link>, base?: URL): Promise<Admission[]> {
        const { stats } = this.options;
        const admissions: Admission[] = [];
        let candidates: Candidate[] = [];
        for (const link of links) {
            const index = admissions.push('invalid') - 1;
            const url = this.fetchForm(link.url, base);
            if (!url) continue;
            const route = this.site.routeFor(link.label, new URL(url));
            if (this.options.scope && !this.options.scope.includes(new URL(url))) {
                admissions[index] = 'offsite';
            } else if (!route) {
                admissions[index] = 'unrouted';
            } else {
                candidates.push({ index, url, route, userData: link.userData });
            }
        }
        // Asked all at once: a call can wait while an origin's robots.txt is unreachable (see
        // robots.ts), and links to two such origins then wait once, not one after the other.
        const { robots } = this.options;
        if (robots) {
            const allowed = await Promise.all(candidates.map(({ url }) => robots.isAllowed(new URL(url))));
            candidates.forEach(({ index }, candidate) => {
                if (!allowed[candidate]) admissions[index] = 'disallowed';
            });
            candidates = candidates.filter((_, candidate) => allowed[candidate]);
        }
        await this.queueUnseen(candidates, admissions);
        for (const admission of admissions) {
            if (admission !== 'queued') stats.linksSkipped[admission] += 1;
        }
        return admissions;
    }

    /**
     * Queues the candidates the seen-set does not hold, within the budget, and records in
     * `admissions` what became of each.
     *
     * Looked up first, marked seen only once queued: a URL is never seen without being queued. A
     * worker that dies between the two (or a queue that fails the add) leaves the links unseen,
     * and the page's next attempt queues them again; a job still in the queue is not added twice
     * (the queues dedup on the unique key). Meanwhile the keys are held in `admitting`, so no
     * other page of this process admits or claims them too.
     */
    private async queueUnseen(candidates: Candidate[], admissions: Admission[]): Promise<void> {
        if (candidates.length === 0) return;
        const { stats } = this.options;
        const keys = candidates.map(({ url }) => urlKey(url));
        let over!: () => void;
        const admission = new Promise<void>((resolve) => (over = resolve));
        const held = keys.map((key) => this.hold(key, admission));
        const queued: { index: number; key: string }[] = [];
        let taken = 0;
        try {
            const known = await this.options.seenSet.has(keys);
            const unseen = candidates.filter((_, candidate) => held[candidate] && !known[candidate]).length;
            taken = unseen === 0 ? 0 : await this.budget.take(unseen);
            const toHttp: RequestOptions[] = [];
            const toHttpFront: RequestOptions[] = [];
            const toBrowser: RequestOptions[] = [];
            candidates.forEach(({ index, url, route, userData }, candidate) => {
                if (!held[candidate] || known[candidate]) {
                    admissions[index] = 'seen';
                } else if (queued.length === taken) {
                    admissions[index] = 'overBudget';
                } else {
                    admissions[index] = 'queued';
                    stats.admitted += 1;
                    queued.push({ index, key: keys[candidate] ?? urlKey(url) });
                    const request = { url, uniqueKey: url, label: route.label, userData: { ...userData } };
                    (route.render === 'always' ? toBrowser : isNavigation(route) ? toHttpFront : toHttp).push(request);
                }
            });
            await Promise.all([
                this.addTo(this.options.httpQueue, toHttpFront, { forefront: true }),
                this.addTo(this.options.httpQueue, toHttp),
                this.addTo(this.options.browserQueue, toBrowser),
            ]);
            const isNew = await this.options.seenSet.add(queued.map(({ key }) => key));
            let admittedElsewhere = 0;
            queued.forEach(({ index }, i) => {
                // Another worker marked it in between. It queued it too (the queue kept one job)
                // and counts it; or, rarely, it claimed it as a canonical URL, and the URL is
                // fetched and stored beside the page that claimed it (docs/distributed.md, the seen-set).
                if (isNew[i]) return;
                admissions[index] = 'seen';
                stats.admitted -= 1;
                admittedElsewhere += 1;
            });
            taken -= admittedElsewhere;
            await this.budget.giveBack(admittedElsewhere);
        } catch (error) {
            stats.admitted -= queued.length;
            await this.budget.giveBack(taken);
            throw error;
        } finally {
            keys.forEach((key, candidate) => {
                if (held[candidate]) this.admitting.delete(key);
            });
            over();
        }
    }

    /**
     * Queues known pages of a recrawl that the seen-set holds but no queue does: pages the revisit
     * policy found not due, marked seen so that no link fetches them, which a sitemap says have
     * changed after all. Within the budget; returns how many were queued.
     */
    async queueKnown(links: readonly Link[]): Promise<number> {
        const routed = links.flatMap((link) => {
            const route = this.site.routeFor(link.label, new URL(link.url));
            return route ? [{ ...link, route }] : [];
        });
        const taken = routed.length === 0 ? 0 : await this.budget.take(routed.length);
        const chosen = routed.slice(0, taken);
        const request = ({ url, route, userData }: (typeof chosen)[number]) => ({
            url,
            uniqueKey: url,
            label: route.label,
            userData: { ...userData },
        });
        try {
            await Promise.all([
                this.addTo(
                    this.options.browserQueue,
                    chosen.filter(({ route }) => route.render === 'always').map(request),
                ),
                this.addTo(
                    this.options.httpQueue,
                    chosen.filter(({ route }) => route.render !== 'always').map(request),
                ),
            ]);
        } catch (error) {
            await this.budget.giveBack(taken);
            throw error;
        }
        this.options.stats.admitted += chosen.length;
        this.options.stats.linksSkipped.overBudget += routed.length - chosen.length;
        return chosen.length;
    }

    /**
     * Sends a page the cheap fetch could not carry to the browser queue. The page was already
     * admitted, so it bypasses the seen-set and the budget.
     */
    async escalate(request: { url: string; label?: string; userData: RequestData }, reason: string): Promise<void> {
        await this.options.browserQueue.addRequest({
            url: request.url,
            uniqueKey: request.url,
            label: request.label,
            userData: { ...request.userData, escalation: reason },
        });
    }

    /**
     * Puts a redirect target through the frontier, so a page reached through an alias is
     * fetched once. A redirect to the same page (a trailing slash added) is queued directly:
     * the page holds its seen-set key already.
     */
    async followRedirect(
        request: { url: string; label?: string; userData: RequestData },
        location: string,
    ): Promise<RedirectOutcome> {
        const hops = (request.userData.redirects ?? 0) + 1;
        const target = this.normalize(location, new URL(request.url));
        if (!target) return 'invalid';
        const redirectedFrom = [...(request.userData.redirectedFrom ?? []), request.url];
        if (redirectedFrom.includes(target) || hops > this.maxRedirects) return 'loop';
        if (this.options.scope && !this.options.scope.includes(new URL(target))) return 'offsite';
        const userData = { ...request.userData, redirects: hops, redirectedFrom };
        if (urlKey(target) !== urlKey(request.url)) {
            const [admission] = (await this.admit([{ url: target, label: request.label, userData }])) as [Admission];
            return admission === 'seen' ? 'duplicate' : admission;
        }
        if ((await this.budget.take(1)) === 0) {
            this.options.stats.linksSkipped.overBudget += 1;
            return 'overBudget';
        }
        const { wasAlreadyPresent } = await this.options.httpQueue
            .addRequest({ url: target, uniqueKey: target, label: request.label, userData })
            .catch(async (error: unknown) => {
                await this.budget.giveBack(1);
                throw error;
            });
        if (wasAlreadyPresent) {
            await this.budget.giveBack(1);
            return 'loop'; // `/x` → `/x/` → `/x`
        }
        this.options.stats.admitted += 1;
        return 'queued';
    }

    /**
     * Claims a page's canonical URL for the page at hand: `own` when it is the page's own URL
     * (held since the page was admitted), `{ key }` when the page claimed another URL's key, now or
     * on an earlier attempt (to be saved with the page's outcome, see RunState), `taken` when
     * another request holds it: the page is a duplicate and its records are not stored again. A
     * claim on a URL another page of this process is admitting waits until that admission is over.
     */
    async claimCanonical(canonicalUrl: string, requestUrl: string): Promise<CanonicalClaim> {
        const key = urlKey(canonicalUrl);
        const ownKey = urlKey(requestUrl);
        if (key === ownKey) return 'own';
        for (let admission = this.admitting.get(key); admission; admission = this.admitting.get(key)) await admission;
        return (await this.options.seenSet.claim(key, ownKey)) ? { key } : 'taken';
    }

    /** Whether the request budget was spent when last looked at. */
    get budgetSpent(): boolean {
        return this.budget.spent;
    }

    /** Whether `url` is on the site's hosts (frontier/scope.ts). */
    inScope(url: URL): boolean {
        return this.options.scope?.includes(url) ?? true;
    }

    /** The site's extra tracking parameters, dropped in normalization. */
    get trackingParams(): readonly string[] | undefined {
        return this.site.trackingParams;
    }

    /** The fetch form of a URL, or undefined (counted) when it is not a crawlable URL. */
    normalize(raw: string, base?: URL): string | undefined {
        const url = this.fetchForm(raw, base);
        if (url === undefined) this.options.stats.linksSkipped.invalid += 1;
        return url;
    }

    /** The fetch form of a URL, or undefined (logged, not counted) when it is not a crawlable URL. */
    private fetchForm(raw: string, base?: URL): string | undefined {
        try {
            return normalizeUrl(raw, { base, trackingParams: this.site.trackingParams });
        } catch (error) {
            if (!(error instanceof InvalidUrlError)) throw error;
            this.options.log.debug({ url: raw, base: base?.href }, error.message);
            return undefined;
        }
    }

    /** Takes the key into `admitting` for `admission`; false when another page of this process holds it. */
    private hold(key: string, admission: Promise<void>): boolean {
        if (this.admitting.has(key)) return false;
        this.admitting.set(key, admission);
        return true;
    }

    private async addTo(
        queue: FrontierQueue,
        requests: RequestOptions[],
        options?: { forefront: boolean },
    ): Promise<void> {
        if (requests.length > 0) await queue.addRequests(requests, options);
    }
}

/**
 * A navigation page (a listing, a pagination step: its route enqueues links and extracts nothing)
 * goes to the front of the queue, records pages to the back. Discovery then stays ahead of
 * fetching: with one FIFO, each `next` hop of a listing chain waits behind every product found so
 * far, the chain is what the crawl waits on, and the queue runs dry between hops on a slow site.
 */
export function isNavigation(route: Route): boolean {
    return route.extract === undefined && (route.enqueue?.length ?? 0) > 0;
}
