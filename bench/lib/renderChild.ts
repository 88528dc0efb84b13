/**
 * A render crawler in a child process (benchChild.ts), its tree sampled from /proc while it runs:
 * Node, tsx's esbuild service and Chromium apart. Both sides of the render suite run this way
 * (crawlers/dragnetRender.ts, crawlers/plainPlaywright.ts), so both are measured alike.
 */
import { startBenchChild, tsxCommand } from './benchChild.js';
import { sampleTree, type TreeSample } from './processTree.js';

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
    const { child, exit } = startBenchChild({
        command: tsxCommand(options.script, options.nodeFlags),
        childCase: options.renderCase,
        storageDir: options.storageDir,
        killAfterSec: options.limitSec,
    });
    const sampler = sampleTree({ pid: child.pid!, intervalMs: options.sampleIntervalMs, pss: true, group: treeGroup });
    const { code, resultLine, stderrTail } = await exit;
    const samples = await sampler.stop();
    if (code !== 0 || !resultLine) return { error: `exit code ${code}: ${stderrTail}` };
    return { result: JSON.parse(resultLine) as T, samples };
}

/** The crawler's Node process, tsx's esbuild service (left out of the figures), and the rest: Chromium. */
function treeGroup(process: { pid: number; comm: string }, root: number): string {
    return process.pid === root ? 'node' : process.comm === 'esbuild' ? 'esbuild' : 'browser';
}
