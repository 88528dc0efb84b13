/**
 * Local HTTP proxies in a child process of their own (proxyProcessChild.ts), for the proxies
 * suite: the crawler's requests go through them, and their CPU is their own figure, neither the
 * crawler's nor the bench parent's (where the shop runs). Each asks for the same credentials, as
 * a paid proxy would, so the crawler's proxy authentication is part of what is measured.
 */
import { fileURLToPath } from 'node:url';
import { startReportingChild } from './shopProcess.js';

const childScript = fileURLToPath(new URL('./proxyProcessChild.ts', import.meta.url));
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
    const { ready, report, close } = await startReportingChild<ProxyChildMessage>(
        childScript,
        { count, ...CREDENTIALS },
        'proxy',
    );
    return {
        urls: ready.ports.map((port) => `http://${CREDENTIALS.username}:${CREDENTIALS.password}@127.0.0.1:${port}`),
        report,
        close,
    };
}
