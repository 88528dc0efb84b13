import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';

import { describeIncomplete, isIncomplete, validatePage } from '../../src/quality/validate.js';
import { defineSite, type Route } from '../../src/site/site.js';

const productSchema = z.object({
    title: z.string().min(1),
    price: z.number().positive(),
    sku: z.string().optional(),
});

const site = defineSite({
    name: 'validate-test',
    startUrls: ['http://127.0.0.1/'],
    routes: {
        product: { schema: productSchema, extract: () => ({ title: 'A', price: 1 }) },
        listing: { schema: productSchema, extract: () => [], minRecords: 3 },
        index: { enqueue: [{ selector: 'a.product', label: 'product' }] },
        priced: {
            // The site shows "£51.77"; the schema turns it into a number and adds a currency.
            schema: z.object({
                title: z.string().trim(),
                price: z.string().transform((text) => Number(text.replace(/[^\d.]/g, ''))),
                currency: z.string().default('GBP'),
            }),
            extract: () => ({ title: 'x', price: '£1' }),
        },
    },
});

function route(label: string): Route {
    const found = site.routes.get(label);
    assert.ok(found, `route ${label}`);
    return found;
}

describe('validatePage', () => {
    it('passes a valid single record', () => {
        const verdict = validatePage(route('product'), { title: 'Lamp', price: 12.5 });
        assert.deepEqual(verdict, { valid: [{ title: 'Lamp', price: 12.5 }], invalid: [] });
        assert.equal(isIncomplete(verdict), false);
        assert.equal(describeIncomplete(verdict), '');
    });

    it('separates the one invalid record of a list from the valid ones', () => {
        const records = [
            { title: 'Lamp', price: 12.5 },
            { title: 'Chair', price: -3 },
            { title: 'Desk', price: 99 },
        ];
        const verdict = validatePage(route('listing'), records);
        assert.deepEqual(
            verdict.valid.map((record) => record.title),
            ['Lamp', 'Desk'],
        );
        assert.equal(verdict.invalid.length, 1);
        assert.deepEqual(verdict.invalid[0]?.record, records[1]);
        assert.deepEqual(verdict.invalid[0]?.fields, ['price']);
        assert.match(verdict.invalid[0]?.issues[0] ?? '', /^price: /);
        assert.equal(verdict.shortfall, undefined, 'three records meet minRecords 3');
        assert.equal(isIncomplete(verdict), true);
        assert.equal(describeIncomplete(verdict), 'missing or invalid: price');
    });

    it('names each missing required field in fields and issues', () => {
        const verdict = validatePage(route('product'), { sku: 'SKU-1' });
        assert.deepEqual(verdict.valid, []);
        const [invalid] = verdict.invalid;
        assert.ok(invalid);
        assert.deepEqual(invalid.fields.sort(), ['price', 'title']);
        assert.equal(invalid.issues.length, 2);
        assert.ok(
            invalid.issues.some((issue) => /^title: .*expected string, received undefined/.test(issue)),
            invalid.issues.join(' | '),
        );
        assert.ok(
            invalid.issues.some((issue) => /^price: .*expected number, received undefined/.test(issue)),
            invalid.issues.join(' | '),
        );
        assert.match(describeIncomplete(verdict), /^missing or invalid: (title, price|price, title)$/);
    });

    it('lists a field once in describeIncomplete however many records miss it', () => {
        const verdict = validatePage(route('listing'), [{ price: 1 }, { price: 2 }, { title: 'ok', price: 3 }]);
        assert.equal(verdict.invalid.length, 2);
        assert.equal(describeIncomplete(verdict), 'missing or invalid: title');
    });

    it('names a record that is not an object as "(record)"', () => {
        const verdict = validatePage(route('product'), 'just a string');
        assert.deepEqual(verdict.invalid[0]?.fields, ['(record)']);
        assert.match(verdict.invalid[0]?.issues[0] ?? '', /^\(record\): /);
    });

    it('reports a shortfall under minRecords, even when every record is valid', () => {
        const listing = validatePage(route('listing'), [{ title: 'Lamp', price: 1 }]);
        assert.equal(listing.valid.length, 1);
        assert.equal(listing.shortfall, '1 of at least 3 records');
        assert.equal(isIncomplete(listing), true);
        assert.equal(describeIncomplete(listing), '1 of at least 3 records');

        // An extractor with nothing to say (null, undefined, []) falls short of the default minRecords 1.
        for (const nothing of [null, undefined, []]) {
            const verdict = validatePage(route('product'), nothing);
            assert.equal(verdict.shortfall, '0 of at least 1 records', String(nothing));
            assert.deepEqual(verdict.invalid, []);
        }
    });

    it('joins missing fields and a shortfall in one reason', () => {
        const verdict = validatePage(route('listing'), [{ title: 'Lamp' }]);
        assert.equal(describeIncomplete(verdict), 'missing or invalid: price; 1 of at least 3 records');
    });

    it('accepts a navigation-only route that yields nothing', () => {
        const verdict = validatePage(route('index'), []);
        assert.deepEqual(verdict, { valid: [], invalid: [] });
        assert.equal(isIncomplete(verdict), false);
    });

    it('stores what the schema outputs: transforms and defaults applied', () => {
        const verdict = validatePage(route('priced'), { title: '  A Light in the Attic ', price: '£51.77' });
        assert.deepEqual(verdict.valid, [{ title: 'A Light in the Attic', price: 51.77, currency: 'GBP' }]);
    });

    it('drops fields the schema does not declare', () => {
        const verdict = validatePage(route('product'), { title: 'Lamp', price: 1, debug: '<div>' });
        assert.deepEqual(verdict.valid, [{ title: 'Lamp', price: 1 }]);
    });
});
