/**
 * A CONNECT tunnel through a proxy (http:// or https://, with Basic credentials in its URL), as
 * both wire profiles open one: the HTTP client for every request through a proxy (connector.ts),
 * the browser's egress proxy for its plain-http requests (egressProxy.ts). Its failures carry codes
 * failures.ts classes:
 * - `ERR_TUNNEL_REFUSED` (with the proxy's `status`): the proxy answered CONNECT with another status;
 * - `ECONNRESET`: it closed the connection before answering, or answered with no end;
 * - and Node's own for a proxy that cannot be reached (ECONNREFUSED, ENOTFOUND, TLS errors).
 */
import net from 'node:net';
import tls from 'node:tls';

/** The most a proxy's answer to CONNECT may take before its blank line; more is no proxy. */
const MAX_TUNNEL_ANSWER_BYTES = 16 * 1024;

/**
 * Connects to `proxy` and asks it for a tunnel to `authority` (`host:port`, an IPv6 host in brackets).
 * Returns the connection at once, for the caller to destroy when it gives up; calls back once, with
 * nothing when the tunnel is open (the socket then paused, for the caller to read from), or with why
 * it is not.
 */
export function openTunnel(proxy: URL, authority: string, callback: (error?: Error) => void): net.Socket {
    let called = false;
    const once = (error?: Error) => {
        if (called) return;
        called = true;
        callback(error);
    };
    const socket = connectToProxy(proxy);
    socket.once('error', once);
    socket.once(proxy.protocol === 'https:' ? 'secureConnect' : 'connect', () => {
        socket.write(connectRequest(proxy, authority));
        readTunnelAnswer(socket, once);
    });
    return socket;
}

function connectToProxy(proxy: URL): net.Socket {
    const port = Number(proxy.port) || (proxy.protocol === 'https:' ? 443 : 80);
    const host = proxy.hostname.replace(/^\[(.*)\]$/, '$1');
    return proxy.protocol === 'https:'
        ? tls.connect({ host, port, servername: net.isIP(host) ? undefined : host, rejectUnauthorized: false })
        : net.connect({ host, port });
}

function connectRequest(proxy: URL, authority: string): string {
    const credentials = proxy.username
        ? `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`
        : undefined;
    const authorization = credentials
        ? `Proxy-Authorization: Basic ${Buffer.from(credentials).toString('base64')}\r\n`
        : '';
    return (
        `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${authorization}Proxy-Connection: ` +
        `keep-alive\r\n\r\n`
    );
}

/** Reads the proxy's answer to CONNECT up to its blank line; calls back with nothing when it is 200. */
function readTunnelAnswer(socket: net.Socket, callback: (error?: Error) => void): void {
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end === -1) {
            if (head.length > MAX_TUNNEL_ANSWER_BYTES)
                stop(
                    coded(
                        `the proxy's answer to CONNECT has no end within ${MAX_TUNNEL_ANSWER_BYTES} bytes`,
                        'ECONNRESET',
                    ),
                );
            return;
        }
        const statusLine = head.subarray(0, head.indexOf('\r\n')).toString('latin1');
        const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
        if (status !== 200)
            return stop(
                Object.assign(
                    coded(`the proxy refused the tunnel: CONNECT answered "${statusLine}"`, 'ERR_TUNNEL_REFUSED'),
                    { status: status || undefined },
                ),
            );
        const rest = head.subarray(end + 4);
        stop();
        if (rest.length > 0) socket.unshift(rest);
    };
    const onClose = () => stop(coded('the proxy closed the connection before answering CONNECT', 'ECONNRESET'));
    const stop = (error?: Error) => {
        socket.off('data', onData);
        socket.off('close', onClose);
        socket.pause();
        callback(error);
    };
    socket.on('data', onData);
    socket.once('close', onClose);
}

export function coded(message: string, code: string): Error {
    return Object.assign(new Error(message), { code });
}
