import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { createLogger } from '../../src/monitor/logger.js';
import { startRetrySummary } from '../../src/monitor/retrySummary.js';
import { RunStats } from '../../src/monitor/stats.js';

function recordingLog() {
    const lines: { level: number; msg: string; retries?: Record<string, number> }[] = [];
    const destination = new Writable({
        write(chunk, _encoding, done) {
            lines.push(JSON.parse(String(chunk)));
            done();
        },
    });
    return { log: createLogger({ level: 'info', destination }), lines };
}

function retry(stats: RunStats, reason: string, times = 1): void {
    for (let i = 0; i < times; i++) {
        stats.retries += 1;
        stats.retryReasons[reason] = (stats.retryReasons[reason] ?? 0) + 1;
    }
}

describe('the retry summary', () => {
    it('says once per interval how many retries there were and why, most first, and nothing when none', async () => {
        const stats = new RunStats();
        const { log, lines } = recordingLog();
        const stop = startRetrySummary({ stats, log, intervalMs: 100 });
        retry(stats, 'timeout', 2);
        retry(stats, 'http-503', 5);
        await sleep(150);
        await sleep(100); // an interval with no retry says nothing
        retry(stats, 'timeout');
        stop();
        assert.deepEqual(
            lines.map((line) => [line.level, line.retries]),
            [
                [30, { 'http-503': 5, timeout: 2 }],
                [30, { timeout: 1 }],
            ],
        );
        assert.match(lines[0]!.msg, /^retries in the last \d+ s: 7 \(http-503 5, timeout 2\); 7 in all$/);
        assert.match(lines[1]!.msg, /: 1 \(timeout 1\); 8 in all$/);
    });

    it('counts on from a resumed run’s retries without saying them again', async () => {
        const saved = new RunStats();
        retry(saved, 'timeout', 4);
        const stats = RunStats.resume(saved.snapshot());
        assert.deepEqual(stats.retryReasons, { timeout: 4 });
        const { log, lines } = recordingLog();
        const stop = startRetrySummary({ stats, log, intervalMs: 100 });
        retry(stats, 'econnreset');
        stop();
        assert.deepEqual(
            lines.map((line) => line.retries),
            [{ econnreset: 1 }],
        );
    });
});
