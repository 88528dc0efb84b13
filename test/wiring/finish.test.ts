/**
 * The run's exit code (src/wiring/finish.ts): what each part of the run's end says, and that
 * the pages left without a browser are read from the whole run's counters, as its summary is.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { exitCodeOf } from '../../src/wiring/finish.js';

describe('exitCodeOf', () => {
    const done = { routesStopped: 0, deadLetterByReason: { 'http-404': 3, 'http-503': 1 } };

    it('is 0 for a run whose dead-letter holds only what the site did', () => {
        assert.equal(exitCodeOf(done), 0);
    });

    it(`is 1 while the dead-letter holds pages that got no \
browser, whichever way and in whichever session of the run`, () => {
        // A resumed run's counters carry its earlier sessions' entries, until they are re-queued.
        assert.equal(
            exitCodeOf({ ...done, deadLetterByReason: { ...done.deadLetterByReason, 'renderer-unavailable': 2 } }),
            1,
        );
        assert.equal(exitCodeOf({ ...done, deadLetterByReason: { 'browser-launch-failed': 1 } }), 1);
    });

    it(`is 3 when the drift breaker stopped a route, and 128 \
+ the signal when one stopped the run, whatever else`, () => {
        const unrendered = { 'renderer-unavailable': 1 };
        assert.equal(exitCodeOf({ routesStopped: 1, deadLetterByReason: unrendered }), 3);
        assert.equal(exitCodeOf({ stopped: 'SIGINT', routesStopped: 1, deadLetterByReason: unrendered }), 130);
        assert.equal(exitCodeOf({ stopped: 'SIGTERM', routesStopped: 0, deadLetterByReason: {} }), 143);
    });
});
