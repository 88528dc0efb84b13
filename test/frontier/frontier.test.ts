import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { RequestQueue } from '@crawlee/core';
import { z } from 'zod';

import { urlKey } from '../../src/frontier/normalize.js';
import { Frontier, type FrontierOptions } from '../../src/frontier/frontier.js';
import { createRobotsFetch } from '../../src/fetch/http/robotsFetch.js';
import { LocalRequestBudget } from '../../src/frontier/requestBudget.js';
import { RobotsPolicy } from '../../src/frontier/robots.js';
import { SiteScope } from '../../src/frontier/scope.js';
import { MemorySeenSet } from '../../src/frontier/seenSet.js';
import type { FrontierQueue } from '../../src/vocabulary/queue.js';
import { createLogger } from '../../src/monitor/logger.js';
import { RunStats } from '../../src/monitor/stats.js';
import { defineSite } from '../../src/site/site.js';
import { openStorage } from '../../src/store/datasets.js';

const ORIGIN = 'http://127.0.0.1:9';

const site = defineSite({
    name: 'frontier-test',
    startUrls: [`${ORIGIN}/`],
    trackingParams: ['session'],
    routes: {
        listing: { match: /\/category\//, enqueue: [{ selector: 'a.product', label: 'product' }] },
        product: { match: /\/products\//, schema: z.object({ title: z.string() }), extract: () => ({ title: 'x' }) },
        author: { match: (url) => url.pathname.startsWith('/author/') },
        gallery: { match: /\/gallery\//, render: 'always' },
    },
});

/** A frontier over real Crawlee queues in a fresh storage directory, removed when the test ends. */
async function openFrontier(t: TestContext, options: Partial<FrontierOptions> = {}) {
    const dir = await mkdtemp(join(tmpdir(), 'dragnet-frontier-'));
    const { config, storage } = openStorage(dir);
    const httpQueue = await RequestQueue.open('http', { config });
    const browserQueue = await RequestQueue.open('browser', { config });
    const stats = new RunStats();
    const seenSet = new MemorySeenSet();
    const frontier = new Frontier({
        site,
        seenSet,
        httpQueue,
        browserQueue,
        stats,
        log: createLogger({ level: 'silent' }),
        ...options,
    });
    t.after(async () => {
        await storage.close();
        await rm(dir, { recursive: true, force: true });
    });
    return { frontier, stats, seenSet, httpQueue, browserQueue };
}

/** A robots.txt that allows every URL, fetched from nowhere, counting the URLs it is asked about. */
class RobotsAllowingAll extends RobotsPolicy {
    asked = 0;

    constructor() {
        super({ fetch: async () => ({ status: 404, body: '' }) });
    }

    override async isAllowed(): Promise<boolean> {
        this.asked += 1;
        return true;
    }
}

/** Everything waiting in a queue, in queue order. */
async function drain(
    queue: RequestQueue,
): Promise<{ url: string; label?: string; userData: Record<string, unknown> }[]> {
    const requests = [];
    for (let request = await queue.fetchNextRequest(); request; request = await queue.fetchNextRequest()) {
        // Crawlee keeps the label in userData; the tests compare the rest.
        const { label: _label, ...userData } = request.userData as Record<string, unknown>;
        requests.push({ url: request.url, label: request.label, userData });
        await queue.markRequestHandled(request);
    }
    return requests;
}

async function urls(queue: RequestQueue): Promise<string[]> {
    return (await drain(queue)).map((request) => request.url);
}

describe('Frontier.enqueue', () => {
    it('admits tracking-parameter and fragment variants of a page once, in normalized form', async (t) => {
        const { frontier, stats, httpQueue } = await openFrontier(t);
        const queued = await frontier.enqueue([
            { url: `${ORIGIN}/products/1?utm_source=mail&b=2&a=1` },
            { url: `${ORIGIN}/products/1?a=1&b=2#reviews` },
            { url: `${ORIGIN}/products/1?session=abc&a=1&b=2` },
            { url: `${ORIGIN}/products/1/?a=1&b=2` }, // a trailing slash is the same page
            { url: `${ORIGIN}/products/2` },
        ]);
        assert.equal(queued, 2);
        assert.deepEqual(await urls(httpQueue), [`${ORIGIN}/products/1?a=1&b=2`, `${ORIGIN}/products/2`]);
        assert.equal(stats.admitted, 2);
        assert.equal(stats.linksSkipped.seen, 3);

        // And across calls: the seen-set remembers.
        assert.equal(await frontier.enqueue([{ url: `${ORIGIN}/products/2#top` }]), 0);
        assert.equal(stats.linksSkipped.seen, 4);
    });

    it('resolves relative links against the base and routes by match or by label', async (t) => {
        const { frontier, httpQueue } = await openFrontier(t);
        await frontier.enqueue(
            [{ url: '../../products/7' }, { url: '/somewhere/else', label: 'author', userData: { from: 'test' } }],
            new URL(`${ORIGIN}/category/lamps/`),
        );
        assert.deepEqual(await drain(httpQueue), [
            { url: `${ORIGIN}/products/7`, label: 'product', userData: {} },
            { url: `${ORIGIN}/somewhere/else`, label: 'author', userData: { from: 'test' } },
        ]);
    });

    it(`skips links outside the site scope as offsite, before \
robots.txt is asked, and refuses a redirect out of it`, async (t) => {
        const robots = new RobotsAllowingAll();
        const scope = new SiteScope({ startUrls: [`${ORIGIN}/`], allowedDomains: ['shop.example'] });
        const { frontier, stats, httpQueue } = await openFrontier(t, { scope, robots });
        const queued = await frontier.enqueue([
            { url: 'http://127.0.0.2:9/products/1' },
            { url: 'http://cdn.shop.example/products/2' },
            { url: 'http://evilshop.example/products/3' },
            { url: `${ORIGIN}/products/4` },
        ]);
        assert.equal(queued, 2);
        assert.equal(stats.linksSkipped.offsite, 2);
        assert.equal(robots.asked, 2, 'robots.txt is asked only for hosts in scope');
        assert.deepEqual(await urls(httpQueue), ['http://cdn.shop.example/products/2', `${ORIGIN}/products/4`]);
        assert.equal(
            await frontier.followRedirect(
                { url: `${ORIGIN}/products/5`, userData: {} },
                'http://127.0.0.2:9/products/5',
            ),
            'offsite',
        );
    });

    it('counts invalid and unrouted links and queues neither', async (t) => {
        const { frontier, stats, httpQueue, browserQueue } = await openFrontier(t);
        const queued = await frontier.enqueue([
            { url: 'mailto:shop@example.com' },
            { url: 'javascript:void(0)' },
            { url: 'http://[::1' },
            { url: 'relative/without/base' },
            { url: `${ORIGIN}/about-us` },
            { url: `${ORIGIN}/cart`, label: 'no-such-route' },
            { url: `${ORIGIN}/products/3` },
        ]);
        assert.equal(queued, 1);
        assert.deepEqual(stats.linksSkipped, {
            seen: 0,
            offsite: 0,
            invalid: 4,
            disallowed: 0,
            overBudget: 0,
            unrouted: 2,
            overLimit: 0,
        });
        assert.equal(stats.admitted, 1);
        assert.deepEqual(await urls(httpQueue), [`${ORIGIN}/products/3`]);
        assert.deepEqual(await urls(browserQueue), []);
    });

    it("sends render: 'always' routes straight to the browser queue", async (t) => {
        const { frontier, httpQueue, browserQueue } = await openFrontier(t);
        await frontier.enqueue([
            { url: `${ORIGIN}/gallery/1` },
            { url: `${ORIGIN}/products/1` },
            { url: `${ORIGIN}/x`, label: 'gallery' },
        ]);
        assert.deepEqual(await drain(browserQueue), [
            { url: `${ORIGIN}/gallery/1`, label: 'gallery', userData: {} },
            { url: `${ORIGIN}/x`, label: 'gallery', userData: {} },
        ]);
        assert.deepEqual(await urls(httpQueue), [`${ORIGIN}/products/1`]);
    });

    it(`queues links to navigation pages (routes that only \
enqueue) at the front, so discovery stays ahead`, async (t) => {
        const { frontier, httpQueue } = await openFrontier(t);
        await frontier.enqueue([
            { url: `${ORIGIN}/products/1` },
            { url: `${ORIGIN}/category/a` },
            { url: `${ORIGIN}/author/x` },
        ]);
        await frontier.enqueue([{ url: `${ORIGIN}/products/2` }, { url: `${ORIGIN}/category/b` }]);
        // Later front requests come first; records pages and pages with no enqueue rules keep their order at the back.
        assert.deepEqual(
            await urls(httpQueue),
            ['/category/b', '/category/a', '/products/1', '/author/x', '/products/2'].map((path) => `${ORIGIN}${path}`),
        );
    });

    it('admits no more URLs than its budget in a run and counts the rest', async (t) => {
        const { frontier, stats, httpQueue, browserQueue } = await openFrontier(t, {
            budget: new LocalRequestBudget(3),
        });
        assert.equal(await frontier.enqueue([1, 2].map((n) => ({ url: `${ORIGIN}/products/${n}` }))), 2);
        assert.equal(
            await frontier.enqueue([
                { url: `${ORIGIN}/gallery/1` },
                { url: `${ORIGIN}/products/3` },
                { url: `${ORIGIN}/products/4` },
            ]),
            1,
        );
        assert.equal(stats.admitted, 3);
        assert.equal(stats.linksSkipped.overBudget, 2);
        assert.deepEqual(await urls(httpQueue), [`${ORIGIN}/products/1`, `${ORIGIN}/products/2`]);
        assert.deepEqual(await urls(browserQueue), [`${ORIGIN}/gallery/1`]);
    });

    it('does not queue links robots.txt disallows, and counts them', async (t) => {
        const robotsRequests: string[] = [];
        const server = createServer((req, res) => {
            robotsRequests.push(req.url ?? '');
            if (req.url === '/robots.txt') {
                res.writeHead(200, { 'content-type': 'text/plain' }).end(
                    'User-agent: *\nDisallow: /products/private/\n',
                );
            } else {
                res.writeHead(404).end();
            }
        });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        t.after(() => new Promise((resolve) => server.close(resolve)));
        const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

        const { frontier, stats, httpQueue } = await openFrontier(t, {
            robots: new RobotsPolicy({ fetch: createRobotsFetch({ timeoutSecs: 5 }) }),
        });
        const queued = await frontier.enqueue([
            { url: `${origin}/products/private/1` },
            { url: `${origin}/products/1` },
            { url: `${origin}/products/private/2` },
            { url: `${origin}/products/2` },
        ]);
        assert.equal(queued, 2);
        assert.equal(stats.linksSkipped.disallowed, 2);
        assert.deepEqual(await urls(httpQueue), [`${origin}/products/1`, `${origin}/products/2`]);
        assert.deepEqual(robotsRequests, ['/robots.txt'], 'robots.txt is fetched once per origin');
    });
});

describe('Frontier, when a queue fails to take the links', () => {
    /** The queue, but its first `addRequests` fails, as a full disk or a lost connection would. */
    function failingFirstAdd(queue: FrontierQueue): FrontierQueue {
        let failed = false;
        return Object.assign(Object.create(queue) as FrontierQueue, {
            addRequests: (...args: Parameters<FrontierQueue['addRequests']>) => {
                if (failed) return queue.addRequests(...args);
                failed = true;
                return Promise.reject(new Error('queue unavailable'));
            },
        });
    }

    it("leaves the links unseen and uncounted, so the page's next attempt queues them", async (t) => {
        const opened = await openFrontier(t);
        const frontier = new Frontier({
            site,
            seenSet: opened.seenSet,
            httpQueue: failingFirstAdd(opened.httpQueue),
            browserQueue: opened.browserQueue,
            stats: opened.stats,
            log: createLogger({ level: 'silent' }),
        });
        const links = [{ url: `${ORIGIN}/products/1` }, { url: `${ORIGIN}/products/2` }];
        await assert.rejects(frontier.enqueue(links), /queue unavailable/);
        assert.equal(opened.stats.admitted, 0);
        assert.equal(opened.seenSet.size, 0, 'nothing is marked seen that was not queued');

        assert.equal(await frontier.enqueue(links), 2, 'the retry queues them');
        assert.equal(opened.stats.admitted, 2);
        assert.deepEqual(await urls(opened.httpQueue), [`${ORIGIN}/products/1`, `${ORIGIN}/products/2`]);
    });

    it("counts a page's skipped links once, though the page is attempted twice", async (t) => {
        const opened = await openFrontier(t);
        const frontier = new Frontier({
            site: { ...site, maxLinksPerPage: 3 },
            seenSet: opened.seenSet,
            httpQueue: failingFirstAdd(opened.httpQueue),
            browserQueue: opened.browserQueue,
            stats: opened.stats,
            log: createLogger({ level: 'silent' }),
        });
        const links = [
            { url: '/products/1' },
            { url: 'mailto:shop@example.com' },
            { url: '/about-us' },
            { url: '/products/2' },
        ];
        await assert.rejects(frontier.enqueueFromPage(links, new URL(`${ORIGIN}/`)));
        assert.equal(await frontier.enqueueFromPage(links, new URL(`${ORIGIN}/`)), 1);
        assert.deepEqual(opened.stats.linksSkipped, {
            seen: 0,
            offsite: 0,
            invalid: 1,
            disallowed: 0,
            overBudget: 0,
            unrouted: 1,
            overLimit: 1,
        });
    });

    it('queues a link two pages find at once once, counted once', async (t) => {
        const { frontier, stats, httpQueue } = await openFrontier(t);
        const answers = await Promise.all(
            [1, 2, 3].map((n) =>
                frontier.enqueue([{ url: `${ORIGIN}/products/shared` }, { url: `${ORIGIN}/products/${n}` }]),
            ),
        );
        assert.deepEqual(answers, [2, 1, 1]);
        assert.equal(stats.admitted, 4);
        assert.equal(stats.linksSkipped.seen, 2);
        assert.equal((await urls(httpQueue)).length, 4);
    });

    it('refuses a canonical claim on a URL another page is queuing at that moment', async (t) => {
        const { frontier } = await openFrontier(t);
        const queuing = frontier.enqueue([{ url: `${ORIGIN}/products/1` }]);
        assert.equal(await frontier.claimCanonical(`${ORIGIN}/products/1`, `${ORIGIN}/products/1-alias`), 'taken');
        assert.equal(await queuing, 1);
    });
});

describe('Frontier.followRedirect', () => {
    const request = (url: string, userData: Record<string, unknown> = {}) => ({ url, label: 'product', userData });

    it('queues a new target with the hop counted and the label kept', async (t) => {
        const { frontier, stats, httpQueue } = await openFrontier(t);
        const outcome = await frontier.followRedirect(
            request(`${ORIGIN}/products/old`, { from: 'listing' }),
            '/products/new?utm_source=x',
        );
        assert.equal(outcome, 'queued');
        assert.deepEqual(await drain(httpQueue), [
            {
                url: `${ORIGIN}/products/new`,
                label: 'product',
                userData: { from: 'listing', redirects: 1, redirectedFrom: [`${ORIGIN}/products/old`] },
            },
        ]);
        assert.equal(stats.admitted, 1);
    });

    it("calls a target already seen a 'duplicate' and queues nothing", async (t) => {
        const { frontier, httpQueue } = await openFrontier(t);
        await frontier.enqueue([{ url: `${ORIGIN}/products/2` }]);
        await drain(httpQueue);
        assert.equal(
            await frontier.followRedirect(request(`${ORIGIN}/products/1`), `${ORIGIN}/products/2#x`),
            'duplicate',
        );
        assert.deepEqual(await urls(httpQueue), []);
    });

    it('follows a redirect to the same page with a slash added directly, past the seen-set', async (t) => {
        const { frontier, stats, httpQueue } = await openFrontier(t);
        await frontier.enqueue([{ url: `${ORIGIN}/author/Jane-Austen` }]);
        await drain(httpQueue);
        const outcome = await frontier.followRedirect(
            { url: `${ORIGIN}/author/Jane-Austen`, label: 'author', userData: {} },
            '/author/Jane-Austen/',
        );
        assert.equal(outcome, 'queued');
        assert.deepEqual(await drain(httpQueue), [
            {
                url: `${ORIGIN}/author/Jane-Austen/`,
                label: 'author',
                userData: { redirects: 1, redirectedFrom: [`${ORIGIN}/author/Jane-Austen`] },
            },
        ]);
        // The target is one more request to fetch, so it counts as admitted, though the seen-set is not asked.
        assert.equal(stats.admitted, 2);
        assert.equal(stats.linksSkipped.seen, 0);
    });

    it("calls a slash redirect that comes back to a URL already queued a 'loop', and counts nothing", async (t) => {
        const { frontier, stats } = await openFrontier(t);
        await frontier.enqueue([{ url: `${ORIGIN}/author/Jane-Austen` }]);
        assert.equal(
            await frontier.followRedirect(request(`${ORIGIN}/author/Jane-Austen`), '/author/Jane-Austen/'),
            'queued',
        );
        // `/x/` → `/x`: the first URL again.
        assert.equal(
            await frontier.followRedirect(
                request(`${ORIGIN}/author/Jane-Austen/`, { redirects: 1 }),
                '/author/Jane-Austen',
            ),
            'loop',
        );
        assert.equal(stats.admitted, 2);
    });

    it('keeps a slash redirect within the request budget', async (t) => {
        const { frontier, stats, httpQueue } = await openFrontier(t, { budget: new LocalRequestBudget(1) });
        await frontier.enqueue([{ url: `${ORIGIN}/author/Jane-Austen` }]);
        await drain(httpQueue);
        assert.equal(
            await frontier.followRedirect(request(`${ORIGIN}/author/Jane-Austen`), '/author/Jane-Austen/'),
            'overBudget',
        );
        assert.equal(stats.admitted, 1);
        assert.equal(stats.linksSkipped.overBudget, 1);
        assert.deepEqual(await urls(httpQueue), []);
    });

    it(`calls a target kept out by the budget 'overBudget' (not a \
duplicate) and a Location that is no URL 'invalid'`, async (t) => {
        const { frontier, stats } = await openFrontier(t, { budget: new LocalRequestBudget(1) });
        await frontier.enqueue([{ url: `${ORIGIN}/products/1` }]);
        assert.equal(await frontier.followRedirect(request(`${ORIGIN}/products/1`), '/products/2'), 'overBudget');
        assert.equal(stats.linksSkipped.overBudget, 1);
        assert.equal(stats.linksSkipped.seen, 0);
        assert.equal(
            await frontier.followRedirect(request(`${ORIGIN}/products/1`), 'mailto:shop@example.com'),
            'invalid',
        );
        assert.equal(stats.linksSkipped.invalid, 1);
    });

    it("calls a redirect to itself a 'loop'", async (t) => {
        const { frontier, httpQueue } = await openFrontier(t);
        assert.equal(await frontier.followRedirect(request(`${ORIGIN}/products/1`), `${ORIGIN}/products/1`), 'loop');
        // The same page after normalization is the same URL: still a loop.
        assert.equal(
            await frontier.followRedirect(request(`${ORIGIN}/products/1`), '/products/1?utm_medium=x#top'),
            'loop',
        );
        assert.deepEqual(await urls(httpQueue), []);
    });

    it("calls a chain longer than maxRedirects a 'loop'", async (t) => {
        const { frontier, httpQueue } = await openFrontier(t, { maxRedirects: 3 });
        assert.equal(
            await frontier.followRedirect(request(`${ORIGIN}/products/a`, { redirects: 2 }), '/products/b'),
            'queued',
        );
        assert.equal(
            await frontier.followRedirect(request(`${ORIGIN}/products/b`, { redirects: 3 }), '/products/c'),
            'loop',
        );
        assert.equal(
            await frontier.followRedirect(request(`${ORIGIN}/products/b/`, { redirects: 3 }), '/products/b'),
            'loop',
            'the limit holds for same-page redirects too',
        );
        assert.deepEqual(await urls(httpQueue), [`${ORIGIN}/products/b`]);
    });

    it("calls a redirect back to an earlier hop of its chain a 'loop' (a → b → a)", async (t) => {
        const { frontier } = await openFrontier(t);
        await frontier.enqueue([{ url: `${ORIGIN}/products/a` }]);
        assert.equal(await frontier.followRedirect(request(`${ORIGIN}/products/a`), '/products/b'), 'queued');
        const b = request(`${ORIGIN}/products/b`, { redirects: 1, redirectedFrom: [`${ORIGIN}/products/a`] });
        assert.equal(await frontier.followRedirect(b, '/products/a'), 'loop');
        assert.equal(await frontier.followRedirect(b, '/products/c'), 'queued', 'a new target is no loop');
    });

    it('takes the first maxLinksPerPage links of a page and counts the rest as overLimit', async (t) => {
        const { frontier, stats, httpQueue } = await openFrontier(t, { site: { ...site, maxLinksPerPage: 3 } });
        const links = Array.from({ length: 5 }, (_, i) => ({ url: `/products/${i}` }));
        assert.equal(await frontier.enqueueFromPage(links, new URL(`${ORIGIN}/`)), 3);
        assert.equal(stats.linksSkipped.overLimit, 2);
        assert.deepEqual(
            await urls(httpQueue),
            [0, 1, 2].map((i) => `${ORIGIN}/products/${i}`),
        );
    });

    it('defaults maxRedirects to 10', async (t) => {
        const { frontier } = await openFrontier(t);
        assert.equal(
            await frontier.followRedirect(request(`${ORIGIN}/products/a`, { redirects: 9 }), '/products/b'),
            'queued',
        );
        assert.equal(
            await frontier.followRedirect(request(`${ORIGIN}/products/b`, { redirects: 10 }), '/products/c'),
            'loop',
        );
    });
});

describe('Frontier.claimCanonical', () => {
    it('lets the first page claim a canonical URL and calls later claimants duplicates', async (t) => {
        const { frontier } = await openFrontier(t);
        assert.deepEqual(await frontier.claimCanonical(`${ORIGIN}/products/1`, `${ORIGIN}/products/1?color=red`), {
            key: urlKey(`${ORIGIN}/products/1`),
        });
        assert.equal(await frontier.claimCanonical(`${ORIGIN}/products/1`, `${ORIGIN}/products/1?color=blue`), 'taken');
    });

    it('lets a page always claim its own URL (slash folded)', async (t) => {
        const { frontier } = await openFrontier(t);
        await frontier.enqueue([{ url: `${ORIGIN}/products/1` }]);
        assert.equal(await frontier.claimCanonical(`${ORIGIN}/products/1`, `${ORIGIN}/products/1`), 'own');
        assert.equal(await frontier.claimCanonical(`${ORIGIN}/products/1/`, `${ORIGIN}/products/1`), 'own');
    });

    it("keeps a page's claim through its retries, and refuses it to another page still", async (t) => {
        const { frontier } = await openFrontier(t);
        const claim = { key: urlKey(`${ORIGIN}/products/1`) };
        assert.deepEqual(
            await frontier.claimCanonical(`${ORIGIN}/products/1`, `${ORIGIN}/products/1?color=red`),
            claim,
        );
        // The page failed after its claim (its records could not be stored) and is fetched again.
        assert.deepEqual(
            await frontier.claimCanonical(`${ORIGIN}/products/1`, `${ORIGIN}/products/1?color=red`),
            claim,
        );
        assert.equal(await frontier.claimCanonical(`${ORIGIN}/products/1`, `${ORIGIN}/products/1?color=blue`), 'taken');
        assert.equal(await frontier.enqueue([{ url: `${ORIGIN}/products/1` }]), 0, 'the claimed URL is not queued');
    });

    it("keeps a page's claim on its retry while another page is admitting a link to the same URL", async (t) => {
        const { frontier } = await openFrontier(t);
        const claim = { key: urlKey(`${ORIGIN}/products/1`) };
        assert.deepEqual(
            await frontier.claimCanonical(`${ORIGIN}/products/1`, `${ORIGIN}/products/1?color=red`),
            claim,
        );
        const admitting = frontier.enqueue([{ url: `${ORIGIN}/products/1` }]);
        assert.deepEqual(
            await frontier.claimCanonical(`${ORIGIN}/products/1`, `${ORIGIN}/products/1?color=red`),
            claim,
        );
        assert.equal(await admitting, 0);
    });

    it('refuses a canonical URL the frontier already admitted as another request', async (t) => {
        const { frontier } = await openFrontier(t);
        await frontier.enqueue([{ url: `${ORIGIN}/products/1` }]);
        assert.equal(await frontier.claimCanonical(`${ORIGIN}/products/1`, `${ORIGIN}/products/1-alias`), 'taken');
    });
});

describe('Frontier.escalate', () => {
    it('puts the request on the browser queue with the reason, bypassing seen-set and budget', async (t) => {
        const { frontier, stats, httpQueue, browserQueue } = await openFrontier(t, {
            budget: new LocalRequestBudget(1),
        });
        await frontier.enqueue([{ url: `${ORIGIN}/products/1`, userData: { from: 'listing' } }]);
        const [fetched] = await drain(httpQueue);
        assert.ok(fetched);

        await frontier.escalate(fetched, 'missing or invalid: title');
        assert.deepEqual(await drain(browserQueue), [
            {
                url: `${ORIGIN}/products/1`,
                label: 'product',
                userData: { from: 'listing', escalation: 'missing or invalid: title' },
            },
        ]);
        assert.equal(stats.admitted, 1);
        assert.equal(stats.linksSkipped.overBudget, 0);
    });
});
