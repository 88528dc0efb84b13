import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { changeRate, nextDueAt } from '../../src/frontier/revisitPolicy.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** A page looked at `checks` times a day apart after its first capture, found changed `changes` times. */
const page = (checks: number, changes: number) => ({
    checks,
    changes,
    firstCheckedAt: 0,
    lastCheckedAt: checks * DAY,
});

describe('changeRate', () => {
    it("is Cho and Garcia-Molina's estimate: −ln((n − X + ½)/(n + ½)) / Ī", () => {
        assert.equal(changeRate(page(4, 2)), -Math.log(2.5 / 4.5) / DAY);
        assert.equal(changeRate(page(1, 1)), -Math.log(0.5 / 1.5) / DAY);
    });

    it('reads a change at every check as more than one change per check, not exactly one', () => {
        assert.ok(changeRate(page(10, 10))! > 1 / DAY);
    });

    it('takes half a change for a page never seen to change, so its estimate falls with each quiet check', () => {
        const rates = [1, 2, 4, 8].map((checks) => changeRate(page(checks, 0))!);
        assert.ok(rates.every((rate) => rate > 0));
        for (let i = 1; i < rates.length; i++) assert.ok(rates[i]! < rates[i - 1]!);
    });

    it('has no estimate before a page was looked at again', () => {
        assert.equal(changeRate(page(0, 0)), undefined);
    });
});

describe('nextDueAt', () => {
    it('is due at once before there is an estimate', () => {
        assert.equal(nextDueAt(page(0, 0)), 0);
    });

    it('is one expected change interval after the last check', () => {
        const history = page(4, 2);
        assert.equal(nextDueAt(history), Math.ceil(history.lastCheckedAt + 1 / changeRate(history)!));
    });

    it('waits longer for a page that changes less', () => {
        assert.ok(nextDueAt(page(4, 0)) > nextDueAt(page(4, 1)));
        assert.ok(nextDueAt(page(4, 1)) > nextDueAt(page(4, 4)));
    });

    it('keeps within --revisit-min and --revisit-max', () => {
        const quiet = page(30, 0);
        assert.equal(nextDueAt(quiet, { revisitMax: 2 * DAY }), quiet.lastCheckedAt + 2 * DAY);
        const busy = page(30, 30);
        assert.equal(nextDueAt(busy, { revisitMin: 12 * HOUR }), busy.lastCheckedAt + 12 * HOUR);
        assert.equal(nextDueAt(busy, { revisitMin: 3 * DAY, revisitMax: DAY }), busy.lastCheckedAt + 3 * DAY);
    });
});
