/**
 * robots.txt and sitemaps go out with a session, as pages do (issue 49: robots.txt went out with
 * no user agent and no accept header at all): the session's headers, in their order, by its exit.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { it } from 'node:test';
import { ExitBreaker } from '../../../src/fetch/egress/exitBreaker.js';
import { Identities } from '../../../src/fetch/egress/identities.js';
import { resolveTiers } from '../../../src/fetch/egress/proxyTiers.js';
import { createRobotsFetch } from '../../../src/fetch/http/robotsFetch.js';
import { createSitemapFetch } from '../../../src/fetch/http/sitemapFetch.js';

it("sends robots.txt and sitemap requests with the session's headers, in the session's order", async (t) => {
    const received: IncomingMessage[] = [];
    const server = createServer((request, response) => {
        received.push(request);
        response.end(request.url === '/robots.txt' ? 'User-agent: *\nDisallow:\n' : '<urlset></urlset>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise((resolve) => server.close(resolve)));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const identity = new Identities({ tiers: resolveTiers([]), breaker: new ExitBreaker() }).pick(0)!;
    const session = () => ({ identity, wire: 'fast' as const });

    assert.equal((await createRobotsFetch({ session })(`${origin}/robots.txt`)).status, 200);
    for await (const _ of await createSitemapFetch({ session })(`${origin}/sitemap.xml`, new AbortController().signal));

    assert.deepEqual(
        received.map((request) => request.url),
        ['/robots.txt', '/sitemap.xml'],
    );
    const sent = Object.keys(identity.headers);
    for (const request of received) {
        const names = request.rawHeaders.filter((_, index) => index % 2 === 0).map((name) => name.toLowerCase());
        assert.deepEqual(
            names.filter((name) => sent.includes(name)),
            sent,
            'every header of the session, in its order',
        );
        assert.equal(request.headers['user-agent'], identity.userAgent);
        assert.match(request.headers.accept ?? '', /^text\/html,/);
    }
});
