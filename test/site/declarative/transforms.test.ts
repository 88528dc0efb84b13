/**
 * The transforms of declarative fields (src/site/declarative/transforms.ts): what each step makes of a
 * value, and which chains fit.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileTransform, kindAfter, type TransformSpec } from '../../../src/site/declarative/transforms.js';

const page = { base: () => new URL('https://shop.example/p/1') };
const run = (spec: TransformSpec, value: unknown) => compileTransform(spec)(value, page);

describe('transforms', () => {
    it('price reads the amount whichever mark separates the decimals', () => {
        const amounts: [string, number | undefined][] = [
            ['£51.77', 51.77],
            ['£1,234.50', 1234.5],
            ['1.234,50 €', 1234.5],
            ['1\u00a0234,50 €', 1234.5],
            ["CHF 1'234.50", 1234.5],
            ['12,50 €', 12.5],
            ['$1,234', 1234],
            ['1.234 €', 1234],
            ['1,234,567.89', 1234567.89],
            ['€ 0,99', 0.99],
            ['-5.00', -5],
            ['£10 for 2', 10],
            ['free', undefined],
        ];
        for (const [text, amount] of amounts) assert.equal(run('price', text), amount, text);
    });

    it('number reads the first number as numberOf does: commas dropped, a dot the decimal point', () => {
        assert.equal(run('number', 'In stock (1,022 available)'), 1022);
        assert.equal(run('number', '3.5 stars'), 3.5);
        assert.equal(run('number', 'none'), undefined);
    });

    it('regex gives the first group, or the whole match without one; no match is missing', () => {
        assert.equal(run({ regex: '\\((\\d+) available\\)' }, 'In stock (22 available)'), '22');
        assert.equal(run({ regex: '[A-Z]{3}' }, 'price in GBP'), 'GBP');
        assert.equal(run({ regex: 'sku', flags: 'i' }, 'SKU-1'), 'SKU');
        assert.equal(run({ regex: 'a(x)?' }, 'a'), undefined, 'the group took no part');
        assert.equal(run({ regex: '\\d' }, 'none'), undefined);
    });

    it('matches, map, split, trim and absoluteUrl', () => {
        assert.equal(run({ matches: '\\bin stock\\b', flags: 'i' }, 'In Stock'), true);
        assert.equal(run({ matches: '\\bin stock\\b' }, 'Out of stock'), false);
        assert.equal(run({ map: { One: 1, Two: 2 } }, 'Two'), 2);
        assert.equal(run({ map: { One: 1 } }, 'constructor'), undefined, "only the map's own entries");
        assert.deepEqual(run({ split: '|' }, ' a | b  c ||'), ['a', 'b c']);
        assert.equal(run('trim', '  a \n b  '), 'a b');
        assert.equal(run('trim', '   '), undefined);
        assert.equal(run('absoluteUrl', '../media/x.jpg'), 'https://shop.example/media/x.jpg');
        assert.equal(run('absoluteUrl', 'http://[bad'), undefined);
    });

    it('a chain gives a kind of value, and a step given what it does not take is refused', () => {
        assert.deepEqual(kindAfter([]), { kind: 'text' });
        assert.deepEqual(kindAfter([{ regex: '\\d+' }, 'number']), { kind: 'number' });
        assert.deepEqual(kindAfter(['absoluteUrl']), { kind: 'url' });
        assert.deepEqual(kindAfter(['number', { map: { '1': true, '2': false } }]), { kind: 'boolean' });
        assert.deepEqual(kindAfter(['price', 'trim']), {
            step: 1,
            problem: 'trim takes text, and the value is a number by then',
        });
        assert.deepEqual(kindAfter([{ map: { a: 1, b: 'x' } }]), {
            step: 0,
            problem: 'a map needs entries, and their values all text, all numbers or all booleans',
        });
    });
});
