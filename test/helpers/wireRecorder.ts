/**
 * A test world that records what an HTTPS client sends on the wire: an HTTPS server on 127.0.0.1
 * (self-signed certificate, ALPN `h2` and `http/1.1`) that answers every request and keeps, per
 * TCP connection, the TLS ClientHello (JA3, JA4, extension order, GREASE, ALPN, SNI) and, on
 * HTTP/2, the client's first frames (SETTINGS, WINDOW_UPDATE, PRIORITY); and, per request, the
 * pseudo-header and header order as received.
 *
 * How: a plain TCP server reads the ClientHello off each socket with read-tls-client-hello (which
 * puts the bytes back), then terminates TLS itself. HTTP/1.1 connections go to an `http.Server`;
 * HTTP/2 ones to `http2.performServerHandshake` through a Duplex that sees the decrypted bytes:
 * http2 reads a TLSSocket natively, out of JavaScript's sight, but a plain Duplex through JS.
 *
 * Clients reaching it by IP send no SNI (JA4 `t13i…`); to fingerprint them as a site sees them,
 * give them a name that leads here (undici: `connect.servername`; Chromium: `--host-resolver-rules`).
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { constants, performServerHandshake, type ServerHttp2Stream } from 'node:http2';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { createSecureContext, TLSSocket } from 'node:tls';
import {
    calculateJa3,
    calculateJa4,
    getExtensionData,
    isGREASE,
    readTlsClientHello,
    type TlsClientHelloMessage,
} from 'read-tls-client-hello';
import { selfSignedCert } from './selfSignedCert.js';

export type WireProtocol = 'h2' | 'http/1.1';

/** An HTTP/2 stream priority: from a PRIORITY frame, or a HEADERS frame with the PRIORITY flag. */
export interface H2Priority {
    streamId: number;
    exclusive: boolean;
    dependsOn: number;
    /** 1 to 256, as the frame's byte plus one. */
    weight: number;
}

export interface RecordedConnection {
    ja4: string;
    ja3: string;
    /** Extension ids in the order sent, GREASE included. */
    extensions: number[];
    /** Whether a GREASE value was among the cipher suites, extensions, groups, signature algorithms. */
    grease: { ciphers: boolean; extensions: boolean; groups: boolean; signatureAlgorithms: boolean };
    alpn: string[];
    serverName: string | undefined;
    /** The protocol TLS settled on; undefined until the handshake is done (or when it failed). */
    protocol: WireProtocol | undefined;
    /** HTTP/2: the client's first SETTINGS, `[id, value]` in the order sent. */
    settings: Array<[number, number]>;
    /** HTTP/2: the increment of the client's first WINDOW_UPDATE on the connection (stream 0). */
    windowUpdate: number | undefined;
    /** HTTP/2: PRIORITY frames, in the order sent. */
    priorityFrames: H2Priority[];
}

export interface RecordedRequest {
    /** Index into `connections`. */
    connection: number;
    protocol: WireProtocol;
    method: string;
    /** The path, query included. */
    url: string;
    /** HTTP/2 pseudo-headers in received order, e.g. `[':method', ':authority', ':scheme', ':path']`; empty on HTTP/1.1. */
    pseudoHeaderOrder: string[];
    /** Regular header names in received order, as received (HTTP/1.1 keeps their case). */
    headerOrder: string[];
    /** Lower-case names; repeated headers joined with `, ` (`cookie` with `; `). */
    headers: Record<string, string>;
    /** HTTP/2: the priority its HEADERS frame carried, if it did. */
    priority?: H2Priority;
}

export interface WireReply {
    /** Default: 200. */
    status?: number;
    /** Lower-case names (a list for a repeated one, e.g. `set-cookie`); `content-type` defaults to `text/html; charset=utf-8`. */
    headers?: Record<string, string | string[]>;
    body?: string | Buffer;
}

export interface WireRecorderOptions {
    /**
     * Answers every request, at once or later (a front forwarding to an upstream); a handler that
     * throws or rejects gets its request's connection (HTTP/1.1) or stream (HTTP/2) reset.
     * Default: 200 with a small HTML page.
     */
    handler?: (request: RecordedRequest) => WireReply | Promise<WireReply>;
}

export interface WireRecorder {
    /** `https://127.0.0.1:PORT` */
    origin: string;
    port: number;
    connections: RecordedConnection[];
    requests: RecordedRequest[];
    /** Closes the server and every open connection. */
    close(): Promise<void>;
}

const PAGE = '<html><head><title>wire</title></head><body>ok</body></html>';
const defaultHandler = (): WireReply => ({ body: PAGE });

export async function startWireRecorder(options: WireRecorderOptions = {}): Promise<WireRecorder> {
    const handler = options.handler ?? defaultHandler;
    const secureContext = createSecureContext(selfSignedCert('127.0.0.1'));
    const connections: RecordedConnection[] = [];
    const requests: RecordedRequest[] = [];
    const sockets = new Set<Socket>();
    const http1Connections = new WeakMap<Socket, number>();

    /** Records the request (in arrival order, before the handler runs) and asks the handler. */
    const reply = async (request: RecordedRequest): Promise<Required<WireReply>> => {
        requests.push(request);
        const { status = 200, headers = {}, body = '' } = await handler(request);
        return { status, headers: { 'content-type': 'text/html; charset=utf-8', ...headers }, body };
    };

    const http1 = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
        const { headerOrder, headers: received } = headerFields(req.rawHeaders);
        reply({
            connection: http1Connections.get(req.socket)!,
            protocol: 'http/1.1',
            method: req.method ?? '',
            url: req.url ?? '',
            pseudoHeaderOrder: [],
            headerOrder,
            headers: received,
        }).then(
            ({ status, headers, body }) => {
                if (!res.destroyed) res.writeHead(status, headers).end(body);
            },
            () => res.destroy(),
        );
    });

    const serveH2 = (socket: TLSSocket, index: number, connection: RecordedConnection): void => {
        const headerPriorities = new Map<number, H2Priority>();
        const session = performServerHandshake(tap(socket, frameReader(connection, headerPriorities)));
        session.on('error', () => {});
        // The raw headers, in received order, come 4th: @types/node leaves them out.
        session.on('stream', (stream: ServerHttp2Stream, _headers: unknown, _flags: unknown, rawHeaders: string[]) => {
            stream.on('error', () => {});
            const fields = headerFields(rawHeaders);
            const priority = headerPriorities.get(stream.id!);
            reply({
                connection: index,
                protocol: 'h2',
                method: fields.pseudo[':method'] ?? '',
                url: fields.pseudo[':path'] ?? '',
                pseudoHeaderOrder: fields.pseudoHeaderOrder,
                headerOrder: fields.headerOrder,
                headers: fields.headers,
                ...(priority && { priority }),
            }).then(
                ({ status, headers, body }) => {
                    // The client may have cancelled the stream while the handler worked.
                    if (stream.destroyed) return;
                    stream.respond({ ':status': status, ...headers });
                    stream.end(body);
                },
                () => stream.close(constants.NGHTTP2_INTERNAL_ERROR),
            );
        });
    };

    const server = createServer(async (raw) => {
        sockets.add(raw);
        raw.on('close', () => sockets.delete(raw));
        raw.on('error', () => {});
        let hello: TlsClientHelloMessage;
        try {
            hello = await readTlsClientHello(raw);
        } catch {
            return void raw.destroy();
        }
        const connection = describeHello(hello);
        const index = connections.push(connection) - 1;
        const socket = new TLSSocket(raw, { isServer: true, secureContext, ALPNProtocols: ['h2', 'http/1.1'] });
        socket.on('error', () => socket.destroy());
        // A server-side TLSSocket announces its finished handshake as 'secure' (what tls.Server listens for).
        socket.once('secure', () => {
            connection.protocol = socket.alpnProtocol === 'h2' ? 'h2' : 'http/1.1';
            if (connection.protocol === 'h2') return serveH2(socket, index, connection);
            http1Connections.set(socket, index);
            http1.emit('connection', socket);
        });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;

    return {
        origin: `https://127.0.0.1:${port}`,
        port,
        connections,
        requests,
        close: () =>
            new Promise((resolve) => {
                for (const socket of sockets) socket.destroy();
                server.close(() => resolve());
            }),
    };
}

/** The Akamai HTTP/2 fingerprint: `SETTINGS|WINDOW_UPDATE|PRIORITY|PSEUDO_HEADER_ORDER`. */
export function akamaiFingerprint(connection: RecordedConnection, request: RecordedRequest): string {
    const settings = connection.settings.map(([id, value]) => `${id}:${value}`).join(';');
    const priorities = connection.priorityFrames
        .map((p) => `${p.streamId}:${Number(p.exclusive)}:${p.dependsOn}:${p.weight}`)
        .join(',');
    const pseudo = request.pseudoHeaderOrder.map((name) => name[1]).join(',');
    return [settings, connection.windowUpdate ?? 0, priorities || 0, pseudo].join('|');
}

function describeHello(hello: TlsClientHelloMessage): RecordedConnection {
    const extensions = hello.extensions.map((extension) => extension.id);
    return {
        ja4: calculateJa4(hello),
        ja3: calculateJa3(hello),
        extensions,
        grease: {
            ciphers: hello.cipherSuites.some(isGREASE),
            extensions: extensions.some(isGREASE),
            groups: (getExtensionData(hello, 0x000a)?.groups ?? []).some(isGREASE),
            signatureAlgorithms: (getExtensionData(hello, 0x000d)?.algorithms ?? []).some(isGREASE),
        },
        alpn: getExtensionData(hello, 0x0010)?.protocols ?? [],
        serverName: getExtensionData(hello, 0x0000)?.serverName,
        protocol: undefined,
        settings: [],
        windowUpdate: undefined,
        priorityFrames: [],
    };
}

/** Splits a raw header list (`[name, value, name, value, …]`) into pseudo-headers and regular ones, in order. */
function headerFields(rawHeaders: string[]) {
    const pseudo: Record<string, string> = {};
    const pseudoHeaderOrder: string[] = [];
    const headerOrder: string[] = [];
    const headers: Record<string, string> = {};
    for (let i = 0; i < rawHeaders.length; i += 2) {
        const [name, value] = [rawHeaders[i]!, rawHeaders[i + 1]!];
        if (name.startsWith(':')) {
            pseudoHeaderOrder.push(name);
            pseudo[name] = value;
            continue;
        }
        headerOrder.push(name);
        const key = name.toLowerCase();
        // HTTP/2 may split `cookie` into crumbs, which join with `; ` (RFC 9113 §8.2.3).
        headers[key] = key in headers ? `${headers[key]}${key === 'cookie' ? '; ' : ', '}${value}` : value;
    }
    return { pseudo, pseudoHeaderOrder, headerOrder, headers };
}

/** The TLS socket's decrypted stream as a plain Duplex, each chunk read shown to `onData` first. */
function tap(socket: TLSSocket, onData: (chunk: Buffer) => void): Duplex {
    const duplex = new Duplex({
        read: () => void socket.resume(),
        write: (chunk, _encoding, callback) => void socket.write(chunk, callback),
        final: (callback) => void socket.end(callback),
        destroy: (error, callback) => {
            socket.destroy(error ?? undefined);
            callback(error);
        },
    });
    socket.on('data', (chunk: Buffer) => {
        onData(chunk);
        if (!duplex.push(chunk)) socket.pause();
    });
    socket.on('end', () => duplex.push(null));
    socket.on('close', () => duplex.destroy());
    return duplex;
}

const PREFACE_LENGTH = 24; // PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n
const FRAME = { HEADERS: 0x1, PRIORITY: 0x2, SETTINGS: 0x4, WINDOW_UPDATE: 0x8 };
const FLAG = { ACK: 0x1, PADDED: 0x8, PRIORITY: 0x20 };

/** Reads the client's HTTP/2 frames from the decrypted bytes into `connection` and `headerPriorities`. */
function frameReader(
    connection: RecordedConnection,
    headerPriorities: Map<number, H2Priority>,
): (chunk: Buffer) => void {
    let pending = Buffer.alloc(0);
    let prefaceLeft = PREFACE_LENGTH;
    let settingsRead = false;
    return (chunk) => {
        pending = Buffer.concat([pending, chunk]);
        const skipped = Math.min(prefaceLeft, pending.length);
        pending = pending.subarray(skipped);
        prefaceLeft -= skipped;
        while (pending.length >= 9 && pending.length >= 9 + pending.readUIntBE(0, 3)) {
            const length = pending.readUIntBE(0, 3);
            const [type, flags] = [pending[3]!, pending[4]!];
            const streamId = pending.readUInt32BE(5) & 0x7fffffff;
            const payload = pending.subarray(9, 9 + length);
            pending = pending.subarray(9 + length);
            if (type === FRAME.SETTINGS && !(flags & FLAG.ACK) && !settingsRead) {
                settingsRead = true;
                for (let at = 0; at + 6 <= payload.length; at += 6)
                    connection.settings.push([payload.readUInt16BE(at), payload.readUInt32BE(at + 2)]);
            } else if (type === FRAME.WINDOW_UPDATE && streamId === 0 && connection.windowUpdate === undefined) {
                connection.windowUpdate = payload.readUInt32BE(0) & 0x7fffffff;
            } else if (type === FRAME.PRIORITY) {
                connection.priorityFrames.push(priority(streamId, payload));
            } else if (type === FRAME.HEADERS && flags & FLAG.PRIORITY) {
                headerPriorities.set(streamId, priority(streamId, payload.subarray(flags & FLAG.PADDED ? 1 : 0)));
            }
        }
    };
}

function priority(streamId: number, field: Buffer): H2Priority {
    const dependency = field.readUInt32BE(0);
    return { streamId, exclusive: dependency >>> 31 === 1, dependsOn: dependency & 0x7fffffff, weight: field[4]! + 1 };
}
