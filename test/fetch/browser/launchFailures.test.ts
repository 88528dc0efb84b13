/**
 * The launch breaker (src/fetch/browser/launchFailures.ts): when it opens, that it stays open, and that an
 * opened page in between starts the count again. The crawl with a Chromium that never starts again
 * is in browserLaunchFailure.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { LaunchBreaker } from '../../../src/fetch/browser/launchFailures.js';

describe('LaunchBreaker', () => {
    it('opens after the given number of failed launches in a row, says so once, and stays open', () => {
        const breaker = new LaunchBreaker(3);
        const told: string[] = [];
        breaker.onOpen = (reason) => told.push(reason);
        breaker.failed();
        breaker.failed();
        assert.equal(breaker.open, false);
        breaker.failed();
        assert.equal(breaker.open, true);
        breaker.opened(); // a page that was opening before it opened: it does not close it
        breaker.failed();
        assert.equal(breaker.open, true);
        assert.deepEqual(told, ['the browser did not start for 3 pages in a row: no more launches in this run']);
        assert.equal(breaker.reason, told[0]);
    });

    it('counts again from an opened page: failures apart are not in a row', () => {
        const breaker = new LaunchBreaker(3);
        for (let round = 0; round < 5; round++) {
            breaker.failed();
            breaker.failed();
            breaker.opened();
        }
        assert.equal(breaker.open, false);
    });
});
