/**
 * The first run on a machine without a browser: `npm start` (src/main.ts, no arguments) in a child
 * process whose lookup finds no Chromium — DRAGNET_SYSTEM_CHROMIUM_PATHS points into an empty
 * directory, PLAYWRIGHT_BROWSERS_PATH at another, CHROMIUM_PATH is unset. What is real: the lookup,
 * Playwright's own `npx playwright install chromium` (sent to a loopback download host that has no
 * browser, or to a closed loopback port), the crawl, and the rendering with this machine's Chromium.
 * What is not: `apt-get`, a script first on PATH that writes down how it was called and installs
 * nothing, so when it "succeeds" the browser found is the /usr/bin/chromium already installed.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { startShop } from '../../../src/demo/shop.js';
import type { RunSummary } from '../../../src/vocabulary/report.js';
import { runCli } from '../../helpers/cli.js';
import { readDataset } from '../../helpers/stores.js';

const DEBIAN_CHROMIUM = '/usr/bin/chromium';
const APT_INSTALL =
    'DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-liberation';
/** Nothing listens on the discard port of loopback (CHROMIUM_ARGS sends Chromium's updater there too). */
const CLOSED_PORT_URL = 'http://127.0.0.1:9';
const asRoot = process.getuid?.() === 0;

interface Machine {
    dir: string;
    env: NodeJS.ProcessEnv;
    /** The arguments of each `apt-get` call, in order. */
    aptCalls(): Promise<string[]>;
}

/** A machine whose lookup finds no Chromium, with a fake `apt-get` that fails its installs when `aptInstallFails`. */
async function machineWithoutChromium(
    t: TestContext,
    downloadHost: string,
    { aptInstallFails = false } = {},
): Promise<Machine> {
    const dir = await mkdtemp(join(tmpdir(), 'dragnet-nochromium-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    await mkdir(join(dir, 'empty'));
    await mkdir(join(dir, 'bin'));
    const aptLog = join(dir, 'apt-calls');
    const fail = aptInstallFails
        ? `[ "$1" = install ] && { echo 'E: Unable to locate package chromium' >&2; exit 100; }\n`
        : '';
    await writeFile(join(dir, 'bin', 'apt-get'), `#!/bin/sh\necho "$*" >> '${aptLog}'\n${fail}exit 0\n`);
    await chmod(join(dir, 'bin', 'apt-get'), 0o755);
    const env = {
        CHROMIUM_PATH: '',
        DRAGNET_SYSTEM_CHROMIUM_PATHS: join(dir, 'empty', 'chromium'),
        PLAYWRIGHT_BROWSERS_PATH: join(dir, 'empty', 'ms-playwright'),
        PLAYWRIGHT_DOWNLOAD_HOST: downloadHost,
        PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '',
        https_proxy: '',
        HTTPS_PROXY: '',
        all_proxy: '',
        ALL_PROXY: '',
        PATH: `${join(dir, 'bin')}${delimiter}${process.env.PATH}`,
        LOG_LEVEL: 'info',
    };
    const aptCalls = async () =>
        existsSync(aptLog) ? (await readFile(aptLog, 'utf8')).split('\n').filter(Boolean) : [];
    return { dir, env, aptCalls };
}

/** A download host that has no browser: every request gets a 404. Returns its URL and the paths asked for. */
async function emptyDownloadHost(t: TestContext): Promise<{ url: string; requests: string[] }> {
    const requests: string[] = [];
    const server = createServer((request, response) => {
        requests.push(request.url ?? '');
        response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => server.close());
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

/** The messages of the run's log (JSON lines on stderr), in order. */
function logMessages(stderr: string): string[] {
    return stderr
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => (JSON.parse(line) as { msg: string }).msg);
}

async function summaryOf(dir: string): Promise<RunSummary> {
    return JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')) as RunSummary;
}

describe('npm start on a machine without Chromium', () => {
    it('installs one the way npm test does, says so as it goes, renders the 20 script-only pages and exits 0', {
        skip: asRoot && existsSync(DEBIAN_CHROMIUM) ? false : `needs root and ${DEBIAN_CHROMIUM}`,
    }, async (t) => {
        const downloadHost = await emptyDownloadHost(t);
        const machine = await machineWithoutChromium(t, downloadHost.url);
        const run = await runCli(
            ['--storage-dir', join(machine.dir, 'storage'), '--summary-json', join(machine.dir, 'summary.json')],
            machine.env,
        );

        assert.equal(run.code, 0, `exit code; stderr: ${run.stderr.slice(-2000)}`);
        const summary = await summaryOf(machine.dir);
        assert.equal(summary.browser.rendered, 20);
        assert.equal(summary.items.stored, 200);
        assert.equal(summary.deadLetterByReason['renderer-unavailable'], undefined);

        assert.ok(downloadHost.requests.length > 0, 'Playwright really tried its download');
        assert.deepEqual(await machine.aptCalls(), [
            'install -y -qq --no-install-recommends chromium fonts-liberation',
        ]);
        const messages = logMessages(run.stderr);
        const started = messages.findIndex((message) => message.startsWith('demo shop started at http://127.0.0.1:'));
        assert.equal(started, 4, `four steps told before the shop starts:\n${messages.slice(0, 6).join('\n')}`);
        const [download, downloadFailed, install, installed] = messages;
        assert.equal(
            download,
            "no Chromium found; downloading Playwright's Chromium (`npx playwright install chromium`, about 150 MB) …",
        );
        assert.match(
            downloadFailed!,
            new RegExp(
                '^`npx playwright install chromium` failed \\(exit 1: Error: Download failed: ' +
                    'server returned code 404.*\\); trying the next way$',
            ),
        );
        assert.equal(install, `no Chromium found; installing Debian's chromium (\`${APT_INSTALL}\`) …`);
        assert.equal(installed, `Debian's chromium is installed: ${DEBIAN_CHROMIUM}`);

        const note = run.stdout.split('\n').filter(Boolean).at(-1) ?? '';
        assert.match(
            note,
            new RegExp(
                '^ {2}chromium {3}no Chromium was found: `npx playwright install chromium` failed ' +
                    '\\(exit 1: Error: Download failed: server returned code 404[^;]*; ',
            ),
        );
        assert.ok(note.endsWith(`; \`${APT_INSTALL}\` succeeded: ${DEBIAN_CHROMIUM}`), note);
    });

    it(`when nothing can be installed: does not run the download its host refuses, \
dead-letters the 20 pages as renderer-unavailable, exits 1 and says what to run`, async (t) => {
        const machine = await machineWithoutChromium(t, CLOSED_PORT_URL, { aptInstallFails: true });
        const run = await runCli(
            ['--storage-dir', join(machine.dir, 'storage'), '--summary-json', join(machine.dir, 'summary.json')],
            machine.env,
        );

        assert.equal(run.code, 1, `exit code; stderr: ${run.stderr.slice(-2000)}`);
        const summary = await summaryOf(machine.dir);
        assert.equal(summary.browser.rendered, 0);
        assert.equal(summary.deadLetterByReason['renderer-unavailable'], 20);

        const note = run.stdout.split('\n').filter(Boolean).at(-1) ?? '';
        assert.match(
            note,
            new RegExp(
                '^ {2}chromium {3}no Chromium found \\(`npx playwright install chromium` not run: ' +
                    'its download host is out of reach \\(127\\.0\\.0\\.1:9: ECONNREFUSED\\)',
            ),
        );
        assert.match(
            note,
            new RegExp(
                '; to render pages that need a browser, install one \\(Debian\\/Ubuntu: ' +
                    '`sudo apt-get install -y chromium`; elsewhere: `npx playwright install chromium`\\) ' +
                    'or point CHROMIUM_PATH at a Chromium or Chrome binary$',
            ),
        );
        if (asRoot) {
            assert.deepEqual(await machine.aptCalls(), [
                'install -y -qq --no-install-recommends chromium fonts-liberation',
                'update -qq',
                'install -y -qq --no-install-recommends chromium fonts-liberation',
            ]);
            assert.ok(
                note.includes(`\`${APT_INSTALL}\` failed (exit 100: E: Unable to locate package chromium)`),
                note,
            );
        } else {
            assert.ok(note.includes(`\`${APT_INSTALL}\` not run: needs root`), note);
        }
    });
});

describe('a crawl of a site (not the demo) on a machine without Chromium', () => {
    it(`installs nothing and says once, at the start, what to run; \
the pages that need a browser go to dead-letter`, async (t) => {
        const shop = await startShop({
            seed: 3,
            products: 10,
            scriptOnlyRate: 0.5,
            transientFailureRate: 0,
            notFoundLinks: 0,
        });
        t.after(() => shop.close());
        const downloadHost = await emptyDownloadHost(t);
        const machine = await machineWithoutChromium(t, downloadHost.url);
        const storageDir = join(machine.dir, 'storage');
        const run = await runCli(
            ['--site', 'demo-shop', '--start-url', `${shop.url}/`, '--storage-dir', storageDir],
            machine.env,
        );

        assert.equal(run.code, 1, `exit code; stderr: ${run.stderr.slice(-2000)}`);
        const messages = logMessages(run.stderr);
        const warnings = messages.filter((message) => message.startsWith('no Chromium found: '));
        assert.deepEqual(warnings, [
            'no Chromium found: pages that need a browser will go ' +
                'to dead-letter as renderer-unavailable; to render them, ' +
                'install one (Debian/Ubuntu: `sudo apt-get install -y chromium`; elsewhere: `npx ' +
                'playwright install chromium`) or point CHROMIUM_PATH at a Chromium or Chrome binary',
        ]);
        assert.ok(
            messages.indexOf(warnings[0]!) < messages.findIndex((message) => message.startsWith('crawling demo-shop')),
            'said before the crawl starts',
        );
        assert.deepEqual(await machine.aptCalls(), []);
        assert.deepEqual(downloadHost.requests, []);
        assert.doesNotMatch(run.stdout, /^ {2}chromium /m);

        const entries = await readDataset<{ reason: string }>(storageDir, 'demo-shop-dead-letter');
        assert.equal(entries.length, shop.products.filter((product) => product.scriptOnly).length);
        assert.ok(entries.every((entry) => entry.reason === 'renderer-unavailable'));
    });
});
