/**
 * The suites' result files (bench/lib/results.ts): what command a result says reproduces it, where an
 * A/B run's result goes, that a written file reads back as it was and is never seen half-written, and
 * that the commit is called dirty for a change to the code but not for the results themselves.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
    commitOf,
    resultPath,
    scriptCases,
    startResult,
    stringifyResult,
    writeResult,
} from '../../bench/lib/results.js';
import { commandFor, readResult, readResults } from '../../src/authoring/benchmarkResults.js';
import type { BenchOptions } from '../../bench/lib/suite.js';

const options: BenchOptions = {
    runs: 3,
    large: false,
    pageWeight: 'real',
    dragnetOnly: false,
    scale: 1,
    baselines: false,
};
const dirs: string[] = [];
after(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

async function tempDir(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'dragnet-bench-results-test-'));
    dirs.push(dir);
    return dir;
}

describe('commandFor', () => {
    it('names the suite and the flags that shaped its result', () => {
        assert.equal(commandFor('cpu', options), 'npm run -s bench -- cpu --runs 3');
        assert.equal(
            commandFor('cpu', { ...options, products: [10_000, 100_000], runs: 5 }),
            'npm run -s bench -- cpu --products 10000,100000 --runs 5',
        );
        assert.equal(
            commandFor('latency', { ...options, large: true, pageWeight: 'light' }),
            'npm run -s bench -- latency --large --page-weight light --runs 3',
        );
        assert.equal(
            commandFor('seed', { ...options, runs: 1, scale: 0.1, maxConcurrency: 200 }),
            'npm run -s bench -- seed --scale 0.1 --max-concurrency 200 --runs 1',
        );
        assert.equal(commandFor('seed', { ...options, runs: 1 }), 'npm run -s bench -- seed --runs 1');
    });

    it('gives a script, which takes no flags, its name alone', () => {
        assert.equal(commandFor('frontier'), 'npm run -s bench -- frontier');
    });
});

describe('resultPath', () => {
    it('puts an A/B run (--against, --dragnet-only) in ab/, never in the suite file', () => {
        assert.equal(resultPath('/r', 'cpu', options), '/r/bench/results/cpu.json');
        assert.equal(resultPath('/r', 'cpu', { ...options, dragnetOnly: true }), '/r/bench/results/ab/cpu.json');
        assert.equal(
            resultPath('/r', 'cpu', { ...options, against: { name: 'dragnet@abc', label: 'x', script: 'x.ts' } }),
            '/r/bench/results/ab/cpu.json',
        );
        assert.equal(resultPath('/r', 'frontier'), '/r/bench/results/frontier.json');
    });
});

describe('writeResult', () => {
    it('writes a file that reads back as the result it was given, and leaves no temporary file', async () => {
        const root = await tempDir();
        const recording = startResult(root, 'cpu', { ...options, products: [300] });
        recording.cases.push({
            json: {
                case: 'cpu-300',
                crawlers: {
                    dragnet: {
                        median: { pagesPerSec: 167.7 },
                        runs: [{ run: 1, pagesPerSec: 167.7, series: [1, 2.5, null] }],
                    },
                },
            },
            rows: [{ products: 300, crawler: 'dragnet', 'pages/s': 167.7, failed: 0 }],
        });
        recording.cases.push({
            json: { case: 'note', failed: ['jsonl 10000: exit 1, "quoted", with a comma'] },
            rows: [{ note: 'a | b' }],
        });
        const result = recording.finish([{ crawler: 'scrapy', reason: 'not installed' }]);
        const path = resultPath(root, 'cpu', options);

        await writeResult(path, result);
        assert.deepEqual(await readResult(path), result);
        assert.deepEqual(await readdir(join(root, 'bench/results')), ['cpu.json']);

        const text = await readFile(path, 'utf8');
        assert.match(text, /"series": \[1, 2\.5, null\]/, 'a plain array stays on one line');
        assert.match(text, /\n {4}"suite": "cpu",\n/, 'indented by 4');
    });

    it('replaces the result that was there', async () => {
        const root = await tempDir();
        const path = resultPath(root, 'latency', options);
        const first = startResult(root, 'latency', options).finish([]);
        await writeResult(path, first);
        const second = { ...first, command: commandFor('latency', { ...options, runs: 5 }) };
        await writeResult(path, second);
        assert.equal((await readResult(path)).command, 'npm run -s bench -- latency --runs 5');
    });

    it('records the machine, Node, commit, command and times', () => {
        const result = startResult(process.cwd(), 'cpu', options).finish([]);
        assert.equal(result.node, process.version);
        assert.ok(result.machine.cores >= 1 && result.machine.totalMemoryMb > 0 && result.machine.cpuModel.length > 0);
        assert.equal(result.machine.loadAverageAtStart.length, 3);
        assert.match(result.commit.hash ?? '', /^[0-9a-f]{40}$/);
        assert.ok(Date.parse(result.startedAt) <= Date.parse(result.finishedAt));
        assert.deepEqual(result.options, { runs: 3, products: null, large: false, pageWeight: 'real' });
    });

    it('round-trips through stringifyResult byte for byte', async () => {
        const result = startResult(process.cwd(), 'export', options).finish([]);
        assert.equal(stringifyResult(JSON.parse(stringifyResult(result))), stringifyResult(result));
    });
});

describe('readResults', () => {
    it('reads each suite file by its name and leaves the A/B runs out', async () => {
        const root = await tempDir();
        const cpu = startResult(root, 'cpu', options).finish([]);
        await writeResult(resultPath(root, 'cpu', options), cpu);
        await writeResult(
            resultPath(root, 'latency', { ...options, dragnetOnly: true }),
            startResult(root, 'latency', options).finish([]),
        );
        assert.deepEqual(await readResults(root), { cpu });
    });

    it('gives no results where there is no results folder', async () => {
        assert.deepEqual(await readResults(await tempDir()), {});
    });
});

describe('commitOf', () => {
    it('calls the tree dirty for a change to the code, not for a change under bench/results', async () => {
        const root = await tempDir();
        const git = (...args: string[]) =>
            execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], { cwd: root, stdio: 'ignore' });
        git('init', '-q');
        await mkdir(join(root, 'bench/results'), { recursive: true });
        await writeFile(join(root, 'code.ts'), 'one\n');
        await writeFile(join(root, 'bench/results/cpu.json'), '{}\n');
        git('add', '.');
        git('commit', '-q', '-m', 'first');
        assert.equal(commitOf(root).dirty, false);
        assert.match(commitOf(root).hash ?? '', /^[0-9a-f]{40}$/);

        await writeFile(join(root, 'bench/results/cpu.json'), '{"new": 1}\n');
        await writeFile(join(root, 'bench/results/latency.json'), '{}\n');
        assert.equal(commitOf(root).dirty, false, 'results written by the runs themselves');

        await writeFile(join(root, 'code.ts'), 'two\n');
        assert.equal(commitOf(root).dirty, true);
    });

    it('gives no commit outside a git checkout', async () => {
        assert.deepEqual(commitOf(await tempDir()), { hash: null, dirty: false });
    });
});

describe('scriptCases', () => {
    it("makes each JSON line of a script's output a case, its nested figures columns of one row", () => {
        const output =
            'not json\n' +
            '{"bench":"frontier","size":10000,"queue":"bounded",' +
            '"perCpuSec":{"add":5,"fetch":6},"ok":true,"list":[1]}\n';
        assert.deepEqual(scriptCases(output), [
            {
                json: {
                    bench: 'frontier',
                    size: 10000,
                    queue: 'bounded',
                    perCpuSec: { add: 5, fetch: 6 },
                    ok: true,
                    list: [1],
                },
                rows: [{ size: 10000, queue: 'bounded', 'perCpuSec.add': 5, 'perCpuSec.fetch': 6, ok: 'true' }],
            },
        ]);
    });
});
