/**
 * The fixture shop in a child process of its own (shopProcessChild.ts), for a bench whose crawlers
 * are several processes: the bench parent is then free to wait on them, and the shop's CPU is its
 * own figure, not mixed into the parent's. Same shop, same options, as `startShop` in-process.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ShopOptions } from '../../src/demo/shop.js';

const childScript = fileURLToPath(new URL('./shopProcessChild.ts', import.meta.url));
const projectRoot = fileURLToPath(new URL('../../', import.meta.url));
/**
 * Loading tsx and building a 10,000-product catalog takes a second or two, the seed suite's
 * 400,000 real-weight products ~5 s (~450 MB); this is a hang.
 */
const READY_TIMEOUT_MS = 60_000;
/** A report of a long run (the seed's 16,000 in-flight samples) is a moment's work; this is a hang. */
const REPORT_TIMEOUT_MS = 60_000;

/** What the shop saw since it started. Times are `Date.now()` in the child (one machine, one clock). */
export interface ShopReport {
    /** Requests answered or dropped, every path but `/__stats` (the shop's own count). */
    requests: number;
    firstRequestAtMs: number | null;
    /** When the last response was sent (or its connection dropped). */
    lastAnswerAtMs: number | null;
    /** Requests in flight at the shop, every 250 ms from the first request to the last answer. */
    inflightSamples: number[];
    /** CPU seconds of the shop's process since it was ready. */
    cpuSec: number;
    /**
     * The highest share of one core the shop's process used in any 5 s between the first request
     * and the last answer: near 1, the shop (single-threaded) was the bottleneck.
     */
    peakCoreShare: number;
}

export type ShopChildMessage =
    | { type: 'ready'; url: string; products: number; listingPaths: string[] }
    | { type: 'report'; report: ShopReport };

export interface ShopProcess {
    /** `http://127.0.0.1:PORT`, no trailing slash. */
    url: string;
    pid: number;
    /** Products the shop sells. */
    products: number;
    /**
     * Every listing page, `/category/<slug>` then `?page=N` (`Shop.listingPaths`): what a user's
     * crawl is given up front when it knows the site's page-number pattern (the seed suite).
     */
    listingPaths: string[];
    report(): Promise<ShopReport>;
    close(): Promise<void>;
}

export async function startShopProcess(options: ShopOptions): Promise<ShopProcess> {
    const { ready, pid, report, close } = await startReportingChild<ShopChildMessage>(childScript, options, 'shop');
    return { url: ready.url, pid, products: ready.products, listingPaths: ready.listingPaths, report, close };
}

type ReadyOf<M> = M extends { type: 'ready' } ? M : never;
type ReportOf<M> = M extends { type: 'report'; report: infer R } ? R : never;

/**
 * A bench's helper process (the shop's, proxyProcess.ts's): started with `arg` as JSON, ready
 * when it sends its `ready` message, asked for its `report` over IPC, and closed with `close`
 * (killed if it does not exit within 10 s).
 */
export async function startReportingChild<M extends { type: 'ready' } | { type: 'report'; report: unknown }>(
    script: string,
    arg: unknown,
    what: string,
): Promise<{ ready: ReadyOf<M>; pid: number; report(): Promise<ReportOf<M>>; close(): Promise<void> }> {
    const child = spawn(process.execPath, ['--import', 'tsx', script, JSON.stringify(arg)], {
        cwd: projectRoot,
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-2000)));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const ready = await nextMessage<M>(child, 'ready', READY_TIMEOUT_MS).catch((error: Error) => {
        child.kill('SIGKILL');
        throw new Error(`the ${what} process did not start: ${error.message} ${stderr.trim()}`);
    });
    return {
        ready: ready as ReadyOf<M>,
        pid: child.pid!,
        async report() {
            const answer = nextMessage<M>(child, 'report', REPORT_TIMEOUT_MS);
            child.send({ type: 'report' });
            return ((await answer) as { report: ReportOf<M> }).report;
        },
        async close() {
            if (child.exitCode === null && child.signalCode === null) child.send({ type: 'close' });
            const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
            await exited;
            clearTimeout(timer);
        },
    };
}

/** The child's next IPC message of `type`; rejects when it exits first or sends none in time. */
export function nextMessage<M extends { type: string }>(
    child: ChildProcess,
    type: M['type'],
    timeoutMs: number,
): Promise<M> {
    return new Promise((resolve, reject) => {
        const timer = setTimeout(() => done(new Error(`no ${type} message in ${timeoutMs} ms`)), timeoutMs);
        const onMessage = (message: M) => message.type === type && done(undefined, message);
        const onExit = (code: number | null) => done(new Error(`exited with code ${code}`));
        function done(error?: Error, message?: M) {
            clearTimeout(timer);
            child.off('message', onMessage);
            child.off('exit', onExit);
            if (error) reject(error);
            else resolve(message!);
        }
        child.on('message', onMessage);
        child.once('exit', onExit);
    });
}
