/**
 * How the bench starts a crawler in a child process: from the project's root, given its case as
 * JSON as its last argument, with Crawlee's storage in the case's dir and without the machine's own
 * Crawlee and dragnet settings (`CRAWLEE_*`, `DRAGNET_*`), killed when it runs past its time. The
 * child prints its result as the last line of its stdout.
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

const projectRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface BenchChildOptions {
    /** The command and its arguments, before the case (see `tsxCommand`). */
    command: string[];
    /** What the child reads as its case, as JSON. */
    childCase: unknown;
    /** Crawlee's storage dir for the child (CRAWLEE_STORAGE_DIR: Crawlee's global configuration writes there). */
    storageDir: string;
    /** The child is killed (SIGKILL) after this many seconds. */
    killAfterSec: number;
    /** Variables for the child, over this process's own (`CRAWLEE_*` and `DRAGNET_*` are dropped from both). */
    env?: NodeJS.ProcessEnv;
}

export interface BenchChildExit {
    code: number | null;
    signal: NodeJS.Signals | null;
    /** The child's result line: its last stdout line, when that is a JSON object. */
    resultLine?: string;
    /** The last lines of its stderr, joined by ` | `, for a message. */
    stderrTail: string;
}

export interface BenchChild {
    child: ChildProcessByStdio<null, Readable, Readable>;
    exit: Promise<BenchChildExit>;
}

/** `node [nodeFlags] --import tsx <script>`: a TypeScript crawler of the bench, by default under this Node. */
export function tsxCommand(script: string, nodeFlags: string[] = [], node = process.execPath): string[] {
    return [node, ...nodeFlags, '--import', 'tsx', script];
}

export function startBenchChild(options: BenchChildOptions): BenchChild {
    const env = Object.fromEntries(
        Object.entries({ ...process.env, ...options.env }).filter(
            ([name]) => !name.startsWith('CRAWLEE_') && !name.startsWith('DRAGNET_'),
        ),
    );
    const [command, ...args] = options.command;
    const child = spawn(command!, [...args, JSON.stringify(options.childCase)], {
        cwd: projectRoot,
        env: { ...env, CRAWLEE_STORAGE_DIR: options.storageDir },
        stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
    const killTimer = setTimeout(() => child.kill('SIGKILL'), options.killAfterSec * 1000);
    const exit = new Promise<BenchChildExit>((resolve) => {
        child.once('close', (code, signal) => {
            clearTimeout(killTimer);
            const lastLine = stdout.trim().split('\n').at(-1) ?? '';
            resolve({
                code,
                signal,
                resultLine: lastLine.startsWith('{') ? lastLine : undefined,
                stderrTail: stderr.trim().split('\n').slice(-5).join(' | '),
            });
        });
    });
    return { child, exit };
}
