/**
 * Finding and launching Chromium. Chromium calls home on its own (updates, sign-in, network time);
 * with CHROMIUM_ARGS it must not: the browser is given a proxy that records every request it did
 * not send to loopback.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { delimiter } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { chromium } from 'playwright';
import { browserProblem, CHROMIUM_ARGS, findChromium } from '../../../src/fetch/browser/chromium.js';

const executablePath = findChromium();

describe('CHROMIUM_ARGS', { skip: executablePath ? false : 'no Chromium found' }, () => {
    it('keep the browser from calling anywhere but the pages it is sent to', async (t) => {
        const offLoopback: string[] = [];
        const proxy = createServer((request, response) => {
            offLoopback.push(request.url ?? '');
            response.writeHead(502).end();
        });
        proxy.on('connect', (request, socket) => {
            offLoopback.push(`CONNECT ${request.url}`);
            socket.destroy();
        });
        const site = createServer((_request, response) =>
            response.writeHead(200, { 'content-type': 'text/html' }).end('<h1>ok</h1>'),
        );
        await Promise.all(
            [proxy, site].map((server) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))),
        );
        t.after(() => {
            proxy.close();
            site.close();
        });

        const browser = await chromium.launch({
            executablePath,
            args: CHROMIUM_ARGS,
            proxy: { server: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, bypass: '127.0.0.1' },
        });
        const page = await browser.newPage();
        for (let visit = 0; visit < 3; visit++)
            await page.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/?visit=${visit}`);
        await sleep(8000); // background updaters start a few seconds after launch
        await browser.close();
        assert.deepEqual(offLoopback, []);
    });
});

describe('findChromium', () => {
    it(`looks for a system Chromium where DRAGNET_SYSTEM_CHROMIUM_PATHS \
says, in its order, instead of the usual places`, () => {
        const paths = ['/nonexistent/chromium', process.execPath, '/bin/sh'].join(delimiter);
        assert.equal(findChromium({ DRAGNET_SYSTEM_CHROMIUM_PATHS: paths }), process.execPath);
    });

    it('takes CHROMIUM_PATH over any other, and nothing else when it does not exist', () => {
        assert.equal(
            findChromium({ CHROMIUM_PATH: '/bin/sh', DRAGNET_SYSTEM_CHROMIUM_PATHS: process.execPath }),
            '/bin/sh',
        );
        assert.equal(
            findChromium({ CHROMIUM_PATH: '/nonexistent/chromium', DRAGNET_SYSTEM_CHROMIUM_PATHS: process.execPath }),
            undefined,
        );
    });
});

describe('browserProblem', () => {
    it('says how to get a browser when none was found', async () => {
        assert.match(
            (await browserProblem(undefined)) ?? '',
            /no Chromium found.*apt-get install -y chromium.*CHROMIUM_PATH/,
        );
    });

    it('names the binary and the launch error when the browser does not start, without throwing', async () => {
        const problem = await browserProblem('/bin/false');
        assert.match(problem ?? '', /^Chromium at \/bin\/false does not start \(.+\); install one/);
        assert.doesNotMatch(problem ?? '', /\n/, 'one line');
    });

    it('finds no problem with a working Chromium', { skip: executablePath ? false : 'no Chromium found' }, async () => {
        assert.equal(await browserProblem(executablePath), undefined);
    });
});
