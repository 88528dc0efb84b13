import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { chromium } from 'playwright';

import { CHROMIUM_ARGS, findChromium } from '../../../src/fetch/browser/chromium.js';
import {
    brands,
    type ChromeRelease,
    chromeRelease,
    FALLBACK_RELEASE,
    parseVersion,
    secChUa,
} from '../../../src/fetch/egress/chromeRelease.js';

const release = (product: ChromeRelease['product'], major: number): ChromeRelease => ({
    product,
    fullVersion: `${major}.0.0.0`,
    major,
});

describe('parseVersion', () => {
    it('reads Chromium’s and Google Chrome’s --version, and nothing else', () => {
        assert.deepEqual(parseVersion('Chromium 156.0.8078.129 built on Debian GNU/Linux 12 (bookworm)\n'), {
            product: 'Chromium',
            fullVersion: '156.0.8078.129',
            major: 156,
        });
        assert.deepEqual(parseVersion('Google Chrome 147.0.7727.55 \n'), {
            product: 'Google Chrome',
            fullVersion: '147.0.7727.55',
            major: 147,
        });
        for (const garbage of [
            '',
            'Chromium',
            'Mozilla Firefox 140.0',
            'Chromium 156 built on',
            'bash: chromium: not found',
        ])
            assert.equal(parseVersion(garbage), undefined, garbage);
    });
});

describe('brands', () => {
    it('gives Chromium’s own two brands: 156 as Chromium 156 sends them, 84 as Chromium’s unit test has them', () => {
        assert.equal(secChUa(brands(release('Chromium', 156))), '"Not:A-Brand";v="8", "Chromium";v="156"');
        // components/embedder_support/user_agent_utils_unittest.cc: GetGreasedUserAgentBrandVersion(84)
        // is "Not;A=Brand" v8, and 84 puts the GREASE brand first.
        assert.equal(secChUa(brands(release('Chromium', 84))), '"Not;A=Brand";v="8", "Chromium";v="84"');
        assert.equal(secChUa(brands(release('Chromium', 131))), '"Chromium";v="131", "Not_A Brand";v="24"');
    });

    // Real Google Chrome requests, copied from browsers' devtools into public code (found with the
    // code search's exact-string lookup, each in several unrelated repositories).
    it('gives Google Chrome’s three brands as real Chrome 120, 124, 131 and 147 sent them', () => {
        const real: Record<number, string> = {
            120: '"Not_A Brand";v="8", "Chromium";v="120", "Google Chrome";v="120"',
            124: '"Chromium";v="124", "Google Chrome";v="124", "Not-A.Brand";v="99"',
            131: '"Google Chrome";v="131", "Chromium";v="131", "Not_A Brand";v="24"',
            147: '"Google Chrome";v="147", "Not.A/Brand";v="8", "Chromium";v="147"',
        };
        for (const [major, header] of Object.entries(real))
            assert.equal(secChUa(brands(release('Google Chrome', Number(major)))), header);
    });
});

describe('chromeRelease', () => {
    it('is undefined without a browser, and the fallback is a release of its own', async () => {
        assert.equal(await chromeRelease('/nonexistent/chromium'), undefined);
        assert.deepEqual(parseVersion(`Chromium ${FALLBACK_RELEASE.fullVersion}`), FALLBACK_RELEASE);
    });

    const executablePath = findChromium();
    it('gives the machine’s Chromium, whose sec-ch-ua is what brands() computes', {
        skip: !executablePath && 'no Chromium on this machine',
        timeout: 60_000,
    }, async (t) => {
        const path = executablePath ?? '';
        const found = await chromeRelease(path);
        const text = execFileSync(path, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
        assert.ok(found, text);
        assert.ok(text.startsWith(`${found.product} ${found.fullVersion}`), text);
        assert.equal(found.major, Number(found.fullVersion.split('.')[0]));
        assert.equal(await chromeRelease(path), found, 'run once per path');

        const sent: string[] = [];
        const server = createServer((request, response) => {
            if (request.url === '/') sent.push(String(request.headers['sec-ch-ua']));
            response.end('<title>hi</title>');
        });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        t.after(() => server.close());
        const browser = await chromium.launch({ executablePath: path, args: CHROMIUM_ARGS });
        t.after(() => browser.close());
        const page = await browser.newPage();
        await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
        assert.deepEqual(sent, [secChUa(brands(found))]);
    });
});
