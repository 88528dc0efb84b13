/**
 * A render crawler in a child process (`node --import tsx <script> '<case as JSON>'`), its tree
 * sampled from /proc while it runs: Node, tsx's esbuild service and Chromium apart. Both sides of
 * the render suite run this way (crawlers/dragnetRender.ts, crawlers/plainPlaywright.ts), so both
 * are measured alike. The child prints its result as its last stdout line.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sampleTree, type TreeSample } from './processTree.js';

const projectRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface RenderChildOptions {
    /** The crawler script, absolute. */
    script: string;
    /** Node flags before the script's (plain Crawlee's AS_PUBLISHED). */
    nodeFlags?: string[];
    /** What the script reads as its case (`process.argv[2]`, as JSON). */
    renderCase: unknown;
    /** Crawlee's storage dir for the child. */
    storageDir: string;
    /** The child is killed after this long. */
    limitSec: number;
    sampleIntervalMs: number;
}

export type RenderChildOutcome<T> = { result: T; samples: TreeSample[] } | { error: string };

export async function runRenderChild<T>(options: RenderChildOptions): Promise<RenderChildOutcome<T>> {
    // The machine's own Crawlee and dragnet settings stay out of the bench.
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('CRAWLEE_') && !name.startsWith('DRAGNET_')));
    const child = spawn(process.execPath, [...(options.nodeFlags ?? []), '--import', 'tsx', options.script, JSON.stringify(options.renderCase)], {
        cwd: projectRoot,
        env: { ...env, CRAWLEE_STORAGE_DIR: options.storageDir },
        stdio: ['ignore', 'pipe', 'pipe'],
    });
    const sampler = sampleTree({ pid: child.pid!, intervalMs: options.sampleIntervalMs, pss: true, group: treeGroup });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
    const killTimer = setTimeout(() => child.kill('SIGKILL'), options.limitSec * 1000);
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    clearTimeout(killTimer);
    const samples = await sampler.stop();
    const line = stdout.trim().split('\n').at(-1) ?? '';
    if (code !== 0 || !line.startsWith('{')) return { error: `exit code ${code}: ${stderr.trim().split('\n').slice(-5).join(' | ')}` };
    return { result: JSON.parse(line) as T, samples };
}

/** The crawler's Node process, tsx's esbuild service (left out of the figures), and the rest: Chromium. */
function treeGroup(process: { pid: number; comm: string }, root: number): string {
    return process.pid === root ? 'node' : process.comm === 'esbuild' ? 'esbuild' : 'browser';
}
