/**
 * Run under the LTS Node by demoUnderLts.test.ts: where Node's zlib has zstd, the identities offer it
 * and the fast profile's client decodes it. Serves one zstd body on loopback, fetches it with a
 * session's headers, and prints what was offered and what was read, as JSON.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { ExitBreaker } from '../../src/fetch/egress/exitBreaker.js';
import { Identities } from '../../src/fetch/egress/identities.js';
import { resolveTiers } from '../../src/fetch/egress/proxyTiers.js';
import { HttpClient } from '../../src/fetch/http/httpClient.js';
import { readBody } from '../../src/fetch/http/responseBody.js';

const compress = (zlib as { zstdCompressSync?: (data: Buffer) => Buffer }).zstdCompressSync;
if (!compress) throw new Error(`Node ${process.version} has no zstd`);
const page = '<html><title>zstd</title></html>';
const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'zstd' });
    response.end(compress(Buffer.from(page)));
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const identity = new Identities({ tiers: resolveTiers([]), breaker: new ExitBreaker() }).pick(0)!;
const client = new HttpClient();
const response = await client.fetch({
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    headers: identity.headers,
    timeoutMs: 10_000,
});
const body = (await readBody(response, 1_000_000)).toString();
await client.close();
server.close();
console.log(JSON.stringify({ offered: identity.headers['accept-encoding'], body }));
