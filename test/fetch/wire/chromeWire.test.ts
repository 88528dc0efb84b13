/**
 * The chrome wire profile on the wire: Chromium loads a page of the wire recorder first (the
 * ground truth), then the HTTP client sends requests on the `chrome` profile, each session in its
 * own browser context; what the recorder saw of both must be the same browser.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chromium } from 'playwright';
import { CHROMIUM_ARGS, findChromium } from '../../../src/fetch/browser/chromium.js';
import { Egress, type LookupFunction } from '../../../src/fetch/egress/egress.js';
import { ExitBreaker } from '../../../src/fetch/egress/exitBreaker.js';
import { Identities } from '../../../src/fetch/egress/identities.js';
import { resolveTiers } from '../../../src/fetch/egress/proxyTiers.js';
import { HttpClient } from '../../../src/fetch/http/httpClient.js';
import { readBody } from '../../../src/fetch/http/responseBody.js';
import { ChromeWire } from '../../../src/fetch/wire/chromeWire.js';
import { type RecordedConnection, startWireRecorder, type WireRecorder } from '../../helpers/wireRecorder.js';

/** A name for the recorder, so clients send SNI as to a site (none goes with an IP). */
const HOST = 'wire.test';
const executablePath = findChromium();

/** wire.test is the recorder on loopback, for the egress (and so for Chromium, which resolves through it). */
const loopbackLookup: LookupFunction = (_hostname, options, callback) => {
    const all = typeof options === 'object' && options.all === true;
    if (all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
    else callback(null, '127.0.0.1', 4);
};

describe('the chrome wire profile', { skip: executablePath ? false : 'no Chromium on this machine' }, () => {
    let recorder: WireRecorder;
    let client: HttpClient;
    let identities: Identities;
    let origin: string;
    let truth: RecordedConnection;
    let truthHeaders: string[];
    let truthPseudo: string[];
    let truthVersion: string;

    before(async () => {
        recorder = await startWireRecorder();
        origin = `https://${HOST}:${recorder.port}`;
        const browser = await chromium.launch({
            executablePath,
            args: [...CHROMIUM_ARGS, `--host-resolver-rules=MAP ${HOST} 127.0.0.1`],
        });
        truthVersion = browser.version();
        const context = await browser.newContext({ ignoreHTTPSErrors: true });
        await (await context.newPage()).goto(`${origin}/truth`);
        await browser.close();
        const request = recorder.requests.find((each) => each.url === '/truth');
        assert.ok(request, 'Chromium loaded the page');
        truth = recorder.connections[request.connection]!;
        truthHeaders = request.headerOrder;
        truthPseudo = request.pseudoHeaderOrder;

        const egress = new Egress({ startUrls: [origin], lookup: loopbackLookup });
        client = new HttpClient({ chrome: new ChromeWire({ executablePath: executablePath!, egress }) });
        const tiers = resolveTiers([]);
        identities = new Identities({ tiers, breaker: new ExitBreaker() });
    });
    after(async () => {
        await client?.close();
        await recorder?.close();
    });

    it('sends what Chromium sends: its handshake, its HTTP/2 settings, its headers in its order', async () => {
        const sessions = [identities.pick(0)!, identities.pick(0)!];
        assert.notEqual(sessions[0]!.id, sessions[1]!.id, 'two sessions: two contexts, two connections');
        for (const [index, identity] of sessions.entries()) {
            const response = await client.fetch({
                url: `${origin}/wire/${index}`,
                timeoutMs: 10_000,
                wire: 'chrome',
                identity,
                headers: identity.headers,
            });
            assert.equal(response.statusCode, 200);
            assert.match((await readBody(response, 1_000_000)).toString(), /<title>wire<\/title>/);
        }

        const requests = recorder.requests.filter((each) => each.url.startsWith('/wire/'));
        assert.equal(requests.length, 2);
        const connections = requests.map((each) => recorder.connections[each.connection]!);
        assert.notEqual(requests[0]!.connection, requests[1]!.connection);
        for (const [index, connection] of connections.entries()) {
            assert.equal(connection.ja4, truth.ja4);
            assert.deepEqual(connection.grease, truth.grease);
            assert.deepEqual(connection.settings, truth.settings);
            assert.equal(connection.windowUpdate, truth.windowUpdate);
            assert.equal(connection.protocol, 'h2');
            assert.deepEqual(requests[index]!.pseudoHeaderOrder, truthPseudo);
            assert.deepEqual(requests[index]!.headerOrder, truthHeaders);
        }
        assert.deepEqual(truth.grease, { ciphers: true, extensions: true, groups: true, signatureAlgorithms: true });
        // Chrome sends its extensions in a new order on each connection; JA4 sorts them, so it holds still.
        assert.notDeepEqual(connections[0]!.extensions, connections[1]!.extensions);

        const major = truthVersion.split('.')[0];
        for (const [index, request] of requests.entries()) {
            assert.match(request.headers['user-agent'] ?? '', new RegExp(` Chrome/${major}\\.0\\.0\\.0 `));
            assert.match(request.headers['sec-ch-ua'] ?? '', new RegExp(`"Chromium";v="${major}"`));
            assert.equal(request.headers['user-agent'], sessions[index]!.userAgent);
        }
    });
});
