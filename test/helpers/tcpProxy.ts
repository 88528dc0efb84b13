/**
 * A TCP proxy on loopback in front of a real server (PostgreSQL in the tests), that can cut every
 * connection and refuse new ones for a while: what a database restart or failover does to its
 * clients.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpProxy {
    port: number;
    /** Resets every open connection and resets new ones until `millis` have passed. */
    refuseFor(millis: number): void;
    close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
    const sockets = new Set<Socket>();
    let refusingUntil = 0;
    const server: Server = createServer((client) => {
        if (Date.now() < refusingUntil) return void client.resetAndDestroy();
        const upstream = createConnection(target);
        for (const socket of [client, upstream]) {
            sockets.add(socket);
            socket.on('close', () => sockets.delete(socket));
            socket.on('error', () => {});
        }
        client.pipe(upstream).pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
        port: (server.address() as AddressInfo).port,
        refuseFor(millis) {
            refusingUntil = Date.now() + millis;
            for (const socket of sockets) socket.resetAndDestroy();
        },
        close: () =>
            new Promise((resolve) => {
                for (const socket of sockets) socket.destroy();
                server.close(() => resolve());
            }),
    };
}
