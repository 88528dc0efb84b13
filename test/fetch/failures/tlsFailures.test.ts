/**
 * TLS failures made for real and classed: a local HTTPS server that speaks only TLS 1.3, with a self-signed
 * certificate, and a Node client and a Chromium that offer at most TLS 1.2, or that verify the certificate.
 * None of them gets through however often it asks: permanent `tls-failure`, not a transient error retried
 * until dead-letter.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { connect } from 'node:tls';
import { chromium } from 'playwright';

import { CHROMIUM_ARGS, findChromium } from '../../../src/fetch/browser/chromium.js';
import { classifyError } from '../../../src/fetch/failures/failures.js';
import { selfSignedCert } from '../../helpers/selfSignedCert.js';

const chromiumPath = findChromium();

/** The error `run` fails with; fails the test when it succeeds. */
async function failure(run: () => Promise<unknown>): Promise<Error> {
    try {
        await run();
    } catch (error) {
        assert.ok(error instanceof Error);
        return error;
    }
    assert.fail('it succeeded');
}

describe('TLS failures, for real', () => {
    let server: Server;
    let port: number;

    before(async () => {
        server = createServer({ ...selfSignedCert('127.0.0.1'), minVersion: 'TLSv1.3' }, (_request, response) =>
            response.writeHead(200, { 'content-type': 'text/html' }).end('<h1>TLS 1.3 only</h1>'),
        );
        // The server's side of each refused handshake; the client's is what is classed.
        server.on('tlsClientError', () => undefined);
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        port = (server.address() as AddressInfo).port;
    });

    after(() => new Promise((resolve) => server.close(resolve)));

    /** Connects as the HTTP stage does (certificates not verified), with `options` on top. */
    function handshake(options: { maxVersion?: 'TLSv1.2'; rejectUnauthorized?: boolean }): Promise<void> {
        return new Promise((resolve, reject) => {
            const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ...options }, () => {
                socket.end();
                resolve();
            });
            socket.once('error', reject);
        });
    }

    it('a Node client offering at most TLS 1.2: the server refuses the version, permanent tls-failure', async () => {
        await handshake({}); // the control: TLS 1.3 is agreed on
        const error = await failure(() => handshake({ maxVersion: 'TLSv1.2' }));
        assert.equal((error as { code?: string }).code, 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION');
        assert.match(error.message, /SSL routines:.*tlsv1 alert protocol version/);
        assert.equal(classifyError(error).failureClass, 'permanent');
        assert.equal(classifyError(error).reason, 'tls-failure');
        // As Crawlee re-throws some errors: with only the message.
        assert.equal(classifyError(new Error(error.message)).reason, 'tls-failure');
    });

    it('a Node client that verifies meets the self-signed certificate: permanent tls-failure', async () => {
        const error = await failure(() => handshake({ rejectUnauthorized: true }));
        assert.equal((error as { code?: string }).code, 'DEPTH_ZERO_SELF_SIGNED_CERT');
        const wrapped = classifyError(new Error('Request failed', { cause: error }));
        assert.equal(wrapped.failureClass, 'permanent');
        assert.equal(wrapped.reason, 'tls-failure');
    });

    it('Chromium offering at most TLS 1.2: ERR_SSL_VERSION_OR_CIPHER_MISMATCH, permanent tls-failure', {
        skip: chromiumPath ? false : 'no Chromium found',
    }, async (t) => {
        // Chromium's switch for the highest TLS version it offers.
        const browser = await chromium.launch({
            executablePath: chromiumPath,
            args: [...CHROMIUM_ARGS, '--ssl-version-max=tls1.2'],
        });
        t.after(() => browser.close());
        const context = await browser.newContext({ ignoreHTTPSErrors: true });
        const error = await failure(() => context.newPage().then((page) => page.goto(`https://127.0.0.1:${port}/`)));
        assert.match(error.message, /^page\.goto: net::ERR_SSL_VERSION_OR_CIPHER_MISMATCH at https:\/\/127\.0\.0\.1:/);
        assert.equal(classifyError(error).failureClass, 'permanent');
        assert.equal(classifyError(error).reason, 'tls-failure');
    });

    it('Chromium verifying the certificate, as the browser stage did: ERR_CERT_AUTHORITY_INVALID, permanent tls-failure', {
        skip: chromiumPath ? false : 'no Chromium found',
    }, async (t) => {
        const browser = await chromium.launch({ executablePath: chromiumPath, args: CHROMIUM_ARGS });
        t.after(() => browser.close());
        const context = await browser.newContext();
        const error = await failure(() => context.newPage().then((page) => page.goto(`https://127.0.0.1:${port}/`)));
        assert.match(error.message, /^page\.goto: net::ERR_CERT_AUTHORITY_INVALID at https:\/\/127\.0\.0\.1:/);
        assert.equal(classifyError(error).failureClass, 'permanent');
        assert.equal(classifyError(error).reason, 'tls-failure');
    });
});
