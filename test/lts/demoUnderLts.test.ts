/**
 * `npm start`, the demo crawl, under Node's current LTS line (package.json `config.ltsNode`, from the
 * npm registry's node package; ltsNode.ts), while the rest of the suite runs on the Node this
 * machine has. The first run on a machine downloads that Node and builds better-sqlite3 for it.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunSummary } from '../../src/index.js';
import { ROOT } from '../helpers/cli.js';
import { type LtsNode, provisionLtsNode } from './ltsNode.js';

const run = promisify(execFile);

/** Fetching and building on a machine's first run, then the demo itself. */
const DEMO_TIMEOUT_MS = 300_000;

interface Ran {
    code: number | null;
    output: string;
}

function npmStart(lts: LtsNode, env: NodeJS.ProcessEnv): Promise<Ran> {
    const child = spawn('npm', ['start'], { cwd: ROOT, env: { ...lts.env, ...env }, timeout: DEMO_TIMEOUT_MS });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        output += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        output += chunk;
    });
    return new Promise((resolve, reject) => {
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, output }));
    });
}

describe('the demo under the current LTS Node', { timeout: 2 * DEMO_TIMEOUT_MS }, () => {
    let storageDir: string;
    let lts: LtsNode;
    let ran: Ran;
    let summary: RunSummary;

    before(async () => {
        storageDir = await mkdtemp(join(tmpdir(), 'dragnet-lts-'));
        lts = await provisionLtsNode();
        const summaryJson = join(storageDir, 'summary.json');
        ran = await npmStart(lts, {
            DRAGNET_STORAGE_DIR: storageDir,
            DRAGNET_SUMMARY_JSON: summaryJson,
            LOG_LEVEL: 'warn',
        });
        if (ran.code === 0) summary = JSON.parse(await readFile(summaryJson, 'utf8')) as RunSummary;
    });
    after(() => rm(storageDir, { recursive: true, force: true }));

    it('runs `npm start` on that Node and exits 0', () => {
        assert.equal(
            ran.code,
            0,
            `npm start under Node ${lts.version} exited ${ran.code}:\n${ran.output.slice(-3000)}`,
        );
        assert.match(ran.output, /dragnet: \S+ finished in/);
    });

    it('offers zstd where that Node can decode it, and decodes a zstd body', async () => {
        const { stdout } = await run(lts.node, ['--import', 'tsx', 'test/lts/zstdBody.ts'], {
            cwd: ROOT,
            env: lts.env,
        });
        const { offered, body } = JSON.parse(stdout) as { offered: string; body: string };
        assert.equal(offered, 'gzip, deflate, br, zstd');
        assert.equal(body, '<html><title>zstd</title></html>');
    });

    it('crawled the whole demo shop over HTTP and in the browser', () => {
        assert.ok(summary.items.stored > 0);
        assert.equal(summary.requests.total, summary.requests.succeeded + summary.requests.deadLettered);
        assert.ok(summary.browser.rendered > 0, 'the script-only products were rendered in Chromium');
    });
});
