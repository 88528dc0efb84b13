/**
 * The live view as a user sees it: the CLI crawling the fixture shop (on loopback, served from
 * this process) under a pseudo-terminal made by util-linux `script`, which is on every Debian
 * machine; its raw output is read back and replayed on a TerminalScreen. Halfway through, the
 * terminal is narrowed, as a window resized by hand. The same run through pipes shows the
 * progress lines as they always were: JSON log lines, no control sequence.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { helpText } from '../../src/options/config.js';
import { startShop, type Shop, type ShopOptions } from '../../src/demo/shop.js';
import { formatProgress } from '../../src/monitor/progress.js';
import { ROOT, runCli } from '../helpers/cli.js';
import { TerminalScreen } from './terminalScreen.js';

/**
 * A run of a few seconds, for a few redraws of the line (one a second): slow pages rather than
 * busy ones, and none that needs the browser. Failures that retry keep the log going meanwhile;
 * the budget gives the line its bar.
 */
const SHOP: ShopOptions = { seed: 7, products: 200, scriptOnlyRate: 0, transientFailureRate: 0.1, latencyMs: 250 };
const RUN = ['--max-requests', '60', '--max-concurrency', '4', '--progress-interval', '1'];
const COLUMNS = { before: 100, after: 50 };
const HAS_SCRIPT = spawnSync('script', ['--version']).status === 0;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the sync markers begin with ESC (\x1b)
const SYNCHRONIZED = /\x1b\[\?2026h([\s\S]*?)\x1b\[\?2026l/g;
const ERASE_LINE_AND_UP = '\x1b[2K\x1b[1A\x1b[2K\x1b[G';

/** The environment of test/helpers/cli.ts: no option variable of the caller's or a `.env` file counts. */
function cliEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
    const childEnv: NodeJS.ProcessEnv = { ...process.env };
    for (const [, name] of helpText().matchAll(/env: ([A-Z_]+)/g)) childEnv[name as string] = '';
    return Object.assign(childEnv, env);
}

const quoted = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;

/**
 * Runs the CLI in a pseudo-terminal of COLUMNS.before columns, narrowed to COLUMNS.after once the
 * live line has been drawn (a file tells the shell when); resolves with everything it wrote. The
 * narrowing runs in the background, where a shell without job control gives stdin /dev/null, so
 * its `stty` is pointed at the terminal itself.
 */
async function runInTerminal(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
    const dir = await mkdtemp(join(tmpdir(), 'dragnet-live-'));
    const narrow = join(dir, 'narrow');
    const cli = [process.execPath, '--import', 'tsx', 'src/main.ts', ...args, '--storage-dir', join(dir, 'storage')]
        .map(quoted)
        .join(' ');
    const shell =
        `stty cols ${COLUMNS.before} rows 40; ` +
        `(i=0; while [ ! -e ${quoted(narrow)} ] && [ $i -lt 600 ]; do sleep ` +
        `0.1; i=$((i+1)); done; stty cols ${COLUMNS.after} </dev/tty) & ` +
        `exec ${cli}`;
    const childEnv = cliEnvironment(env);
    delete childEnv.FORCE_COLOR; // it would outweigh NO_COLOR
    try {
        return await new Promise((resolve, reject) => {
            const child = spawn('script', ['-qfec', shell, '/dev/null'], {
                cwd: ROOT,
                env: childEnv,
                stdio: ['ignore', 'pipe', 'inherit'],
                timeout: 120_000,
            });
            let output = '';
            let narrowed = false;
            child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
                output += chunk;
                // biome-ignore lint/suspicious/noControlCharactersInRegex: the sync marker begins with ESC (\x1b)
                if (!narrowed && /\x1b\[\?2026h[^\x1b]*pages \d+/.test(output)) {
                    narrowed = true;
                    void writeFile(narrow, '');
                }
            });
            child.on('error', reject);
            child.on('close', (code) => resolve({ code, output }));
        });
    } finally {
        await writeFile(narrow, '').catch(() => {});
        await rm(dir, { recursive: true, force: true });
    }
}

/** What a synchronized block drew, without its control sequences; '' for a block that only erased. */
function drawnBy(block: string): string {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI control sequences begin with ESC (\x1b)
    return block.replace(/\x1b\[[?\d;]*[A-Za-z]/g, '').trim();
}

describe('the progress view', { concurrency: true }, () => {
    let shop: Shop;
    before(async () => {
        shop = await startShop(SHOP);
    });
    after(() => shop.close());
    const run = () => [...RUN, '--start-url', `${shop.url}/`];

    it(`on a terminal: one line pinned below the log, redrawn \
in place, never inside a log line, gone before the summary`, {
        skip: HAS_SCRIPT ? false : 'needs `script` (util-linux)',
    }, async () => {
        // TERM says the terminal has colours, NO_COLOR says not to use them; at debug, the log is
        // busy all through the run, so lines come while the live line is up however slow the machine.
        const { code, output } = await runInTerminal(run(), {
            LOG_LEVEL: 'debug',
            TERM: 'xterm-256color',
            NO_COLOR: '1',
        });
        assert.equal(code, 0, output);
        // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colours begin with ESC (\x1b)
        assert.doesNotMatch(output, /\x1b\[[\d;]*m/, 'no colour under NO_COLOR');

        const blocks = [...output.matchAll(SYNCHRONIZED)].map((match) => match[1]!);
        const frames = blocks.map(drawnBy).filter((text) => text !== '');
        assert.ok(new Set(frames).size >= 3, `several different states drawn:\n${frames.join('\n')}`);
        for (const frame of frames) assert.match(frame, /pages \d+/);
        const pages = frames.map((frame) => Number(/pages (\d+)/.exec(frame)![1]));
        assert.deepEqual(
            pages,
            [...pages].sort((a, b) => a - b),
            'pages only go up',
        );
        // In place: the line erased and drawn again in one block, the cursor taken back up to it.
        const inPlace = blocks.filter((block) => block.startsWith(ERASE_LINE_AND_UP) && drawnBy(block) !== '');
        assert.ok(inPlace.length >= 2, `${inPlace.length} redraws in place`);
        assert.ok(
            frames.some((frame) => /^█+░* \d+% · pages \d+\/60 · /.test(frame)),
            `a bar once the 60 URLs are admitted:\n${frames.join('\n')}`,
        );

        // The width: cut to the columns less one, then to the narrowed ones after the resize, and for good.
        const widths = frames.map((frame) => [...frame].length);
        assert.ok(Math.max(...widths) <= COLUMNS.before - 1 && widths[0]! > COLUMNS.after - 1, widths.join(' '));
        const firstNarrow = widths.findIndex((width) => width <= COLUMNS.after - 1);
        assert.ok(firstNarrow > 0, `redrawn for the narrowed terminal: ${widths.join(' ')}`);
        assert.ok(
            widths.slice(firstNarrow).every((width) => width <= COLUMNS.after - 1),
            widths.join(' '),
        );

        // Replayed: after every draw the line is the last row, the cursor just below it; a log line
        // written while it is up comes between the line taken away and the line drawn again.
        const screen = new TerminalScreen();
        // biome-ignore lint/suspicious/noControlCharactersInRegex: the sync markers begin with ESC (\x1b)
        const pieces = output.split(/(\x1b\[\?2026h[\s\S]*?\x1b\[\?2026l)/).filter((piece) => piece !== '');
        const kinds = pieces.map((piece) =>
            !piece.startsWith('\x1b[?2026h') ? 'text' : drawnBy(piece) === '' ? 'clear' : 'draw',
        );
        pieces.forEach((piece, index) => {
            screen.write(piece);
            if (kinds[index] !== 'draw') return;
            assert.equal(screen.rows[screen.row - 1], drawnBy(piece));
            assert.equal(screen.column, 0);
            assert.ok(
                screen.rows.slice(screen.row).every((row) => row === ''),
                'nothing below the line',
            );
        });
        const loggedAbove = kinds.filter(
            (kind, index) => kind === 'text' && kinds[index - 1] === 'clear' && kinds[index + 1] === 'draw',
        );
        assert.ok(loggedAbove.length >= 3, `${loggedAbove.length} log writes above the line`);
        const written = output
            .replace(SYNCHRONIZED, '')
            .split('\r\n')
            .map((row) => row.trimEnd())
            .join('\n')
            .trimEnd();
        assert.equal(
            screen.text(),
            written,
            'the screen holds what the log and the summary wrote, nothing of the line',
        );
        const rows = screen.text().split('\n');
        // A log line drawn onto the live line, or the line onto a log line, would put a time or the pages mid-row.
        assert.deepEqual(
            rows.filter((row) => /.\[\d\d:\d\d:\d\d\] [A-Z]+: /.test(row) || /pages \d+(\/\d+)? · /.test(row)),
            [],
        );
        assert.ok(rows.filter((row) => /^\[\d\d:\d\d:\d\d\] (DEBUG|INFO|WARN): /.test(row)).length >= 10);
        assert.match(screen.text(), /\ndragnet: demo-shop finished in [\d.]+s[^\n]*\n {2}requests {3}60 total/);
    });

    it(`off a terminal: the progress log lines as ever, JSON with \
the numbers under \`progress\`, no control sequence`, async () => {
        const dir = await mkdtemp(join(tmpdir(), 'dragnet-plain-'));
        try {
            const { code, stderr, stdout } = await runCli([...run(), '--storage-dir', dir], { LOG_LEVEL: 'info' });
            assert.equal(code, 0, stderr);
            // biome-ignore lint/suspicious/noControlCharactersInRegex: no ESC (\x1b): no control sequence off a TTY
            assert.doesNotMatch(stderr + stdout, /\x1b/);
            const lines = stderr
                .trim()
                .split('\n')
                .map(
                    (line) =>
                        JSON.parse(line) as {
                            level: number;
                            msg: string;
                            progress?: Parameters<typeof formatProgress>[0];
                        },
                );
            const progress = lines.filter((line) => line.progress);
            assert.ok(progress.length >= 2, `${progress.length} progress lines`);
            for (const line of progress) {
                assert.equal(line.level, 30);
                assert.equal(line.msg, formatProgress(line.progress!));
            }
            assert.match(stdout, /^dragnet: demo-shop finished/);
        } finally {
            await rm(dir, { recursive: true, force: true });
        }
    });
});
