/**
 * Chromium dying as it starts for a page, after it had started for the run's check: the demo crawl
 * (`npm start`) with a Chromium that kills itself with SIGSEGV on chosen launches. Crawlee takes a
 * launch failure for a broken setup and ends the crawl (a fleet worker then hung until killed, its
 * other attempts' browser launching after the teardown); the browser stage retries the page instead.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { findChromium } from '../../../src/fetch/browser/chromium.js';
import { MAX_LAUNCH_FAILURES_IN_A_ROW } from '../../../src/fetch/browser/launchFailures.js';
import type { RunSummary } from '../../../src/vocabulary/report.js';
import { runCli } from '../../helpers/cli.js';

const executablePath = findChromium();
/** The demo shop's script-only products (DEMO_SHOP: 10% of 200), the pages that go to the browser. */
const ESCALATED = 20;

/**
 * Runs the demo with a Chromium that crashes on the launches `crashes` says yes to (counted from
 * 1, the run's check), and returns its exit code, summary and number of launches.
 */
async function demoWithCrashingChromium(t: TestContext, crashes: (launch: number) => boolean) {
    const dir = await mkdtemp(join(tmpdir(), 'dragnet-launch-failure-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const counter = join(dir, 'launches');
    const crashing = Array.from({ length: 100 }, (_, i) => i + 1).filter(crashes);
    const script = join(dir, 'crashing-chromium');
    await writeFile(
        script,
        // `--version` (the identities reading the release they claim) is not a launch.
        `#!/bin/bash\n[ "$1" = --version ] && exec '${executablePath}' "$@"\n` +
            `n=$(( $(cat '${counter}' 2>/dev/null || echo 0) + 1 ))\necho $n > '${counter}'\n` +
            `case " ${crashing.join(' ')} " in *" $n "*) kill -SEGV $$ ;; esac\nexec '${executablePath}' "$@"\n`,
    );
    await chmod(script, 0o755);
    const summaryFile = join(dir, 'summary.json');
    const run = await runCli(['--storage-dir', join(dir, 'storage'), '--summary-json', summaryFile], {
        CHROMIUM_PATH: script,
    });
    // A run that failed writes no summary: its exit code and stderr say why.
    assert.ok(existsSync(summaryFile), `the run failed (exit code ${run.code}): ${run.stderr.slice(-3000)}`);
    const summary = JSON.parse(await readFile(summaryFile, 'utf8')) as RunSummary;
    return { run, summary, launches: Number(await readFile(counter, 'utf8')) };
}

describe('Chromium crashing as it starts for a page', { skip: executablePath ? false : 'no Chromium found' }, () => {
    it('once: the page is retried in a browser launched anew, and every product is stored', async (t) => {
        const { run, summary, launches } = await demoWithCrashingChromium(t, (launch) => launch === 2);
        assert.equal(run.code, 0, run.stderr);
        assert.ok(launches >= 3, `the check, the crash and a browser after it: ${launches} launches`);
        assert.ok(
            (summary.retriesByReason['browser-launch-failed'] ?? 0) >= 1,
            `the page that met the crash was retried: ${JSON.stringify(summary.retriesByReason)}`,
        );
        assert.equal(summary.items.stored, 200, run.stdout);
        assert.equal(
            summary.deadLetterByReason['browser-launch-failed'],
            undefined,
            JSON.stringify(summary.deadLetterByReason),
        );
    });

    it(`every time after the check: the launches stop after 5 failures in a row, its pages are \
dead-lettered as browser-launch-failed, the rest is crawled, and the exit code is 1`, async (t) => {
        const { run, summary, launches } = await demoWithCrashingChromium(t, (launch) => launch > 1);
        // As when no browser is there at all (renderer-unavailable): pages that needed one were not rendered.
        assert.equal(run.code, 1, run.stderr);
        assert.equal(
            summary.deadLetterByReason['browser-launch-failed'],
            ESCALATED,
            JSON.stringify(summary.deadLetterByReason),
        );
        assert.equal(summary.items.stored, 200 - ESCALATED, run.stdout);
        // Not the retry policy's 4 attempts for each page (81 launches): the check, the 5 failures in a
        // row that open the breaker, and at most the launches of the other pages opening at that moment.
        assert.ok(
            launches >= 1 + MAX_LAUNCH_FAILURES_IN_A_ROW && launches <= 1 + MAX_LAUNCH_FAILURES_IN_A_ROW + 3,
            `${launches} launches`,
        );
        assert.equal(run.stderr.match(/did not start for 5 pages in a row/g)?.length, 1, run.stderr.slice(-3000));
        assert.doesNotMatch(run.stderr, /proxy-refused/, 'a crashed launch is no fault of the direct exit');
    });
});
