/**
 * Reading a response's body within a size cap, so a hostile server costs a bounded amount of
 * memory: a declared `Content-Length` past the cap is refused before a byte is read, and the bytes
 * are counted as they arrive (after the HTTP client has decompressed them, so a gzip or brotli bomb is stopped
 * at the cap like any other large body). Past the cap the stream is destroyed, so nothing more is
 * read or decompressed. Time is the client's to bound: its timeout runs until the body's end,
 * so a server that trickles a byte a second fails as `etimedout`.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { FetchFailure } from '../failures/failures.js';

/** A response as the HTTP client streams it (httpClient.ts): the body, its status and headers. */
export type ResponseStream = Readable & { statusCode?: number; headers: IncomingHttpHeaders };

/** The body, at most `maxBytes` of it decompressed; past that, a permanent `too-large` failure. */
export function readBody(response: ResponseStream, maxBytes: number): Promise<Buffer> {
    const status = response.statusCode;
    const declared = Number(response.headers['content-length']);
    if (declared > maxBytes) {
        response.destroy();
        return Promise.reject(tooLarge(`Content-Length ${declared}`, maxBytes, status));
    }
    return new Promise((resolve, reject) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size <= maxBytes) return void chunks.push(chunk);
            response.destroy();
            reject(tooLarge(`a body of more than ${maxBytes} bytes`, maxBytes, status));
        });
        response.once('error', reject);
        response.once('end', () => resolve(Buffer.concat(chunks, size)));
    });
}

function tooLarge(what: string, maxBytes: number, status: number | undefined): FetchFailure {
    const cap = `${(maxBytes / 1024 / 1024).toFixed(1).replace(/\.0$/, '')} MiB`;
    return new FetchFailure(
        'permanent',
        `too-large: ${what}, past the ${cap} cap (--max-response-mb)`,
        status,
        'too-large',
    );
}
