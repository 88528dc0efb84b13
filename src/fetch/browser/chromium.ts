/**
 * Finding and launching Chromium for the browser stage.
 * Playwright's own browser download is not available everywhere, so a system Chromium comes first.
 * Playwright itself (~80 MB of memory) is loaded only when it is used here, so a crawl that renders
 * no page never loads it (see browserStage.ts).
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter } from 'node:path';

/**
 * System locations tried after `CHROMIUM_PATH`, before Playwright's bundled browser.
 * `DRAGNET_SYSTEM_CHROMIUM_PATHS` (a list like PATH) replaces them: a test points it at an empty
 * directory to see what a machine without a browser does (test/fetch/browser/provisionChromium.test.ts).
 */
const SYSTEM_CHROMIUM_PATHS = [
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
    '/usr/bin/google-chrome-stable',
    '/usr/bin/google-chrome',
    '/snap/bin/chromium',
    '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
    '/Applications/Chromium.app/Contents/MacOS/Chromium',
];

/**
 * Flags for a headless Chromium in containers and on closed networks. Chromium phones home on its
 * own (component updates, sign-in, network time, safe browsing): the last group turns that off or
 * points it at a dead loopback port, so the browser asks only for the pages we crawl.
 *
 * Three features cost a crawl that opens a context per session (issue 21's profile, Chromium 156):
 * `SpareRendererForSitePerProcess` keeps a spare renderer warm for the last context that navigated,
 * so with pages of several contexts navigating in turn it started (and killed) a renderer process
 * per navigation, 233 for 200 renders; `WebUIOmniboxPopup` and `WebUIOmniboxAimPopup` give every
 * context of headless Chromium a hidden omnibox popup in a WebUI renderer of its own, ~50 MB each.
 */
export const CHROMIUM_ARGS = [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-dev-shm-usage',
    '--no-first-run',
    '--disable-quic',
    '--in-process-gpu',
    '--js-flags=--optimize-for-size',
    '--disable-sync',
    '--disable-extensions',
    '--disable-background-networking',
    '--disable-component-update',
    '--component-updater=url-source=http://127.0.0.1:9/',
    '--gaia-url=http://127.0.0.1:9',
    '--no-pings',
    '--disable-domain-reliability',
    '--disable-client-side-phishing-detection',
    '--disable-features=OptimizationHints,Translate,MediaRouter,AutofillServerCommunication,' +
        'CertificateTransparencyComponentUpdater,NetworkTimeServiceQuerying,SpareRendererForSitePerProcess,' +
        'WebUIOmniboxPopup,WebUIOmniboxAimPopup',
];

/** How to get a browser, for the message shown when none is found. */
export const INSTALL_HINT =
    'install one (Debian/Ubuntu: `sudo apt-get install -y chromium`; elsewhere: `npx playwright install chromium`) ' +
    'or point CHROMIUM_PATH at a Chromium or Chrome binary';

/**
 * The Chromium binary to use: `CHROMIUM_PATH`, else a system Chromium, else Playwright's
 * bundled browser when it was downloaded; undefined when there is none.
 */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | undefined {
    if (env.CHROMIUM_PATH) return existsSync(env.CHROMIUM_PATH) ? env.CHROMIUM_PATH : undefined;
    const systemPaths = env.DRAGNET_SYSTEM_CHROMIUM_PATHS
        ? env.DRAGNET_SYSTEM_CHROMIUM_PATHS.split(delimiter)
        : SYSTEM_CHROMIUM_PATHS;
    const system = systemPaths.find((path) => existsSync(path));
    if (system) return system;
    const bundled = playwright().chromium.executablePath();
    return existsSync(bundled) ? bundled : undefined;
}

/**
 * Why pages cannot be rendered, or undefined when Chromium starts. Checked by launching it once
 * before the browser stage runs, so a missing or broken browser is one clear message rather
 * than a crash in the middle of the crawl.
 */
export async function browserProblem(executablePath: string | undefined): Promise<string | undefined> {
    if (!executablePath) return `no Chromium found; ${INSTALL_HINT}`;
    const reason = await launchFailure(executablePath);
    return reason && `Chromium at ${executablePath} does not start (${reason}); ${INSTALL_HINT}`;
}

/** The first line of the error Chromium gives when launched once, or undefined when it starts. */
export async function launchFailure(executablePath: string): Promise<string | undefined> {
    try {
        const browser = await playwright().chromium.launch({
            executablePath,
            args: CHROMIUM_ARGS,
            headless: true,
            timeout: 30_000,
        });
        await browser.close();
        return undefined;
    } catch (error) {
        return (error instanceof Error ? error.message : String(error)).split('\n')[0];
    }
}

/** Playwright, loaded on first use (Node caches it after that). */
function playwright(): typeof import('playwright') {
    return createRequire(import.meta.url)('playwright') as typeof import('playwright');
}
