import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { DEFAULT_TRACKING_PARAMS, InvalidUrlError, normalizeUrl, urlKey } from '../../src/frontier/normalize.js';

/** Each case: [input, expected normalizeUrl output]. */
function table(cases: [string, string][]): void {
    for (const [input, expected] of cases) {
        it(`${JSON.stringify(input)} → ${expected}`, () => assert.equal(normalizeUrl(input), expected));
    }
}

function assertInvalid(raw: string, reason: RegExp, base?: string): void {
    assert.throws(
        () => normalizeUrl(raw, base === undefined ? {} : { base }),
        (error: unknown) => {
            assert.ok(error instanceof InvalidUrlError, `expected InvalidUrlError, got ${String(error)}`);
            assert.equal(error.url, raw);
            assert.ok(error.message.startsWith(`invalid URL ${JSON.stringify(raw)}: `), error.message);
            assert.match(error.message, reason);
            assert.ok(!error.message.includes('\n'), 'message is one line');
            return true;
        },
    );
}

describe('tracking parameters', () => {
    table([
        ['https://shop.example/p?utm_source=x&utm_medium=y&utm_campaign=z&id=7', 'https://shop.example/p?id=7'],
        ['https://shop.example/p?utm_whatever_new=1', 'https://shop.example/p'],
        ['https://shop.example/p?ref=home&fbclid=abc&gclid=def&id=7', 'https://shop.example/p?id=7'],
        ['https://shop.example/p?msclkid=1&_ga=2&mc_cid=3&srsltid=4', 'https://shop.example/p'],
        // percent-encoded names are compared after normalization: %5F is `_`
        ['https://shop.example/p?utm%5Fsource=x&id=7', 'https://shop.example/p?id=7'],
    ]);

    it('keeps names that merely contain a tracking name', () => {
        assert.equal(
            normalizeUrl('https://a.example/?prefix=1&gclid_like=2&xref=3'),
            'https://a.example/?gclid_like=2&prefix=1&xref=3',
        );
    });

    it('the default list includes utm_* and the well-known click ids', () => {
        for (const name of ['utm_*', 'ref', 'fbclid', 'gclid', 'msclkid'])
            assert.ok(DEFAULT_TRACKING_PARAMS.includes(name), name);
    });

    it('drops custom exact names and prefix* in addition to the defaults', () => {
        const trackingParams = ['sessionid', 'trk_*'];
        assert.equal(
            normalizeUrl('https://a.example/x?sessionid=9&trk_a=1&trk_b=2&trk=3&utm_source=s&q=1', { trackingParams }),
            'https://a.example/x?q=1&trk=3',
        );
        // the same array again hits the compiled-matcher cache and gives the same answer
        assert.equal(normalizeUrl('https://a.example/x?trk_z=1', { trackingParams }), 'https://a.example/x');
        // custom names do not leak into calls without them
        assert.equal(normalizeUrl('https://a.example/x?sessionid=9'), 'https://a.example/x?sessionid=9');
    });
});

describe('query', () => {
    table([
        ['http://a.example/?b=2&a=1&c=3', 'http://a.example/?a=1&b=2&c=3'],
        // repeated names keep their relative order: lists are ordered
        ['http://a.example/?id=3&b=x&id=1&id=2', 'http://a.example/?b=x&id=3&id=1&id=2'],
        // pairs are kept byte for byte: no `=` added to flags, `+` and `/` untouched
        ['http://a.example/?z=a+b&flag&path=a/b', 'http://a.example/?flag&path=a/b&z=a+b'],
        ['http://a.example/search?', 'http://a.example/search'],
        ['http://a.example/search?&&', 'http://a.example/search'],
        ['http://a.example/search?utm_source=x', 'http://a.example/search'],
        ['http://a.example/?a=1&&b=2', 'http://a.example/?a=1&b=2'],
    ]);
});

describe('scheme, host, port, fragment', () => {
    table([
        ['HTTPS://WWW.Example.COM/Path/To/Page', 'https://www.example.com/Path/To/Page'],
        ['http://example.com:80/a', 'http://example.com/a'],
        ['https://example.com:443/a', 'https://example.com/a'],
        ['http://example.com:8080/a', 'http://example.com:8080/a'],
        ['https://example.com:80/a', 'https://example.com:80/a'],
        ['https://example.com/a#section-2', 'https://example.com/a'],
        ['https://example.com/a?x=1#', 'https://example.com/a?x=1'],
        ['http://example.com', 'http://example.com/'],
        ['http://Bücher.example/', 'http://xn--bcher-kva.example/'],
        ['http://user:pw@example.com/', 'http://user:pw@example.com/'],
    ]);
});

describe('path', () => {
    table([
        ['http://a.example/a/./b/../c', 'http://a.example/a/c'],
        ['http://a.example/a/%2e%2E/b', 'http://a.example/b'],
        ['http://a.example/../../x', 'http://a.example/x'],
        // trailing slash is kept in the fetch form: the server decides which form it serves
        ['http://a.example/dir/', 'http://a.example/dir/'],
    ]);
});

describe('percent-encoding', () => {
    table([
        ['http://a.example/%7euser/%41bc', 'http://a.example/~user/Abc'],
        ['http://a.example/a%2fb', 'http://a.example/a%2Fb'],
        ['http://a.example/caf%c3%a9', 'http://a.example/caf%C3%A9'],
        ['http://a.example/café', 'http://a.example/caf%C3%A9'],
        ['http://a.example/?q=%7e%2d%5f%2e&r=%2f%3d%26', 'http://a.example/?q=~-_.&r=%2F%3D%26'],
        ['http://a.example/a b', 'http://a.example/a%20b'],
        // a lone `%` is not an escape and is left alone
        ['http://a.example/100%', 'http://a.example/100%'],
    ]);
});

describe('relative links with a base', () => {
    const base = 'https://site.example/dir/page.html?page=1#top';
    const cases: [string, string][] = [
        ['../x', 'https://site.example/x'],
        ['sub/y', 'https://site.example/dir/sub/y'],
        ['/root', 'https://site.example/root'],
        ['?page=2', 'https://site.example/dir/page.html?page=2'],
        ['//cdn.example/path', 'https://cdn.example/path'],
        ['#frag', 'https://site.example/dir/page.html?page=1'],
        ['', 'https://site.example/dir/page.html?page=1'],
        ['http://other.example/abs', 'http://other.example/abs'],
    ];
    for (const [link, expected] of cases) {
        it(`${JSON.stringify(link)} → ${expected}`, () => {
            assert.equal(normalizeUrl(link, { base }), expected);
            assert.equal(normalizeUrl(link, { base: new URL(base) }), expected);
        });
    }
});

describe('whitespace', () => {
    table([
        ['  https://a.example/x  ', 'https://a.example/x'],
        ['\n\thttps://a.example/x\r\n', 'https://a.example/x'],
        ['\u00a0https://a.example/x\u00a0', 'https://a.example/x'],
    ]);

    it('trims relative links too', () => {
        assert.equal(normalizeUrl('  ../x ', { base: 'https://a.example/d/p' }), 'https://a.example/x');
    });
});

describe('invalid input throws InvalidUrlError', () => {
    it('not a url', () => assertInvalid('not a url', /not an absolute URL.*no base/));
    it('relative without base', () => assertInvalid('/path/only', /no base/));
    it('mailto:', () => assertInvalid('mailto:a@b.c', /unsupported scheme "mailto:"/));
    it('javascript:', () => assertInvalid('javascript:void(0)', /unsupported scheme "javascript:"/));
    it('ftp:', () => assertInvalid('ftp://files.example/a', /unsupported scheme "ftp:"/));
    it('data:', () => assertInvalid('data:text/plain,hi', /unsupported scheme "data:"/));
    it('http:// (no host)', () => assertInvalid('http://', /cannot be parsed/));
    it('bad host', () => assertInvalid('http://exa mple.com/', /cannot be parsed/));
    it('empty', () => assertInvalid('   ', /empty/));
    it('bad base', () => assertInvalid('../x', /base URL "nope" is not a valid absolute URL/, 'nope'));
    it('mailto: even with a base', () => assertInvalid('mailto:a@b.c', /unsupported scheme/, 'https://a.example/'));
    it('keeps the message on one line and short', () => {
        assertInvalid('bad\nlink', /no base/);
        const huge = `data:text/plain,${'x'.repeat(10_000)}`;
        assert.throws(
            () => normalizeUrl(huge),
            (error: InvalidUrlError) => error.message.length < 300 && error.url === huge,
        );
    });
});

describe('urlKey', () => {
    const cases: [string, string][] = [
        ['https://a.example/a/b/', 'https://a.example/a/b'],
        ['https://a.example/a/b', 'https://a.example/a/b'],
        ['https://a.example/', 'https://a.example/'],
        ['https://a.example/?q=1', 'https://a.example/?q=1'],
        ['https://a.example/dir/?q=a/', 'https://a.example/dir?q=a/'],
        ['https://a.example//', 'https://a.example/'],
        ['https://a.example/a//', 'https://a.example/a'],
        ['https://user:pw@a.example:8080/d/', 'https://user:pw@a.example:8080/d'],
    ];
    for (const [input, expected] of cases) {
        it(`${input} → ${expected}`, () => assert.equal(urlKey(input), expected));
    }

    it('links to the same page in different forms share one key', () => {
        const forms = [
            'HTTPS://Shop.Example:443/items/?b=2&a=1&utm_source=mail#reviews',
            'https://shop.example/items?a=1&b=2',
            ' https://shop.example/%69tems/?fbclid=xyz&a=1&b=2 ',
            '/items/?a=1&b=2',
        ];
        const keys = forms.map((form) => urlKey(normalizeUrl(form, { base: 'https://shop.example/' })));
        assert.deepEqual(new Set(keys), new Set(['https://shop.example/items?a=1&b=2']));
    });
});

describe('idempotence', () => {
    const inputs = [
        'HTTP://Bücher.Example:80/a/./b/../%7ec/?utm_source=x&b=2&a=1&a=0#f',
        'https://a.example/caf%c3%a9/a%2fb?q=%7e&flag&z=a+b',
        'https://a.example/dir/?',
        'http://a.example/100%/x y',
    ];
    for (const input of inputs) {
        it(input, () => {
            const once = normalizeUrl(input);
            assert.equal(normalizeUrl(once), once);
            assert.equal(urlKey(normalizeUrl(urlKey(once))), urlKey(once));
        });
    }
});
