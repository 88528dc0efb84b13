/**
 * Bytes the servers of this process sent, status lines, headers and bodies as they went on the wire:
 * the sum of `bytesWritten` over every socket a server accepted (Node's `net.server.socket`
 * diagnostics channel), those closed and those still open. The bench parent runs only the shop's
 * server, so this is what the crawler received from the shop, counted without looking inside either.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';

export interface WireBytes {
    /** Bytes sent since `countWireBytes`. */
    sent(): number;
    stop(): void;
}

const SERVER_SOCKET = 'net.server.socket';

export function countWireBytes(): WireBytes {
    const open = new Set<Socket>();
    let closedBytes = 0;
    const onSocket = (message: unknown) => {
        const { socket } = message as { socket: Socket };
        open.add(socket);
        socket.once('close', () => {
            open.delete(socket);
            closedBytes += socket.bytesWritten;
        });
    };
    subscribe(SERVER_SOCKET, onSocket);
    return {
        sent: () => closedBytes + [...open].reduce((sum, socket) => sum + socket.bytesWritten, 0),
        stop: () => unsubscribe(SERVER_SOCKET, onSocket),
    };
}
