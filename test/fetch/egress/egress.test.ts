import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';

import { Egress, ForbiddenAddressError, type LookupFunction } from '../../../src/fetch/egress/egress.js';
import { classifyError } from '../../../src/fetch/failures/failures.js';

/** A resolver with `dns.lookup`'s shape over a fixed table; records every name it is asked for. */
function fakeResolver(table: Record<string, LookupAddress[] | Error>) {
    const calls: { hostname: string; options: unknown }[] = [];
    const lookup: LookupFunction = (hostname, options, callback) => {
        calls.push({ hostname, options });
        const entry =
            table[hostname] ?? Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
        setImmediate(() => {
            if (entry instanceof Error) return callback(entry, []);
            callback(null, entry);
        });
    };
    return { lookup, calls };
}

const v4 = (address: string): LookupAddress => ({ address, family: 4 });
const v6 = (address: string): LookupAddress => ({ address, family: 6 });

/** Calls `egress.lookup` and settles with what its callback got. */
function lookupWith(egress: Egress, hostname: string, options: Parameters<LookupFunction>[1]) {
    return new Promise<{ error: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number }>(
        (resolve) => egress.lookup(hostname, options, (error, address, family) => resolve({ error, address, family })),
    );
}

describe('Egress.refusal', () => {
    // A start URL on a public name, so no address literal below is exempt as a start host.
    const egress = new Egress({ startUrls: ['https://shop.example/', 'http://shop.example:8080/catalog'] });
    const refusal = (url: string) => egress.refusal(new URL(url));

    it('refuses schemes other than http and https', () => {
        for (const url of [
            'ftp://93.184.216.34/',
            'file:///etc/passwd',
            'ws://93.184.216.34/',
            'gopher://93.184.216.34/',
            'data:text/html,hi',
        ]) {
            assert.match(refusal(url) ?? '', /^scheme .* is not http\(s\)$/, url);
        }
        assert.equal(refusal('http://93.184.216.34/'), undefined);
        assert.equal(refusal('https://93.184.216.34/'), undefined);
    });

    it('allows ports 80 and 443 and a start URL’s own port, and refuses any other', () => {
        assert.match(refusal('http://93.184.216.34:22/') ?? '', /port 22 /);
        assert.match(refusal('https://93.184.216.34:6379/') ?? '', /port 6379 /);
        assert.equal(refusal('http://93.184.216.34:80/'), undefined);
        assert.equal(refusal('http://93.184.216.34:443/'), undefined);
        assert.equal(refusal('https://93.184.216.34:80/'), undefined);
        assert.equal(refusal('http://other.example:8080/'), undefined, 'a start URL names port 8080');
        assert.match(refusal('http://other.example:8081/') ?? '', /port 8081 /);
    });

    it('refuses address literals outside the public unicast range', () => {
        const refused: [string, RegExp][] = [
            ['http://127.0.0.1/', /loopback/],
            ['http://10.0.0.1/', /private/],
            ['http://172.16.0.1/', /private/],
            ['http://192.168.1.1/', /private/],
            ['http://169.254.169.254/latest/meta-data/', /linkLocal/],
            ['http://100.64.0.1/', /carrierGradeNat/],
            ['http://224.0.0.1/', /multicast/],
            ['http://0.0.0.0/', /unspecified/],
            ['http://255.255.255.255/', /broadcast/],
            ['http://[::1]/', /loopback/],
            ['http://[fd00::1]/', /uniqueLocal/],
            ['http://[fe80::1]/', /linkLocal/],
            // IPv4-mapped IPv6: judged as the IPv4 address it carries.
            ['http://[::ffff:127.0.0.1]/', /loopback/],
            ['http://[::ffff:7f00:1]/', /loopback/],
            // The URL parser turns these into 127.0.0.1.
            ['http://2130706433/', /loopback/],
            ['http://0x7f.1/', /loopback/],
            // NAT64 of 127.0.0.1.
            ['http://[64:ff9b::7f00:1]/', /loopback/],
        ];
        for (const [url, range] of refused) {
            const why = refusal(url);
            assert.ok(why, `${url} should be refused`);
            assert.match(why, range, url);
        }
    });

    it('sees through the URL parser’s rewriting of numeric hosts', () => {
        assert.equal(new URL('http://2130706433/').hostname, '127.0.0.1');
        assert.equal(new URL('http://0x7f.1/').hostname, '127.0.0.1');
        assert.match(refusal('http://2130706433/') ?? '', /^127\.0\.0\.1 is a loopback address/);
    });

    it('allows public addresses, NAT64 of a public IPv4 address included', () => {
        assert.equal(refusal('http://93.184.216.34/'), undefined);
        assert.equal(refusal('http://[2606:2800:220:1:248:1893:25c8:1946]/'), undefined);
        assert.equal(refusal('http://[64:ff9b::808:808]/'), undefined, 'NAT64 of 8.8.8.8');
    });

    it('leaves host names to lookup()', () => {
        assert.equal(refusal('http://localhost/'), undefined);
        assert.equal(refusal('http://metadata.google.internal/'), undefined);
    });
});

describe('Egress start-host exemption', () => {
    const port = 8123;
    const egress = new Egress({ startUrls: [`http://127.0.0.1:${port}/`] });

    it('allows the start URL’s own address literal and port', () => {
        assert.equal(egress.refusal(new URL(`http://127.0.0.1:${port}/page`)), undefined);
        assert.equal(
            egress.refusal(new URL('http://2130706433:8123/')),
            undefined,
            'the same host, spelled numerically',
        );
    });

    it('does not extend the exemption to neighbouring loopback addresses', () => {
        assert.match(egress.refusal(new URL(`http://127.0.0.2:${port}/`)) ?? '', /127\.0\.0\.2 is a loopback address/);
        assert.match(egress.refusal(new URL(`http://[::1]:${port}/`)) ?? '', /loopback/);
    });

    it('still applies the port rule to the start host', () => {
        assert.match(egress.refusal(new URL('http://127.0.0.1:22/')) ?? '', /port 22 /);
    });
});

describe('Egress with allowPrivateNetwork', () => {
    const egress = new Egress({ startUrls: ['https://shop.example/'], allowPrivateNetwork: true });
    const refusal = (url: string) => egress.refusal(new URL(url));

    it('opens loopback, RFC 1918, link-local, CGNAT and unique-local ranges', () => {
        for (const url of [
            'http://10.1.2.3/',
            'http://127.0.0.1/',
            'http://127.5.5.5/',
            'http://172.31.255.1/',
            'http://192.168.0.10/',
            'http://169.254.169.254/',
            'http://100.64.0.1/',
            'http://[::1]/',
            'http://[fd00::1]/',
            'http://[::ffff:10.0.0.1]/',
        ]) {
            assert.equal(refusal(url), undefined, url);
        }
    });

    it('keeps multicast, broadcast and unspecified addresses refused', () => {
        assert.match(refusal('http://224.0.0.1/') ?? '', /multicast/);
        assert.match(refusal('http://[ff02::1]/') ?? '', /multicast/);
        assert.match(refusal('http://255.255.255.255/') ?? '', /broadcast/);
        assert.match(refusal('http://0.0.0.0/') ?? '', /unspecified/);
        assert.match(refusal('http://[::]/') ?? '', /unspecified/);
    });

    it('does not open other ports', () => {
        assert.match(refusal('http://10.0.0.1:5432/') ?? '', /port 5432 /);
    });
});

describe('Egress.lookup', () => {
    const { lookup: resolve, calls } = fakeResolver({
        'public.test': [v4('93.184.216.34'), v6('2606:2800:220:1:248:1893:25c8:1946')],
        'mixed.test': [v4('10.0.0.5'), v4('93.184.216.34'), v6('::1')],
        'private.test': [v4('169.254.169.254'), v6('fd00::1')],
        'mapped.test': [v6('::ffff:127.0.0.1')],
        'start.test': [v4('127.0.0.1')],
        'broken.test': Object.assign(new Error('getaddrinfo EAI_AGAIN broken.test'), { code: 'EAI_AGAIN' }),
    });
    const egress = new Egress({ startUrls: ['http://start.test:8080/'], lookup: resolve });

    it('asks the injected resolver for every address of the name', async () => {
        calls.length = 0;
        await lookupWith(egress, 'public.test', { family: 4 });
        assert.equal(calls.length, 1);
        assert.equal(calls[0]!.hostname, 'public.test');
        assert.deepEqual({ ...(calls[0]!.options as object) }, { all: true, family: 4, hints: undefined });
    });

    it('returns public addresses in the `all: true` shape', async () => {
        const { error, address } = await lookupWith(egress, 'public.test', { all: true });
        assert.equal(error, null);
        assert.deepEqual(address, [v4('93.184.216.34'), v6('2606:2800:220:1:248:1893:25c8:1946')]);
    });

    it('returns the first public address in the single-address shape, object or numeric options', async () => {
        assert.deepEqual(await lookupWith(egress, 'public.test', {}), {
            error: null,
            address: '93.184.216.34',
            family: 4,
        });
        assert.deepEqual(await lookupWith(egress, 'public.test', 4), {
            error: null,
            address: '93.184.216.34',
            family: 4,
        });
        assert.equal((calls.at(-1)!.options as { family?: number }).family, 4, 'a numeric family is passed on');
    });

    it('normalises the name it is given (trailing dot, case) before resolving', async () => {
        calls.length = 0;
        const { error, address } = await lookupWith(egress, 'PUBLIC.test.', {});
        assert.equal(error, null);
        assert.equal(address, '93.184.216.34');
        assert.equal(calls[0]!.hostname, 'public.test');
    });

    it('pins a mixed answer to its public addresses', async () => {
        assert.deepEqual(await lookupWith(egress, 'mixed.test', { all: true }), {
            error: null,
            address: [v4('93.184.216.34')],
            family: undefined,
        });
        assert.deepEqual(await lookupWith(egress, 'mixed.test', {}), {
            error: null,
            address: '93.184.216.34',
            family: 4,
        });
    });

    it('fails with ForbiddenAddressError when every address is refused', async () => {
        for (const options of [{ all: true as const }, {}, 0]) {
            const { error, address } = await lookupWith(egress, 'private.test', options);
            assert.ok(error instanceof ForbiddenAddressError, `options ${JSON.stringify(options)}`);
            assert.equal(error.code, 'ERR_FORBIDDEN_ADDRESS');
            assert.match(error.message, /^forbidden-address: private\.test resolves only to refused addresses/);
            assert.match(error.message, /169\.254\.169\.254 \(a linkLocal address/);
            assert.match(error.message, /fd00::1 \(a uniqueLocal address/);
            assert.equal((address as unknown[]).length, 0, 'no address handed back');
        }
    });

    it('judges an IPv4-mapped answer as its IPv4 address', async () => {
        const { error } = await lookupWith(egress, 'mapped.test', {});
        assert.ok(error instanceof ForbiddenAddressError);
        assert.match(error.message, /loopback/);
    });

    it('lets a start host resolve to loopback', async () => {
        assert.deepEqual(await lookupWith(egress, 'start.test', {}), { error: null, address: '127.0.0.1', family: 4 });
        assert.deepEqual(await lookupWith(egress, 'start.test', { all: true }), {
            error: null,
            address: [v4('127.0.0.1')],
            family: undefined,
        });
    });

    it('passes a resolver error through unchanged', async () => {
        const { error } = await lookupWith(egress, 'broken.test', {});
        assert.ok(error && !(error instanceof ForbiddenAddressError));
        assert.equal(error.code, 'EAI_AGAIN');
        const missing = await lookupWith(egress, 'nowhere.test', { all: true });
        assert.equal(missing.error?.code, 'ENOTFOUND');
    });
});

describe('Egress.lookup under node:http', () => {
    let server: http.Server;
    let port: number;
    const seen: string[] = [];
    let egress: Egress;
    let calls: { hostname: string }[];

    before(async () => {
        server = http.createServer((request, response) => {
            seen.push(`${request.headers.host} ${request.url}`);
            response.end('hello');
        });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        port = (server.address() as AddressInfo).port;
        const resolver = fakeResolver({ 'shop.test': [v4('127.0.0.1')], 'evil.test': [v4('127.0.0.1')] });
        calls = resolver.calls;
        egress = new Egress({ startUrls: [`http://shop.test:${port}/`], lookup: resolver.lookup });
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    /** A real request through node:http with the egress's lookup; resolves with the body or the error. */
    function get(url: string) {
        return new Promise<{ status?: number; body?: string; error?: NodeJS.ErrnoException }>((resolve) => {
            const request = http.get(url, { lookup: egress.lookup as never, agent: false }, (response) => {
                let body = '';
                response.setEncoding('utf8');
                response.on('data', (chunk: string) => (body += chunk));
                response.on('end', () => resolve({ status: response.statusCode, body }));
            });
            request.on('error', (error) => resolve({ error }));
        });
    }

    it('connects to a start host that resolves to loopback', async () => {
        seen.length = 0;
        const result = await get(`http://shop.test:${port}/a`);
        assert.equal(result.error, undefined);
        assert.equal(result.status, 200);
        assert.equal(result.body, 'hello');
        assert.deepEqual(seen, [`shop.test:${port} /a`]);
        assert.ok(
            calls.some((call) => call.hostname === 'shop.test'),
            'the injected resolver was asked',
        );
    });

    it('refuses another name resolving to loopback before anything reaches the server', async () => {
        seen.length = 0;
        const result = await get(`http://evil.test:${port}/steal`);
        assert.ok(result.error, 'the request fails');
        assert.equal(result.error.code, 'ERR_FORBIDDEN_ADDRESS');
        assert.match(result.error.message, /evil\.test resolves only to refused addresses: 127\.0\.0\.1/);
        assert.ok(calls.some((call) => call.hostname === 'evil.test'));
        // Give a connection that slipped through time to arrive.
        await new Promise((resolve) => setTimeout(resolve, 100));
        assert.deepEqual(seen, []);
        assert.deepEqual(classifyError(result.error), {
            failureClass: 'permanent',
            reason: 'forbidden-address',
            message: result.error.message,
        });
    });
});

describe('Egress.refusal of IPv4-compatible IPv6 addresses (::/96)', () => {
    // The URL parser writes `[::127.0.0.1]` as `[::7f00:1]`; ipaddr.js calls the deprecated ::/96
    // block `unicast` and does not unwrap it the way it unwraps ::ffff:0:0/96: egress.ts must.
    const egress = new Egress({ startUrls: ['https://shop.example/'] });

    it('refuses the IPv4-compatible form of loopback and of the metadata address', () => {
        assert.equal(new URL('http://[::127.0.0.1]/').hostname, '[::7f00:1]');
        assert.match(egress.refusal(new URL('http://[::127.0.0.1]/')) ?? '', /loopback/);
        assert.match(egress.refusal(new URL('http://[::169.254.169.254]/')) ?? '', /linkLocal/);
    });
});
