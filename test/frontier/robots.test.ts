/**
 * RobotsPolicy over the default robots.txt fetch (src/fetch/http/robotsFetch.ts), against real HTTP
 * servers on 127.0.0.1: each outcome RFC 9309 names (2xx, 4xx, 5xx, no answer, redirects, a
 * robots.txt too large, one that never ends), the cache, and one fetch shared by concurrent calls.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createRobotsFetch } from '../../src/fetch/http/robotsFetch.js';
import { RobotsPolicy, type RobotsPolicyOptions } from '../../src/frontier/robots.js';

const servers: Server[] = [];
after(() => {
    for (const server of servers) {
        server.closeAllConnections();
        server.close();
    }
});

/** A server on 127.0.0.1 (`port`, or any free one) answering with `reply`; every path asked for is recorded. */
async function serve(
    reply: (req: IncomingMessage, res: ServerResponse) => void,
    port = 0,
): Promise<{ origin: string; asked: string[] }> {
    const asked: string[] = [];
    const server = createServer((req, res) => {
        asked.push(req.url!);
        reply(req, res);
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, asked };
}

/** A server whose /robots.txt answers `status` with `body`. */
const robotsServer = (status: number, body: () => string) =>
    serve((req, res) => {
        if (req.url === '/robots.txt') res.writeHead(status, { 'content-type': 'text/plain' }).end(body());
        else res.writeHead(404).end();
    });

const policy = (options: Partial<RobotsPolicyOptions> = {}) =>
    new RobotsPolicy({ fetch: createRobotsFetch({ timeoutSecs: 5 }), ...options });
const allowed = (robots: RobotsPolicy, origin: string, path: string) => robots.isAllowed(new URL(path, origin));

const GROUPS = 'User-agent: dragnet\nDisallow: /private/\nAllow: /private/open/\n\nUser-agent: *\nDisallow: /\n';
const PRIVATE = 'User-agent: *\nDisallow: /private/\n';

describe('RobotsPolicy', { timeout: 20_000 }, () => {
    it('obeys a 2xx robots.txt: its disallow and allow rules, in the group of its user agent', async () => {
        const { origin } = await robotsServer(200, () => GROUPS);
        const dragnet = policy({ userAgent: 'dragnet/1.0' });
        assert.equal(await allowed(dragnet, origin, '/private/secret'), false);
        assert.equal(await allowed(dragnet, origin, '/private/open/page'), true, 'the longer Allow wins');
        assert.equal(await allowed(dragnet, origin, '/products/1'), true);
        assert.equal(await allowed(policy(), origin, '/products/1'), false, 'any other agent falls in the * group');
    });

    it(`answers the Crawl-delay of its user agent's group once \
robots.txt is read, none before or without one`, async () => {
        const body =
            'User-agent: dragnet\nCrawl-delay: 2.5\nDisallow: /private/\n\n' +
            'User-agent: slowbot\nDisallow: /\n\nUser-agent: *\nCrawl-delay: 7\n';
        const { origin } = await robotsServer(200, () => body);
        const page = new URL('/products/1', origin);
        const dragnet = policy({ userAgent: 'dragnet/1.0' });
        assert.equal(dragnet.crawlDelaySecs(page), undefined, 'not read yet: no fetch is waited for');
        await dragnet.isAllowed(page);
        assert.equal(dragnet.crawlDelaySecs(page), 2.5);
        const other = policy();
        await other.isAllowed(page);
        assert.equal(other.crawlDelaySecs(page), 7, 'any other agent: the * group');
        const slowbot = policy({ userAgent: 'slowbot' });
        await slowbot.isAllowed(page);
        assert.equal(slowbot.crawlDelaySecs(page), undefined, 'its own group sets none; the * group is not mixed in');
        const { origin: missing } = await robotsServer(404, () => 'User-agent: *\nCrawl-delay: 9\n');
        const unavailable = policy();
        await unavailable.isAllowed(new URL('/', missing));
        assert.equal(
            unavailable.crawlDelaySecs(new URL('/', missing)),
            undefined,
            'an unavailable robots.txt has no rules, no delay',
        );
    });

    for (const status of [404, 403, 401]) {
        it(`allows everything when robots.txt answers ${status} (unavailable), whatever its body says`, async () => {
            const { origin, asked } = await robotsServer(status, () => 'User-agent: *\nDisallow: /\n');
            const robots = policy();
            assert.equal(await allowed(robots, origin, '/products/1'), true);
            assert.equal(await allowed(robots, origin, '/'), true);
            assert.deepEqual(asked, ['/robots.txt'], 'an unavailable robots.txt is cached too');
        });
    }

    it('holds an origin whose robots.txt answers 500 until a retry reads it, then obeys it', async () => {
        let failures = 2;
        const { origin, asked } = await serve((_req, res) => {
            if (failures-- > 0) res.writeHead(500).end('down');
            else res.writeHead(200).end(PRIVATE);
        });
        const robots = policy({ retryBaseSecs: 0.05 });
        // Each answer with how many fetches had been made when it came.
        const answer = (path: string) =>
            allowed(robots, origin, path).then((verdict) => ({ verdict, fetches: asked.length }));
        const [open, closed] = await Promise.all([answer('/products/1'), answer('/private/1')]);
        assert.deepEqual(open, { verdict: true, fetches: 3 }, 'not allowed while unreachable, nor refused');
        assert.deepEqual(closed, { verdict: false, fetches: 3 });
    });

    it(`holds an origin that does not answer at all (a closed \
port), and obeys its robots.txt once it does`, async () => {
        const probe = await serve(() => {});
        const port = Number(new URL(probe.origin).port);
        const server = servers.pop()!;
        await new Promise((resolve) => server.close(resolve));
        const robots = policy({ retryBaseSecs: 0.05, retryMaxSecs: 0.1 });
        let settled = false;
        const answers = Promise.all([
            allowed(robots, probe.origin, '/products/1'),
            allowed(robots, probe.origin, '/private/1'),
        ]).finally(() => (settled = true));
        await sleep(300);
        assert.equal(settled, false, 'no answer while nothing listens');
        await serve((_req, res) => res.writeHead(200).end(PRIVATE), port);
        assert.deepEqual(await answers, [true, false]);
    });

    it(`allows everything once an origin stayed unreachable \
allowAllAfterSecs, and obeys rules it serves later`, async () => {
        let up = false;
        const { origin } = await serve((_req, res) =>
            up ? res.writeHead(200).end('User-agent: *\nDisallow: /\n') : res.writeHead(503).end(),
        );
        const robots = policy({ retryBaseSecs: 0.05, retryMaxSecs: 0.1, allowAllAfterSecs: 0.3 });
        const started = Date.now();
        assert.equal(await allowed(robots, origin, '/products/1'), true);
        assert.ok(Date.now() - started >= 300, `answered after ${Date.now() - started} ms`);
        up = true;
        await sleep(300);
        await allowed(robots, origin, '/products/1'); // starts the retry that is due; the last answer stands meanwhile
        await sleep(100);
        assert.equal(await allowed(robots, origin, '/products/1'), false);
    });

    it('fetches robots.txt once per origin for concurrent and later calls, and again after cacheSecs', async () => {
        let body = PRIVATE;
        const { origin, asked } = await robotsServer(200, () => body);
        const robots = policy({ cacheSecs: 0.3 });
        const verdicts = await Promise.all(
            Array.from({ length: 10 }, (_, i) => allowed(robots, origin, `/products/${i}`)),
        );
        assert.deepEqual(verdicts, Array(10).fill(true));
        assert.equal(await allowed(robots, origin, '/private/1'), false);
        assert.deepEqual(asked, ['/robots.txt'], 'one fetch for eleven calls');
        body = 'User-agent: *\nDisallow: /\n';
        assert.equal(await allowed(robots, origin, '/products/1'), true, 'the cached copy is used within its lifetime');
        await sleep(400);
        assert.equal(
            await allowed(robots, origin, '/products/1'),
            false,
            'the new robots.txt, fetched after the lifetime',
        );
        assert.deepEqual(asked, ['/robots.txt', '/robots.txt']);
    });

    it(`keeps obeying the last robots.txt read when a refetch \
after cacheSecs finds the origin unreachable`, async () => {
        let up = true;
        const { origin, asked } = await serve((_req, res) =>
            up ? res.writeHead(200).end(PRIVATE) : res.writeHead(500).end(),
        );
        const robots = policy({ cacheSecs: 0.2, retryBaseSecs: 10 });
        assert.equal(await allowed(robots, origin, '/private/1'), false);
        up = false;
        await sleep(300);
        const started = Date.now();
        assert.equal(await allowed(robots, origin, '/private/1'), false, 'still disallowed by the stale copy');
        assert.equal(await allowed(robots, origin, '/products/1'), true, 'and not held back');
        assert.ok(Date.now() - started < 1000, `answered after ${Date.now() - started} ms, not after the 10 s retry`);
        assert.equal(asked.length, 2, 'the refetch was made');
    });

    /** A server whose robots.txt is reached through `hops` redirects; its rules disallow /private/. */
    const redirecting = (hops: number) =>
        serve((req, res) => {
            const step = req.url === '/robots.txt' ? 0 : Number(/^\/hop\/(\d+)$/.exec(req.url!)?.[1] ?? NaN);
            if (req.url === '/final') res.writeHead(200).end(PRIVATE);
            else if (step < hops)
                res.writeHead(302, { location: step + 1 === hops ? '/final' : `/hop/${step + 1}` }).end();
            else res.writeHead(404).end();
        });

    it('follows five redirects to a robots.txt and obeys it', async () => {
        const { origin, asked } = await redirecting(5);
        assert.equal(await allowed(policy(), origin, '/private/1'), false);
        assert.deepEqual(asked, ['/robots.txt', '/hop/1', '/hop/2', '/hop/3', '/hop/4', '/final']);
    });

    it('reads a sixth redirect as unavailable: everything allowed, the target never asked', async () => {
        const { origin, asked } = await redirecting(6);
        assert.equal(await allowed(policy(), origin, '/private/1'), true);
        assert.deepEqual(asked, ['/robots.txt', '/hop/1', '/hop/2', '/hop/3', '/hop/4', '/hop/5']);
    });

    it(`reads only the first 500 KiB of a 2 MB robots.txt: a \
rule before 600 KiB is obeyed, one after is not`, async () => {
        const filler = (bytes: number) => `# ${'x'.repeat(97)}\n`.repeat(Math.ceil(bytes / 100));
        let body = `User-agent: *\nDisallow: /early/\n${filler(400 * 1024)}Disallow: /middle/\n`;
        body += `${filler(600 * 1024 - body.length)}Disallow: /late/\n`;
        body += filler(2 * 1024 * 1024 - body.length);
        const { origin } = await robotsServer(200, () => body);
        const robots = policy();
        assert.equal(await allowed(robots, origin, '/early/1'), false);
        assert.equal(await allowed(robots, origin, '/middle/1'), false, 'a rule at 400 KiB is within the cap');
        assert.equal(await allowed(robots, origin, '/late/1'), true);
        const { body: read } = await createRobotsFetch()(`${origin}/robots.txt`);
        assert.ok(read.length <= 500 * 1024 && read.length > 490 * 1024, `${read.length} characters read`);
        assert.ok(read.endsWith('\n'), 'cut back to a whole line');
    });

    it('stops reading a robots.txt that streams forever at the cap', async () => {
        const chunk = 'User-agent: *\nDisallow: /x/\n'.repeat(2000);
        const { origin } = await serve((_req, res) => {
            res.writeHead(200);
            const pump = () => {
                while (!res.destroyed && res.write(chunk));
                if (!res.destroyed) res.once('drain', pump);
            };
            pump();
        });
        const { status, body } = await createRobotsFetch({ timeoutSecs: 5 })(`${origin}/robots.txt`);
        assert.equal(status, 200);
        assert.ok(body.length <= 500 * 1024 && body.length > 0, `${body.length} characters read`);
    });

    it('gives up on a robots.txt that never ends after the timeout, as unreachable', async () => {
        const { origin, asked } = await serve((_req, res) => {
            res.writeHead(200);
            res.write('User-agent: *\nDisallow: /\n'); // and nothing more, ever
        });
        const started = Date.now();
        await assert.rejects(createRobotsFetch({ timeoutSecs: 0.3 })(`${origin}/robots.txt`), /timeout/i);
        assert.ok(Date.now() - started < 2000, `gave up after ${Date.now() - started} ms`);
        const robots = new RobotsPolicy({
            fetch: createRobotsFetch({ timeoutSecs: 0.2 }),
            retryBaseSecs: 0.05,
            allowAllAfterSecs: 0.5,
        });
        assert.equal(
            await allowed(robots, origin, '/products/1'),
            true,
            'unreachable until allowAllAfterSecs, then allowed',
        );
        assert.ok(asked.length >= 3, `${asked.length} fetches: retried while unreachable`);
    });
});
