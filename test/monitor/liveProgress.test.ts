import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import type { LiveSnapshot } from '../../src/monitor/live.js';
import { formatLiveLine, startLiveProgress } from '../../src/monitor/liveProgress.js';
import { PinnedLine } from '../../src/monitor/pinnedLine.js';
import { RunStats } from '../../src/monitor/stats.js';
import { FakeTerminal } from './fakeTerminal.js';
import { withoutColours } from './terminalScreen.js';

const snapshot: LiveSnapshot = {
    elapsedSec: 12,
    pages: 120,
    pagesPerSec: 24.1,
    queued: 68,
    inFlight: 12,
    retries: 3,
    retriedRequests: 2,
    errors: 5,
    deadLettered: 1,
    escalations: 4,
    items: 110,
    invalid: 2,
    invalidShare: 0.0179,
    etaSec: 3,
};

const FULL =
    'pages 120 · 24.1/s · ETA 3s · queue 68 · in flight 12 · errors 5 ' +
    '· escalations 4 · retries 3 · dead 1 · items 110 (+2 invalid, 1.8%)';

describe('formatLiveLine', () => {
    it('says what the progress line says, the most telling first, and no bar while the total is unknown', () => {
        assert.equal(formatLiveLine(snapshot, { width: 200 }), FULL);
    });

    it('draws a bar of the pages done once the total is known', () => {
        assert.equal(
            formatLiveLine(snapshot, { width: 60, total: 200 }),
            '██████░░░░ 60% · pages 120/200 · 24.1/s · ETA 3s · queue 68',
        );
        assert.match(formatLiveLine(snapshot, { width: 200, total: 200 }), /^█{12}░{8} 60% · pages 120\/200 · /);
        assert.match(formatLiveLine({ ...snapshot, pages: 199 }, { width: 80, total: 200 }), / 99% /);
    });

    it('fits a narrow terminal by leaving off whole parts from the end, and cuts only a part that fits nowhere', () => {
        for (const width of [10, 20, 33, 47, 80, 119]) {
            const line = formatLiveLine(snapshot, { width });
            assert.ok(line.length <= width, `${width}: ${line}`);
            assert.ok(FULL.startsWith(line) && (line === FULL || FULL.startsWith(`${line} · `)), `${width}: ${line}`);
        }
        assert.equal(formatLiveLine(snapshot, { width: 6 }), 'pages…');
    });

    it('colours the bar and what went wrong only when asked to, at the same width', () => {
        // biome-ignore lint/suspicious/noControlCharactersInRegex: no ESC (\x1b): no colour unless asked for
        assert.doesNotMatch(formatLiveLine(snapshot, { width: 200, total: 200 }), /\x1b/);
        const coloured = formatLiveLine(snapshot, { width: 200, total: 200, color: true });
        // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colours begin with ESC (\x1b)
        assert.match(coloured, /\x1b\[36m█+\x1b\[39m\x1b\[90m░+\x1b\[39m 60%/);
        // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colours begin with ESC (\x1b)
        assert.match(coloured, /\x1b\[31merrors 5\x1b\[39m/);
        assert.equal(withoutColours(coloured), formatLiveLine(snapshot, { width: 200, total: 200 }));
        assert.doesNotMatch(
            formatLiveLine({ ...snapshot, errors: 0, deadLettered: 0 }, { width: 200, color: true }),
            // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colours begin with ESC (\x1b)
            /\x1b\[31m/,
        );
    });
});

describe('startLiveProgress', () => {
    it(`redraws the line from the run counters, with a bar once the frontier \
has admitted --max-requests, and takes it away when stopped`, async () => {
        const terminal = new FakeTerminal(120);
        const stats = new RunStats();
        const stop = startLiveProgress({
            stats,
            line: new PinnedLine(terminal.asTerminal()),
            refreshMs: 20,
            maxRequests: 50,
        });
        stats.admitted = 30;
        stats.succeeded = 10;
        await sleep(70);
        assert.match(terminal.screen.text(), /^pages 10 · [\d.]+\/s · /);
        stats.admitted = 50;
        stats.succeeded = 25;
        await sleep(70);
        assert.match(terminal.screen.text(), /^█+░+ 50% · pages 25\/50 · /);
        stop();
        assert.equal(terminal.screen.text(), '');
    });
});
