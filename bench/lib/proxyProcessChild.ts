/**
 * The child side of proxyProcess.ts: `count` proxy-chain servers (Crawlee's own proxy library, as
 * a stand-in for a paid proxy) on 127.0.0.1, each asking for `user:pass` (407 otherwise) and
 * connecting straight to the target, in a process of its own so their CPU is not the crawler's.
 * Started with `{ count, username, password }` as JSON in argv[2]; sends `{ type: 'ready', ports }`,
 * answers `report` with what the servers saw, exits on `close`.
 */
import { Server } from 'proxy-chain';
import type { ProxyChildMessage, ProxyReport } from './proxyProcess.js';

const { count, username, password } = JSON.parse(process.argv[2] ?? '{}') as {
    count: number;
    username: string;
    password: string;
};
const seen = { forwarded: 0, tunnels: 0, refusedAuth: 0, failed: 0 };

const servers = Array.from({ length: count }, () => {
    const server = new Server({
        host: '127.0.0.1',
        port: 0,
        verbose: false,
        prepareRequestFunction: ({ username: user, password: pass, isHttp }) => {
            if (user !== username || pass !== password) {
                seen.refusedAuth += 1;
                return { requestAuthentication: true };
            }
            if (isHttp) seen.forwarded += 1;
            else seen.tunnels += 1;
            return {};
        },
    });
    server.on('requestFailed', () => (seen.failed += 1));
    return server;
});
await Promise.all(servers.map((server) => server.listen()));
const cpuAtReady = process.cpuUsage();
const send = (message: ProxyChildMessage) => process.send!(message);
send({ type: 'ready', ports: servers.map((server) => server.port) });

process.on('message', (message: { type: 'report' | 'close' }) => {
    if (message.type === 'report') {
        const cpu = process.cpuUsage(cpuAtReady);
        const report: ProxyReport = {
            ...seen,
            cpuSec: (cpu.user + cpu.system) / 1e6,
            peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
        };
        send({ type: 'report', report });
    } else if (message.type === 'close') {
        void Promise.all(servers.map((server) => server.close(true))).finally(() => process.exit(0));
    }
});
// The parent went away without saying so: do not outlive it.
process.on('disconnect', () => process.exit(0));
