import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LiveSnapshot } from '../../src/monitor/live.js';
import { formatDuration, formatProgress } from '../../src/monitor/progress.js';

const snapshot: LiveSnapshot = {
    elapsedSec: 12,
    pages: 120,
    pagesPerSec: 24.1,
    queued: 80,
    inFlight: 12,
    retries: 3,
    retriedRequests: 2,
    errors: 5,
    deadLettered: 1,
    escalations: 4,
    items: 110,
    invalid: 2,
    invalidShare: 0.0179,
    etaSec: 4,
};

describe('formatProgress', () => {
    it('says it all on one line', () => {
        assert.equal(
            formatProgress(snapshot),
            'pages 120 · 24.1/s · queue 80 · in flight 12 · retries 3 · errors ' +
                '5 · dead 1 · escalations 4 · items 110 (+2 invalid, 1.8%) · ETA 4s',
        );
    });

    it('leaves out what is not known', () => {
        const line = formatProgress({ ...snapshot, inFlight: null, etaSec: null });
        assert.doesNotMatch(line, /in flight|ETA/);
        assert.doesNotMatch(line, /\n/);
    });

    it("says a recrawl's items by change", () => {
        const changes = { new: 3, changed: 12, unchanged: 95, removed: 2 };
        assert.match(
            formatProgress({ ...snapshot, changes }),
            / · changes 3 new, 12 changed, 95 unchanged, 2 removed · ETA 4s$/,
        );
        assert.doesNotMatch(formatProgress(snapshot), /changes/);
    });

    it('shows a small invalid share as such, not as 0.0%', () => {
        assert.match(formatProgress({ ...snapshot, invalidShare: 0.0004 }), /\(\+2 invalid, <0\.1%\)/);
    });
});

describe('formatDuration', () => {
    it('reads like a clock', () => {
        assert.equal(formatDuration(42), '42s');
        assert.equal(formatDuration(185), '3m05s');
        assert.equal(formatDuration(7620), '2h07m');
    });
});
