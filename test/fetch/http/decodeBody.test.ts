import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';

import iconv from 'iconv-lite';

import { decodeBody } from '../../../src/fetch/http/decodeBody.js';

const page = (head: string, body: string) =>
    `<!doctype html><html><head>${head}<title>${body}</title></head><body><p>${body}</p></body></html>`;
const titleOf = (html: string) => html.match(/<title>(.*?)<\/title>/)?.[1];

describe('decodeBody: where the encoding comes from', () => {
    it('reads windows-1252 from a <meta> charset when the header has none', () => {
        const text = 'Café Crème – 5€';
        const bytes = iconv.encode(page('<meta charset="windows-1252">', text), 'windows-1252');
        // The bytes are not UTF-8: é is 0xE9, – is 0x96, € is 0x80.
        assert.ok(bytes.includes(Buffer.from([0x43, 0x61, 0x66, 0xe9])));
        const decoded = decodeBody(bytes, 'text/html');
        assert.equal(decoded.charset, 'windows-1252');
        assert.equal(titleOf(decoded.html), text);
        assert.equal(decoded.binary, false);
    });

    it('reads the legacy http-equiv form of the <meta> charset', () => {
        const bytes = iconv.encode(
            page('<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">', 'Crème'),
            'windows-1252',
        );
        assert.equal(titleOf(decodeBody(bytes, undefined).html), 'Crème');
    });

    it('reads Shift_JIS from the Content-Type header alone', () => {
        const text = '日本語のタイトル';
        const bytes = iconv.encode(page('', text), 'Shift_JIS');
        const decoded = decodeBody(bytes, 'text/html; charset=Shift_JIS');
        assert.equal(decoded.charset, 'Shift_JIS');
        assert.equal(titleOf(decoded.html), text);
        // `sjis` is a WHATWG label of the same encoding.
        assert.equal(titleOf(decodeBody(bytes, 'text/html;charset=sjis').html), text);
        // Without the label the same bytes are not this text.
        assert.notEqual(titleOf(decodeBody(bytes, 'text/html').html), text);
    });

    it('reads UTF-16LE from its byte order mark, with no charset anywhere, and drops the mark', () => {
        const text = 'Grüße – ünïcödé';
        const bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(page('', text), 'utf16le')]);
        const decoded = decodeBody(bytes, 'text/html');
        assert.equal(decoded.charset, 'UTF-16LE');
        assert.equal(decoded.html, page('', text));
        assert.equal(decoded.binary, false);
    });

    it('strips a UTF-8 byte order mark', () => {
        const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(page('', 'Zoë'), 'utf8')]);
        const decoded = decodeBody(bytes, 'text/html');
        assert.equal(decoded.charset, 'UTF-8');
        assert.equal(decoded.html, page('', 'Zoë'));
        assert.equal(decoded.html.charCodeAt(0), '<'.charCodeAt(0));
    });

    it('lets a byte order mark win over the header', () => {
        const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('<p>Zoë</p>', 'utf8')]);
        const decoded = decodeBody(bytes, 'text/html; charset=windows-1252');
        assert.equal(decoded.charset, 'UTF-8');
        assert.equal(decoded.html, '<p>Zoë</p>');
    });

    it('lets the header’s charset win over a <meta> one', () => {
        const bytes = Buffer.from(page('<meta charset="windows-1252">', 'Café €5'), 'utf8');
        const decoded = decodeBody(bytes, 'text/html; charset=utf-8');
        assert.equal(decoded.charset, 'UTF-8');
        assert.equal(titleOf(decoded.html), 'Café €5');
    });

    it('decodes the labels latin1 and iso-8859-1 as windows-1252 (0x80 is €)', () => {
        const bytes = Buffer.from([
            ...Buffer.from('<p>'),
            0x80,
            0x20,
            0xe9,
            0x20,
            0x93,
            0x71,
            0x94,
            ...Buffer.from('</p>'),
        ]);
        for (const contentType of [
            'text/html; charset=latin1',
            'text/html; charset=ISO-8859-1',
            'text/html; charset="iso-8859-1"',
        ]) {
            const decoded = decodeBody(bytes, contentType);
            assert.equal(decoded.charset, 'windows-1252', contentType);
            assert.equal(decoded.html, '<p>€ é “q”</p>', contentType);
        }
    });

    it('passes over an unknown label to the <meta> charset, then to UTF-8, without throwing', () => {
        const withMeta = iconv.encode(page('<meta charset="windows-1252">', 'Café'), 'windows-1252');
        const viaMeta = decodeBody(withMeta, 'text/html; charset=x-nonsense');
        assert.equal(viaMeta.charset, 'windows-1252');
        assert.equal(titleOf(viaMeta.html), 'Café');

        const withoutMeta = Buffer.from(page('', 'Café'), 'utf8');
        const viaDefault = decodeBody(withoutMeta, 'text/html; charset=x-nonsense');
        assert.equal(viaDefault.charset, 'UTF-8');
        assert.equal(titleOf(viaDefault.html), 'Café');
    });

    it('defaults to UTF-8 with no header at all', () => {
        const decoded = decodeBody(Buffer.from('<p>naïve</p>', 'utf8'), undefined);
        assert.deepEqual(decoded, { html: '<p>naïve</p>', charset: 'UTF-8', binary: false });
    });

    it('replaces invalid UTF-8 with U+FFFD', () => {
        // 0xFF and 0xFE are never UTF-8; 0xC3 starts a two-byte sequence that '(' does not continue;
        // 0xE2 0x82 is a three-byte sequence cut short.
        const bytes = Buffer.from([
            ...Buffer.from('<p>a'),
            0xff,
            0xfe,
            0x62,
            0xc3,
            0x28,
            0x63,
            0xe2,
            0x82,
            ...Buffer.from('</p>'),
        ]);
        const decoded = decodeBody(bytes, 'text/html; charset=utf-8');
        assert.equal(decoded.html, '<p>a\uFFFD\uFFFDb\uFFFD(c\uFFFD</p>');
        assert.equal(decoded.binary, false);
    });
});

describe('decodeBody: binary bodies', () => {
    it('flags a body with NUL bytes as binary, whatever its label', () => {
        // A PNG signature and header, then noise: no byte order mark at the start.
        const png = Buffer.concat([
            Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d]),
            Buffer.from('IHDR'),
            randomBytes(4096),
        ]);
        assert.equal(decodeBody(png, 'text/html; charset=utf-8').binary, true);
        assert.equal(decodeBody(png, 'text/html; charset=windows-1252').binary, true);
        assert.equal(decodeBody(png, undefined).binary, true);
    });

    it('flags random bytes carrying a NUL early as binary', () => {
        const noise = randomBytes(2048);
        noise[0] = 0x1f; // not the start of a byte order mark
        noise[100] = 0;
        assert.equal(decodeBody(noise, 'text/html').binary, true);
    });

    it('does not flag UTF-16, whose ASCII characters carry NUL bytes', () => {
        const text = Buffer.from(page('', 'plain ascii'), 'utf16le');
        assert.ok(text.includes(0), 'the UTF-16 bytes have NULs');
        assert.equal(decodeBody(Buffer.concat([Buffer.from([0xff, 0xfe]), text]), 'text/html').binary, false);
        const labelled = decodeBody(text, 'text/html; charset=utf-16le');
        assert.equal(labelled.binary, false);
        assert.equal(titleOf(labelled.html), 'plain ascii');
        const bigEndian = Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text).swap16()]);
        assert.deepEqual(decodeBody(bigEndian, undefined), {
            html: page('', 'plain ascii'),
            charset: 'UTF-16BE',
            binary: false,
        });
    });

    it('does not flag a page with a stray control character', () => {
        const bytes = Buffer.from(`<p>pasted\x08 from a CMS\x01\x7f</p>`, 'latin1');
        const decoded = decodeBody(bytes, 'text/html; charset=utf-8');
        assert.equal(decoded.binary, false);
        assert.equal(decoded.html, '<p>pasted\x08 from a CMS\x01\x7f</p>');
    });
});
