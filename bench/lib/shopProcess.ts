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
/** Loading tsx and building a 10,000-product catalog takes a second or two; this is a hang. */
const READY_TIMEOUT_MS = 30_000;

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
}

export type ShopChildMessage = { type: 'ready'; url: string; products: number } | { type: 'report'; report: ShopReport };

export interface ShopProcess {
    /** `http://127.0.0.1:PORT`, no trailing slash. */
    url: string;
    pid: number;
    report(): Promise<ShopReport>;
    close(): Promise<void>;
}

export async function startShopProcess(options: ShopOptions): Promise<ShopProcess> {
    const child = spawn(process.execPath, ['--import', 'tsx', childScript, JSON.stringify(options)], {
        cwd: projectRoot,
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-2000)));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const ready = await nextMessage<ShopChildMessage>(child, 'ready', READY_TIMEOUT_MS).catch((error: Error) => {
        child.kill('SIGKILL');
        throw new Error(`the shop process did not start: ${error.message} ${stderr.trim()}`);
    });
    if (ready.type !== 'ready') throw new Error('unreachable');
    return {
        url: ready.url,
        pid: child.pid!,
        async report() {
            const answer = nextMessage<ShopChildMessage>(child, 'report', 10_000);
            child.send({ type: 'report' });
            const message = await answer;
            if (message.type !== 'report') throw new Error('unreachable');
            return message.report;
        },
        async close() {
            if (child.exitCode === null && child.signalCode === null) child.send({ type: 'close' });
            const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
            await exited;
            clearTimeout(timer);
        },
    };
}

/** The child's next IPC message of `type`; rejects when it exits first or sends none in time. Also proxyProcess.ts's. */
export function nextMessage<M extends { type: string }>(child: ChildProcess, type: M['type'], timeoutMs: number): Promise<M> {
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
