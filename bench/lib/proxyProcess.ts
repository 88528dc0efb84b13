/**
 * Local HTTP proxies in a child process of their own (proxyProcessChild.ts), for the proxies
 * suite: the crawler's requests go through them, and their CPU is their own figure, neither the
 * crawler's nor the bench parent's (where the shop runs). Each asks for the same credentials, as
 * a paid proxy would, so the crawler's proxy authentication is part of what is measured.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { nextMessage } from './shopProcess.js';

const childScript = fileURLToPath(new URL('./proxyProcessChild.ts', import.meta.url));
const projectRoot = fileURLToPath(new URL('../../', import.meta.url));
/** Loading tsx and proxy-chain takes a second or so; this is a hang. */
const READY_TIMEOUT_MS = 30_000;
const CREDENTIALS = { username: 'user', password: 'pass' };

/** What the proxies saw since they started, all of them together. */
export type ProxyReport = {
    /** Plain-HTTP requests forwarded (what an http:// target gets). */
    forwarded: number;
    /** CONNECT tunnels opened (what an https:// target gets). */
    tunnels: number;
    /** Requests answered 407: wrong or missing credentials. */
    refusedAuth: number;
    /** proxy-chain's `requestFailed` events: the proxy's own errors, not the target's statuses. */
    failed: number;
    /** CPU seconds of the proxy process since it was ready. */
    cpuSec: number;
    /** Its peak RSS (`process.resourceUsage().maxRSS`), in MB. */
    peakRssMb: number;
};

export type ProxyChildMessage = { type: 'ready'; ports: number[] } | { type: 'report'; report: ProxyReport };

export interface ProxyProcess {
    /** `http://user:pass@127.0.0.1:PORT`, one per proxy. */
    urls: string[];
    report(): Promise<ProxyReport>;
    close(): Promise<void>;
}

export async function startProxyProcess(count: number): Promise<ProxyProcess> {
    const child = spawn(process.execPath, ['--import', 'tsx', childScript, JSON.stringify({ count, ...CREDENTIALS })], {
        cwd: projectRoot,
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-2000)));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const ready = await nextMessage<ProxyChildMessage>(child, 'ready', READY_TIMEOUT_MS).catch((error: Error) => {
        child.kill('SIGKILL');
        throw new Error(`the proxy process did not start: ${error.message} ${stderr.trim()}`);
    });
    if (ready.type !== 'ready') throw new Error('unreachable');
    return {
        urls: ready.ports.map((port) => `http://${CREDENTIALS.username}:${CREDENTIALS.password}@127.0.0.1:${port}`),
        async report() {
            const answer = nextMessage<ProxyChildMessage>(child, 'report', 10_000);
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
