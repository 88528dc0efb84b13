/**
 * The command line as a user runs it: `node --import tsx src/main.ts ...` in a child process.
 * Every option's variable (as `--help` names them) is set empty: dotenv never overrides a variable
 * that is set and the CLI reads empty as unset, so neither the caller's environment nor a
 * developer's `.env` can change the outcome.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { helpText } from '../../src/options/config.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/**
 * The type checker `npm run typecheck` runs: TypeScript's native
 * compiler (the package `typescript` is the one TypeDoc needs).
 */
export const TSC = join(ROOT, 'node_modules/typescript-native/bin/tsc');
/** A hang fails the test instead of blocking the suite. */
const CHILD_TIMEOUT_MS = 120_000;

export interface CliResult {
    code: number | null;
    signal: NodeJS.Signals | null;
    stdout: string;
    stderr: string;
}

export interface RunningCli {
    child: ChildProcess;
    /** Resolves when the process has exited. */
    result: Promise<CliResult>;
}

/** Starts the CLI with `args`; `env` adds to the cleaned environment. */
export function startCli(args: string[], env: NodeJS.ProcessEnv = {}): RunningCli {
    return startScript('src/main.ts', args, env);
}

/**
 * Starts a script of the CLI (`src/commands/export.ts`, as `npm run export` does) with `args`; `env`
 * adds to the cleaned environment. `cwd` is where it runs (relative paths, `./storage`): this project
 * by default. `netns`: the network namespace it runs in (`ip netns exec`), for a host of a network
 * world (netWorld.ts); default: this one. `timeoutMs`: how long it may run before it is killed with
 * SIGTERM, as a hang; default: 120 s.
 */
export function startScript(
    script: string,
    args: string[],
    env: NodeJS.ProcessEnv = {},
    cwd = ROOT,
    netns?: string,
    timeoutMs = CHILD_TIMEOUT_MS,
): RunningCli {
    const childEnv: NodeJS.ProcessEnv = { ...process.env };
    for (const [, name] of helpText().matchAll(/env: ([A-Z_]+)/g)) childEnv[name as string] = '';
    // A developer's shell on a runner (or playing one) must not turn every CLI test into an actor run.
    for (const name of ['DRAGNET_ACTOR', 'APIFY_IS_AT_HOME', 'ACTOR_MEMORY_MBYTES']) delete childEnv[name];
    childEnv.LOG_LEVEL = 'warn';
    Object.assign(childEnv, env);
    // Elsewhere than here, `tsx` and the script are found by their paths in this project.
    const loader = cwd === ROOT ? 'tsx' : pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
    const command = [process.execPath, '--import', loader, resolve(ROOT, script), ...args];
    // `ip netns exec` execs the command: the child is the script's process itself, for signals.
    const [file, ...rest] = netns ? ['ip', 'netns', 'exec', netns, ...command] : command;
    const child = spawn(file!, rest, { cwd, env: childEnv, timeout: timeoutMs });
    const result = new Promise<CliResult>((resolve, reject) => {
        let stdout = '';
        let stderr = '';
        child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
        child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
        child.on('error', reject);
        child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    });
    return { child, result };
}

/** Runs the CLI to its end. */
export function runCli(args: string[], env?: NodeJS.ProcessEnv): Promise<CliResult> {
    return startCli(args, env).result;
}

/** Runs a script of the CLI to its end. */
export function runScript(script: string, args: string[], env?: NodeJS.ProcessEnv, cwd?: string): Promise<CliResult> {
    return startScript(script, args, env, cwd).result;
}

/**
 * A command that ended with `code` and said why in one line on
 * stderr, `dragnet: ...`, matching `message`, and nothing on stdout.
 */
export function assertOneLineError(
    run: Pick<CliResult, 'code' | 'stdout' | 'stderr'>,
    code: number,
    message: RegExp,
): void {
    assert.equal(run.code, code, `exit code; stderr: ${run.stderr}`);
    const lines = run.stderr.split('\n').filter(Boolean);
    assert.equal(lines.length, 1, `one line on stderr: ${run.stderr}`);
    assert.match(lines[0]!, /^dragnet: /);
    assert.match(lines[0]!, message);
    assert.equal(run.stdout, '');
}
