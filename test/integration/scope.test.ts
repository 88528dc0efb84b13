/**
 * Scope end to end, over two loopback hosts: the site on 127.0.0.1 links to and redirects to
 * 127.0.0.2, which is another host and so off-site. Nothing may reach 127.0.0.2 — not a page, not
 * its robots.txt — unless the run allows its domain. On each wire profile: `fast` (Node's client)
 * and `chrome` (the machine's Chromium through its egress proxy; docs/identities.md), skipped without one.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { findChromium } from '../../src/fetch/browser/chromium.js';
import { createLogger } from '../../src/monitor/logger.js';
import { crawl } from '../../src/run.js';
import { defineSite, textOf } from '../../src/site/site.js';
import type { DeadLetterEntry } from '../../src/vocabulary/failure.js';
import type { RunSummary } from '../../src/vocabulary/report.js';
import { WIRE_PROFILES, type WireProfile } from '../../src/vocabulary/wire.js';
import { readDataset } from '../helpers/stores.js';

/** A server on `host` answering with `reply(path)`; every path asked for, and every connection, is counted. */
async function serve(
    host: string,
    reply: (path: string) => { status: number; body?: string; location?: string },
    port = 0,
): Promise<{ server: Server; origin: string; asked: string[]; connections: () => number }> {
    const asked: string[] = [];
    let connections = 0;
    const server = createServer((req, res) => {
        asked.push(req.url!);
        const { status, body = '', location } = reply(req.url!);
        res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...(location ? { location } : {}) }).end(
            body,
        );
    });
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(port, host, resolve));
    const origin = `http://${host}:${(server.address() as AddressInfo).port}`;
    return { server, origin, asked, connections: () => connections };
}

const product = (title: string) => `<html><body><h1>${title}</h1></body></html>`;

const chromiumPath = findChromium();

for (const wire of WIRE_PROFILES) {
    describe(
        `the site scope, across two loopback hosts, on the ${wire} wire profile`,
        { skip: wire === 'chrome' && !chromiumPath ? 'no Chromium found' : false },
        () => scopeSuite(wire),
    );
}

function scopeSuite(wire: WireProfile): void {
    let home: Awaited<ReturnType<typeof serve>>;
    let other: Awaited<ReturnType<typeof serve>>;

    before(async () => {
        home = await serve('127.0.0.1', (path) => {
            if (path === '/robots.txt') return { status: 404 };
            if (path === '/') {
                const links = ['/products/1', '/products/2', `${other.origin}/products/3`, '/products/moved'];
                return {
                    status: 200,
                    body:
                        `<html><body>${links.map((href) => `<a class="p" href="${href}">p</a>`).join('')}</body>` +
                        `</html>`,
                };
            }
            if (path === '/products/moved') return { status: 301, location: `${other.origin}/products/4` };
            return { status: 200, body: product(`home ${path}`) };
        });
        // On the start URL's port: a port no start URL names would be refused as well.
        const port = Number(new URL(home.origin).port);
        other = await serve(
            '127.0.0.2',
            (path) => (path === '/robots.txt' ? { status: 404 } : { status: 200, body: product(`elsewhere ${path}`) }),
            port,
        );
    });
    after(() => Promise.all([home, other].map(({ server }) => new Promise((resolve) => server.close(resolve)))));

    async function run(
        allowDomains: string[],
        allowPrivateNetwork = false,
    ): Promise<{ summary: RunSummary; titles: string[]; dead: DeadLetterEntry[] }> {
        const site = defineSite({
            name: 'scope-test',
            startUrls: [`${home.origin}/`],
            routes: {
                home: { match: (url) => url.pathname === '/', enqueue: [{ selector: 'a.p', label: 'product' }] },
                product: {
                    schema: z.object({ title: z.string().min(1) }),
                    render: 'never',
                    extract: ($) => ({ title: textOf($, 'h1') }),
                },
            },
        });
        const storageDir = await mkdtemp(join(tmpdir(), 'dragnet-scope-'));
        try {
            const { summary } = await crawl({
                site,
                startUrls: [],
                storageDir,
                allowDomains,
                allowPrivateNetwork,
                chromiumPath: wire === 'chrome' ? chromiumPath : undefined,
                proxies: { wire },
                progressIntervalSecs: 3600,
                log: createLogger({ level: 'silent' }),
            });
            const titles = (await readDataset<{ title: string }>(storageDir, 'scope-test'))
                .map((item) => item.title)
                .sort();
            return { summary, titles, dead: await readDataset<DeadLetterEntry>(storageDir, 'scope-test-dead-letter') };
        } finally {
            await rm(storageDir, { recursive: true, force: true });
        }
    }

    it(`skips the off-site link, dead-letters the off-site \
redirect, and never connects to the other host`, async () => {
        const { summary, titles, dead } = await run([]);
        assert.deepEqual(
            summary.proxies.tiers.map((tier) => tier.wire),
            [wire],
            'every request went out on the profile',
        );
        assert.deepEqual(titles, ['home /products/1', 'home /products/2']);
        assert.equal(summary.linksSkipped.offsite, 1);
        assert.deepEqual(
            dead.map((entry) => [new URL(entry.url).pathname, entry.reason, entry.failureClass]),
            [['/products/moved', 'offsite-redirect', 'permanent']],
        );
        assert.deepEqual(other.asked, [], 'nothing asked of 127.0.0.2, robots.txt included');
        assert.equal(other.connections(), 0, 'connections to 127.0.0.2');
    });

    it('refuses the other host when its domain is allowed but its loopback address is not', async () => {
        const { titles, dead } = await run(['127.0.0.2']);
        assert.deepEqual(titles, ['home /products/1', 'home /products/2']);
        assert.deepEqual(dead.map((entry) => [new URL(entry.url).pathname, entry.reason]).sort(), [
            ['/products/3', 'forbidden-address'],
            ['/products/4', 'forbidden-address'],
        ]);
        assert.deepEqual(other.asked, []);
        assert.equal(other.connections(), 0, 'connections to 127.0.0.2');
    });

    it('crawls the other host when its domain and the private network are allowed', async () => {
        const { titles, dead } = await run(['127.0.0.2'], true);
        assert.deepEqual(titles, [
            'elsewhere /products/3',
            'elsewhere /products/4',
            'home /products/1',
            'home /products/2',
        ]);
        assert.deepEqual(dead, []);
        assert.ok(other.asked.includes('/products/3') && other.asked.includes('/products/4'));
    });
}
