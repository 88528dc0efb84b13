import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AmbientErrors } from '../../../src/fetch/pacing/ambientErrors.js';

/** `count` outcomes, `errors` of them transient failures spread evenly, each counted in `trial`. */
function outcomes(ambient: AmbientErrors, count: number, errors: number, enrol = false): void {
    for (let i = 0; i < count; i++) {
        const trial = enrol ? ambient.enrol() : undefined;
        ambient.record(Math.floor(((i + 1) * errors) / count) > Math.floor((i * errors) / count) ? 1 : 0, trial);
    }
}

/**
 * A tracker that has seen 200 outcomes at 5%, then a cut from
 * 40 and a trial of 100 fetches failing `trialErrors` times.
 */
function afterTrial(trialErrors: number): { ambient: AmbientErrors; undoTo: number | undefined } {
    const ambient = new AmbientErrors();
    outcomes(ambient, 200, 10);
    ambient.windowStarted();
    ambient.cut(40);
    outcomes(ambient, 100, trialErrors, true);
    return { ambient, undoTo: ambient.judgeTrial(0.02) };
}

describe('AmbientErrors', () => {
    it('takes a window as having too many errors only over the threshold and beyond chance', () => {
        const ambient = new AmbientErrors();
        assert.equal(ambient.tooMany(3, 20, 0.1), false, '3 of 20: over 10%, but within chance');
        assert.equal(ambient.tooMany(4, 20, 0.1), true);
        assert.equal(ambient.tooMany(2, 20, 0.1), false, '10%: not over the threshold');
    });

    it('undoes a cut after which the failures went on at the same rate, and learns that rate', () => {
        const { ambient, undoTo } = afterTrial(5);
        assert.equal(undoTo, 40);
        assert.ok(Math.abs(ambient.rate - 0.05) < 0.01, `ambient rate ${ambient.rate}`);
        // The thresholds now count from 5%: 4 of 20 is no longer too many, 7 of 20 is.
        assert.equal(ambient.tooMany(4, 20, 0.1), false);
        assert.equal(ambient.tooMany(7, 20, 0.1), true);
    });

    it('keeps a cut after which the failures fell, or rose past what can be ambient', () => {
        assert.equal(afterTrial(0).undoTo, undefined, 'the cut helped');
        assert.equal(afterTrial(25).undoTo, undefined, '25% failing: a site in trouble');
        assert.equal(afterTrial(0).ambient.rate, 0);
    });

    it('waits for every fetch started in the trial, and judges a chain of cuts as one', () => {
        const ambient = new AmbientErrors();
        outcomes(ambient, 200, 10);
        ambient.windowStarted();
        ambient.cut(40);
        outcomes(ambient, 60, 3, true);
        ambient.cut(30); // a second cut while the first is judged: the trial starts again from it
        outcomes(ambient, 99, 5, true);
        assert.equal(ambient.judgeTrial(0.02), undefined, '99 of 100 outcomes since the second cut');
        outcomes(ambient, 1, 0, true);
        assert.equal(ambient.judgeTrial(0.02), 40, 'back to the limit before the first cut');
    });

    it('judges a chain of cuts by the fetches after the last: those between were still over the ceiling', () => {
        const ambient = new AmbientErrors();
        outcomes(ambient, 200, 10);
        ambient.windowStarted();
        ambient.cut(45);
        outcomes(ambient, 60, 6, true); // 10% at 33, still over the site's ceiling: as before the cut
        ambient.cut(33);
        outcomes(ambient, 100, 0, true);
        assert.equal(ambient.judgeTrial(0.02), undefined, 'the cuts stand: the errors stopped at the last limit');
        assert.equal(ambient.rate, 0);
    });

    it('undoes, learning nothing, a cut made before there was a rate to compare with', () => {
        const ambient = new AmbientErrors();
        ambient.windowStarted();
        ambient.cut(40);
        outcomes(ambient, 100, 5, true);
        assert.equal(ambient.judgeTrial(0.02), 40);
        assert.equal(ambient.rate, 0);
    });

    it('follows the error rate down when the failures stop, but not its noise', () => {
        const { ambient } = afterTrial(5);
        outcomes(ambient, 200, 8); // 4%: within the noise of 5%
        ambient.windowEnded();
        assert.ok(ambient.rate >= 0.05, `ambient rate ${ambient.rate} after a quiet stretch`);
        outcomes(ambient, 600, 0);
        ambient.windowEnded();
        assert.ok(ambient.rate < 0.01, `ambient rate ${ambient.rate} after 600 clean outcomes`);
    });
});
