import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DriftBreaker } from '../../src/quality/driftBreaker.js';

const page = (n: number, invalid: boolean) => ({
    invalid,
    fields: invalid ? ['title'] : [],
    url: `http://127.0.0.1:9/products/${n}`,
    rawKey: `key-${n}`,
    issues: invalid ? ['title: Invalid input: expected string, received undefined'] : [],
});

/** Judges pages until the breaker trips; returns the page number it tripped on, or undefined. */
function judgeUntilTrip(breaker: DriftBreaker, pages: number, isInvalid: (n: number) => boolean): number | undefined {
    for (let n = 1; n <= pages; n++) {
        if (breaker.judge('product', page(n, isInvalid(n)))) return n;
    }
    return undefined;
}

describe('DriftBreaker with its defaults', () => {
    it('trips within 200 pages of a required field that stops matching on every page', () => {
        const breaker = new DriftBreaker();
        const drift = 5_000;
        const tripped = judgeUntilTrip(breaker, 10_000, (n) => n > drift);
        assert.ok(tripped !== undefined && tripped - drift <= 200, `tripped at ${tripped}`);
        const [trip] = breaker.tripped;
        assert.equal(trip?.route, 'product');
        assert.deepEqual(Object.keys(trip!.failingFields), ['title']);
        assert.ok(
            trip!.samples.length > 0 && trip!.samples.every((sample) => Number(sample.url.split('/').pop()) > drift),
        );
        assert.equal(breaker.isStopped('product'), true);
        assert.equal(breaker.isStopped('category'), false, 'scope route stops only the route');
    });

    it('never trips on a steady 1% of invalid pages', () => {
        const breaker = new DriftBreaker();
        assert.equal(
            judgeUntilTrip(breaker, 50_000, (n) => n % 100 === 0),
            undefined,
        );
        // Nor on bursts of it: ten bad pages in a row once every thousand.
        assert.equal(
            judgeUntilTrip(new DriftBreaker(), 50_000, (n) => n % 1000 < 10),
            undefined,
        );
    });

    it('does not judge before minSamples pages', () => {
        const breaker = new DriftBreaker({ minSamples: 50 });
        assert.equal(
            judgeUntilTrip(breaker, 49, () => true),
            undefined,
        );
        assert.equal(breaker.judge('product', page(50, true))?.pagesJudged, 50);
    });
});

describe("DriftBreaker with scope 'run'", () => {
    it('stops every route once one trips', () => {
        const breaker = new DriftBreaker({ scope: 'run', minSamples: 10, window: 10 });
        judgeUntilTrip(breaker, 100, () => true);
        assert.equal(breaker.isStopped('category'), true);
    });
});
