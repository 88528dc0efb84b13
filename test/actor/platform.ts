/**
 * The Apify platform's side of an actor run, on 127.0.0.1, for the CLI under test to talk to:
 *
 * - `platformEvents`: the WebSocket server of ACTOR_EVENTS_WEBSOCKET_URL, sending events as the
 *   platform does (`{ name, data }`), on the `ws` package that comes with the SDK;
 * - `platformApi`: a stand-in for APIFY_API_BASE_URL with only the requests SDK 3.7.2 makes for
 *   a dragnet run (written from those requests, not from the API's documentation): the run, the
 *   default key-value store and its records, the default dataset and pushes to it. Any other
 *   request is answered 404 and kept in `unexpected`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import type { TestContext } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';

/** The part of `ws` (which has no types of its own) used here. */
interface EventsServer {
    clients: Set<{ send(data: string): void }>;
    on(event: 'connection', listener: () => void): void;
    once(event: 'listening', listener: () => void): void;
    address(): AddressInfo;
    close(callback: () => void): void;
}
const { WebSocketServer } = createRequire(import.meta.url)('ws') as {
    WebSocketServer: new (options: { host: string; port: number }) => EventsServer;
};

export interface PlatformEvents {
    url: string;
    /** Connections the SDK opened so far. */
    connections(): number;
    /** Sends the event to every connected SDK. */
    send(name: string): void;
}

export async function platformEvents(t: TestContext): Promise<PlatformEvents> {
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => server.once('listening', resolve));
    let connections = 0;
    server.on('connection', () => (connections += 1));
    t.after(() => new Promise<void>((resolve) => server.close(resolve)));
    return {
        url: `ws://127.0.0.1:${server.address().port}`,
        connections: () => connections,
        send: (name) => {
            for (const client of server.clients) client.send(JSON.stringify({ name, data: null }));
        },
    };
}

export const RUN_ID = 'dragnet-test-run';
export const DATASET_ID = 'dragnet-test-dataset';
export const STORE_ID = 'dragnet-test-store';

export interface PlatformApi {
    url: string;
    /** The default dataset's items, in push order. */
    items: Record<string, unknown>[];
    /** The default key-value store's records, as JSON text. */
    records: Map<string, string>;
    /** Requests the stand-in does not know, as `METHOD /path`. */
    unexpected: string[];
}

/** The stand-in API, its default key-value store holding `input` as the record INPUT. */
export async function platformApi(t: TestContext, input: unknown): Promise<PlatformApi> {
    const api: PlatformApi = {
        url: '',
        items: [],
        records: new Map([['INPUT', JSON.stringify(input)]]),
        unexpected: [],
    };
    const recordPath = new RegExp(`^/v2/key-value-stores/${STORE_ID}/records/([^/]+)$`);
    const server = createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => {
            const body = decoded(Buffer.concat(chunks), request.headers['content-encoding']);
            const { pathname } = new URL(request.url!, 'http://127.0.0.1');
            const route = `${request.method} ${pathname}`;
            const json = (status: number, value?: unknown) => {
                response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
                response.end(value === undefined ? undefined : JSON.stringify(value));
            };
            const record = recordPath.exec(pathname)?.[1];
            if (route === `GET /v2/actor-runs/${RUN_ID}`)
                return json(200, { data: { id: RUN_ID, chargedEventCounts: {}, options: {} } });
            if (route === `GET /v2/key-value-stores/${STORE_ID}`) return json(200, { data: { id: STORE_ID } });
            if (route === `GET /v2/datasets/${DATASET_ID}`)
                return json(200, { data: { id: DATASET_ID, itemCount: api.items.length } });
            if (route === `POST /v2/datasets/${DATASET_ID}/items`) {
                // One item or several, as the API takes them: Crawlee's
                // pushData sends a batch of one as the bare object.
                const pushed = JSON.parse(body) as Record<string, unknown> | Record<string, unknown>[];
                api.items.push(...(Array.isArray(pushed) ? pushed : [pushed]));
                return json(201);
            }
            if (record && request.method === 'GET') {
                const text = api.records.get(decodeURIComponent(record));
                if (text === undefined)
                    return json(404, { error: { type: 'record-not-found', message: 'Record was not found' } });
                response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
                return response.end(text);
            }
            if (record && request.method === 'PUT') {
                api.records.set(decodeURIComponent(record), body);
                return json(201);
            }
            api.unexpected.push(route);
            json(404, { error: { type: 'page-not-found', message: `${route} is not in the stand-in` } });
        });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    api.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return api;
}

/** The SDK's client sends large bodies compressed. */
function decoded(body: Buffer, encoding: string | undefined): string {
    if (encoding === 'br') return brotliDecompressSync(body).toString('utf8');
    if (encoding === 'gzip') return gunzipSync(body).toString('utf8');
    return body.toString('utf8');
}

/** The variables the platform sets for an actor run, pointed at the stand-ins. */
export function atHomeEnv(api: PlatformApi, events: PlatformEvents): NodeJS.ProcessEnv {
    return {
        APIFY_IS_AT_HOME: '1',
        APIFY_API_BASE_URL: api.url,
        APIFY_API_PUBLIC_BASE_URL: api.url,
        APIFY_TOKEN: 'test-token',
        ACTOR_RUN_ID: RUN_ID,
        ACTOR_DEFAULT_DATASET_ID: DATASET_ID,
        ACTOR_DEFAULT_KEY_VALUE_STORE_ID: STORE_ID,
        ACTOR_EVENTS_WEBSOCKET_URL: events.url,
    };
}
