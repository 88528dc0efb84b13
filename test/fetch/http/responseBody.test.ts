import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { after, before, describe, it } from 'node:test';
import zlib from 'node:zlib';

import { classifyError, FetchFailure } from '../../../src/fetch/failures/failures.js';
import { HttpClient } from '../../../src/fetch/http/httpClient.js';
import { readBody, type ResponseStream } from '../../../src/fetch/http/responseBody.js';

const MiB = 1024 * 1024;

/** What the server did for one request: bytes it handed to the socket, and whether the client hung up. */
interface Served {
    path: string;
    written: number;
    closed: boolean;
    closedAt?: number;
}

/** ~100 MiB of zeros, compressed chunk by chunk: the compressed bytes are all that is held. */
async function zeroBomb(compressor: zlib.Gzip | zlib.BrotliCompress): Promise<Buffer> {
    const zeros = Buffer.alloc(MiB);
    const out: Buffer[] = [];
    await pipeline(
        Readable.from(
            (function* () {
                for (let i = 0; i < 100; i++) yield zeros;
            })(),
        ),
        compressor,
        async (source) => {
            for await (const chunk of source) out.push(chunk as Buffer);
        },
    );
    return Buffer.concat(out);
}

/** Writes `chunk` until the client goes away (or `limit` bytes), honouring back-pressure. */
function pump(response: http.ServerResponse, served: Served, chunk: Buffer, limit = Infinity) {
    const next = () => {
        while (!response.destroyed && served.written < limit) {
            served.written += chunk.length;
            if (!response.write(chunk)) return void response.once('drain', next);
        }
        if (served.written >= limit) response.end();
    };
    next();
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The larger of the process's RSS samples taken while `work` runs, minus the RSS before it. */
async function rssGrowthDuring(work: () => Promise<unknown>): Promise<number> {
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    try {
        await work();
    } finally {
        clearInterval(sampler);
    }
    return Math.max(peak, process.memoryUsage().rss) - before;
}

describe('readBody', () => {
    let server: http.Server;
    let base: string;
    const served: Served[] = [];
    let gzipBomb: Buffer;
    let brotliBomb: Buffer;

    before(async () => {
        gzipBomb = await zeroBomb(zlib.createGzip());
        brotliBomb = await zeroBomb(
            zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } }),
        );
        server = http.createServer((request, response) => {
            const record: Served = { path: request.url ?? '', written: 0, closed: false };
            served.push(record);
            response.on('close', () => {
                record.closed = true;
                record.closedAt = Date.now();
            });
            const html = { 'content-type': 'text/html; charset=utf-8' };
            switch (request.url) {
                case '/small':
                    return response.writeHead(200, html).end('<p>hello, small world</p>');
                case '/small-gzip':
                    return response
                        .writeHead(200, { ...html, 'content-encoding': 'gzip' })
                        .end(zlib.gzipSync('<p>compressed hello</p>'));
                case '/exactly-1k':
                    response.writeHead(200, html); // chunked: no Content-Length to refuse it by
                    return pump(response, record, Buffer.alloc(256, 0x61), 1024);
                case '/one-over-1k':
                    response.writeHead(200, html);
                    response.write(Buffer.alloc(1024, 0x61));
                    return response.end('b');
                case '/declared-huge':
                    response.writeHead(200, { ...html, 'content-length': String(256 * MiB) });
                    return pump(response, record, Buffer.alloc(MiB, 0x61), 256 * MiB);
                case '/endless':
                    response.writeHead(200, html);
                    return pump(response, record, Buffer.alloc(64 * 1024, 0x61));
                case '/gzip-bomb':
                    return response
                        .writeHead(200, { ...html, 'content-encoding': 'gzip', 'content-length': gzipBomb.length })
                        .end(gzipBomb);
                case '/brotli-bomb':
                    return response
                        .writeHead(200, { ...html, 'content-encoding': 'br', 'content-length': brotliBomb.length })
                        .end(brotliBomb);
                case '/trickle': {
                    response.writeHead(200, html);
                    const timer = setInterval(() => {
                        record.written += 1;
                        response.write('.');
                    }, 200);
                    return response.on('close', () => clearInterval(timer));
                }
                case '/premature':
                    response.writeHead(200, { ...html, 'content-length': '1000' });
                    return response.write('0123456789', () => setTimeout(() => request.socket.destroy(), 50));
                default:
                    return response.writeHead(404).end();
            }
        });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    const lastServed = (path: string) => served.filter((record) => record.path === path).at(-1)!;

    const client = new HttpClient();
    after(() => client.close());

    /** A response as the HTTP stage gets it: the HTTP client's, under its whole-exchange timeout. */
    function open(path: string, { timeoutMs = 30_000 } = {}): Promise<ResponseStream> {
        return client.fetch({ url: `${base}${path}`, timeoutMs });
    }

    /** The same through plain node:http: the IncomingMessage itself. */
    function openPlain(path: string): Promise<ResponseStream> {
        return new Promise((resolve, reject) => {
            http.get(`${base}${path}`, { agent: false }, resolve).once('error', reject);
        });
    }

    const cap = MiB;

    it('reads a small body whole', async () => {
        const body = await readBody(await open('/small'), cap);
        assert.equal(body.toString('utf8'), '<p>hello, small world</p>');
        const plain = await readBody(await openPlain('/small'), cap);
        assert.equal(plain.toString('utf8'), '<p>hello, small world</p>');
    });

    it('reads a compressed body decompressed', async () => {
        const body = await readBody(await open('/small-gzip'), cap);
        assert.equal(body.toString('utf8'), '<p>compressed hello</p>');
    });

    it('allows a body of exactly the cap and refuses one byte more', async () => {
        const exact = await readBody(await open('/exactly-1k'), 1024);
        assert.equal(exact.length, 1024);
        await assert.rejects(readBody(await open('/one-over-1k'), 1024), { reason: 'too-large' });
    });

    it('refuses a declared Content-Length over the cap before reading the body', async () => {
        const response = await open('/declared-huge');
        const error = await readBody(response, cap).then(
            () => assert.fail('a 256 MiB body under a 1 MiB cap was read'),
            (rejected: unknown) => rejected,
        );
        assert.ok(error instanceof FetchFailure);
        assert.equal(error.failureClass, 'permanent');
        assert.equal(error.reason, 'too-large');
        assert.equal(error.status, 200);
        assert.match(error.message, /^too-large: Content-Length 268435456, past the 1 MiB cap/);
        assert.deepEqual(
            { failureClass: classifyError(error).failureClass, reason: classifyError(error).reason },
            { failureClass: 'permanent', reason: 'too-large' },
        );
        assert.ok(response.destroyed, 'the stream is destroyed');
        await sleep(300);
        const record = lastServed('/declared-huge');
        assert.ok(record.closed, 'the connection was closed');
        // What the socket buffers took before the client hung up; reading would have taken all 256 MiB.
        assert.ok(record.written < 32 * MiB, `the server wrote ${record.written} bytes`);
    });

    it('stops an endless chunked body at the cap, and the server stops writing', async () => {
        const started = Date.now();
        await assert.rejects(readBody(await open('/endless'), cap), (error: unknown) => {
            assert.ok(error instanceof FetchFailure);
            assert.equal(error.failureClass, 'permanent');
            assert.equal(error.reason, 'too-large');
            assert.match(error.message, /past the 1 MiB cap/);
            return true;
        });
        await sleep(300);
        const record = lastServed('/endless');
        assert.ok(record.closed, 'the server saw the connection close');
        assert.ok(record.closedAt! - started < 2000);
        const written = record.written;
        assert.ok(written < 32 * MiB, `the server wrote ${written} bytes`);
        await sleep(200);
        assert.equal(record.written, written, 'nothing more was written after the close');
    });

    for (const [name, path] of [
        ['gzip', '/gzip-bomb'],
        ['brotli', '/brotli-bomb'],
    ] as const) {
        it(`stops a ${name} bomb (100 MiB of zeros) at a 10 MiB cap, in bounded memory`, async () => {
            // The sizes the test relies on: a small download that inflates past the cap.
            assert.ok((path === '/gzip-bomb' ? gzipBomb : brotliBomb).length < 200 * 1024);
            let error: unknown;
            const growth = await rssGrowthDuring(async () => {
                error = await readBody(await open(path), 10 * MiB).then(
                    () => assert.fail('the bomb was read whole'),
                    (rejected: unknown) => rejected,
                );
            });
            assert.ok(error instanceof FetchFailure, String(error));
            assert.equal(error.failureClass, 'permanent');
            assert.equal(error.reason, 'too-large');
            assert.match(error.message, /^too-large: .* past the 10 MiB cap/);
            assert.ok(growth < 60 * MiB, `RSS grew by ${(growth / MiB).toFixed(1)} MiB`);
        });
    }

    it('gives up on a body trickling in, under the client’s timeout, as a transient etimedout', async () => {
        const started = Date.now();
        // The client's timeout runs from the request to the body's end.
        const error = await readBody(await open('/trickle', { timeoutMs: 1000 }), cap).then(
            () => assert.fail('the trickle was read whole'),
            (rejected: unknown) => rejected,
        );
        const elapsed = Date.now() - started;
        assert.ok(!(error instanceof FetchFailure), 'the client’s own error');
        const classified = classifyError(error);
        assert.equal(classified.failureClass, 'transient');
        assert.equal(classified.reason, 'etimedout', classified.message);
        assert.match(classified.message, /request timeout: no whole answer within 1000 ms/);
        assert.ok(elapsed >= 950 && elapsed < 2000, `gave up after ${elapsed} ms`);
        await sleep(300);
        const record = lastServed('/trickle');
        assert.ok(record.closed, 'the connection was closed');
        assert.ok(record.written >= 3 && record.written <= 8, `${record.written} bytes trickled`);
    });

    it('rejects a body cut short by the server, as a transient connection failure', async () => {
        // undici's word for it is its own: "other side closed" (UND_ERR_SOCKET); node:http's is ECONNRESET.
        for (const [openResponse, reason] of [
            [open, 'und-err-socket'],
            [openPlain, 'econnreset'],
        ] as const) {
            const started = Date.now();
            const error = await readBody(await openResponse('/premature'), cap).then(
                () => assert.fail('a body of 10 of its 1,000 bytes was accepted'),
                (rejected: unknown) => rejected,
            );
            assert.ok(Date.now() - started < 2000, 'rejected when the socket closed, not by the timeout');
            assert.ok(!(error instanceof FetchFailure), 'the stream’s own error');
            const classified = classifyError(error);
            assert.equal(classified.failureClass, 'transient');
            assert.equal(classified.reason, reason, classified.message);
        }
    });
});
