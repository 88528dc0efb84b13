import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SiteScope } from '../../src/frontier/scope.js';

describe('SiteScope', () => {
    it("takes the start URLs' hosts with their subdomains, and the allowed domains", () => {
        const scope = new SiteScope({ startUrls: ['https://Shop.Example/start'], allowedDomains: ['cdn.example.'] });
        assert.deepEqual(scope.domains, ['shop.example', 'cdn.example']);
        for (const inside of [
            'https://shop.example/x',
            'http://www.shop.example/x',
            'https://a.b.cdn.example/x',
            'https://SHOP.EXAMPLE./x',
        ]) {
            assert.equal(scope.includes(new URL(inside)), true, inside);
        }
        for (const outside of [
            'https://example/x',
            'https://evilshop.example/x',
            'https://shop.example.evil/x',
            'https://example.com/x',
        ]) {
            assert.equal(scope.includes(new URL(outside)), false, outside);
        }
    });

    it('matches an IP address only itself: another loopback address is off-site', () => {
        const scope = new SiteScope({ startUrls: ['http://127.0.0.1:8080/', 'http://[::1]:8080/'] });
        assert.equal(scope.includes(new URL('http://127.0.0.1:9/x')), true);
        assert.equal(scope.includes(new URL('http://127.0.0.2:8080/x')), false);
        assert.equal(scope.includes(new URL('http://[::1]/x')), true);
    });
});
