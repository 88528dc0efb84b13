/**
 * A memory budget for the whole run — what a container or a runner gives it (`--memory-mb`, else
 * the runner's `ACTOR_MEMORY_MBYTES`) — so that a 1 GB container scales down instead of dying of OOM:
 *
 * - the V8 heap limit: half the budget (at least 128 MB). The rest is for what is not heap: the
 *   pages' buffers, SQLite, parse workers and, above all, Chromium, whose processes are counted in
 *   the budget too. V8 takes its limit only at start (`--max-old-space-size`; setting the flag later
 *   changes nothing), so a process without it starts itself again with it (`runWithHeapLimit`);
 * - the autoscaled pools' memory ceiling: Crawlee's `memoryMbytes`, against which it measures the
 *   process tree's memory (Chromium included) and stops adding requests past 90% of it.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { getHeapStatistics } from 'node:v8';

/** The share of the budget the V8 heap may take. */
export const HEAP_SHARE = 0.5;
export const MIN_HEAP_MB = 128;

/** Set in the process started with the budget's heap limit, so that it does not start itself again. */
const STARTED_WITH_LIMIT = 'DRAGNET_HEAP_LIMIT_MB';

/**
 * The run's budget in MB: `--memory-mb`, else a runner's `ACTOR_MEMORY_MBYTES`,
 * else none (Crawlee's default: a quarter of the machine's memory).
 */
export function memoryBudgetMb(memoryMb: number | undefined, env: NodeJS.ProcessEnv = process.env): number | undefined {
    if (memoryMb !== undefined) return memoryMb;
    const fromRunner = Number(env.ACTOR_MEMORY_MBYTES);
    return Number.isFinite(fromRunner) && fromRunner > 0 ? fromRunner : undefined;
}

export function heapLimitMbFor(budgetMb: number): number {
    return Math.max(MIN_HEAP_MB, Math.floor(budgetMb * HEAP_SHARE));
}

/** The heap limit this process runs with, in MB (what V8 says, young generation included). */
export function currentHeapLimitMb(): number {
    return Math.round(getHeapStatistics().heap_size_limit / 2 ** 20);
}

/**
 * Runs this command again, the same way, with the heap limit for `budgetMb`, and resolves with its
 * exit code; resolves undefined in the process that already has it (or with no budget), which then
 * does the work. SIGINT and SIGTERM are passed on, so the graceful stop is the child's.
 */
export async function runWithHeapLimit(
    budgetMb: number | undefined,
    env: NodeJS.ProcessEnv = process.env,
): Promise<number | undefined> {
    if (budgetMb === undefined) return undefined;
    const heapMb = heapLimitMbFor(budgetMb);
    if (env[STARTED_WITH_LIMIT] === String(heapMb)) return undefined;
    const child = spawn(
        process.execPath,
        [...process.execArgv, `--max-old-space-size=${heapMb}`, ...process.argv.slice(1)],
        {
            stdio: 'inherit',
            env: { ...env, [STARTED_WITH_LIMIT]: String(heapMb) },
        },
    );
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    return new Promise((resolve, reject) => {
        child.on('error', reject);
        child.on('exit', (code, signal) => {
            process.off('SIGINT', forward);
            process.off('SIGTERM', forward);
            resolve(code ?? 128 + (signal ? constants.signals[signal] : 0));
        });
    });
}
