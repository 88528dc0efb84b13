/**
 * Getting a Chromium onto a machine that has none, the one way both `npm test` (test/run.sh) and
 * the built-in demo of `npm start` (main.ts) do it. In order: a Chromium already there
 * (findChromium); else Playwright's own download, when its host can be reached; else Debian's
 * package, when we are root and have apt-get; else nothing, and a note saying what to run. Each
 * step says what it does as it starts, and the result lists every command with how it ended, so a
 * closing note can say exactly what was run.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { connect } from 'node:net';
import { delimiter, join } from 'node:path';
import { findChromium, INSTALL_HINT, launchFailure } from './chromium.js';

/** A command and its arguments. */
type Command = readonly [string, ...string[]];

const PLAYWRIGHT_INSTALL: Command = ['npx', 'playwright', 'install', 'chromium'];
/** The host of Playwright's first download mirror. */
const PLAYWRIGHT_DOWNLOAD_HOST = 'https://cdn.playwright.dev';
/**
 * How long the download host may take to accept a connection. Without this look first, an offline
 * `npx playwright install` fails in seconds where DNS says no, but retries for 2.5 minutes (5
 * attempts of 30 s) on a network that drops packets.
 */
const REACH_MILLIS = 3000;
/** The Dockerfile's packages: the browser and the fonts its pages are drawn with. */
const APT_INSTALL: Command = [
    'apt-get',
    'install',
    '-y',
    '-qq',
    '--no-install-recommends',
    'chromium',
    'fonts-liberation',
];
const APT_UPDATE: Command = ['apt-get', 'update', '-qq'];
const APT_ENV = { DEBIAN_FRONTEND: 'noninteractive' };
/** Where Debian's `chromium` package puts the browser. */
const DEBIAN_CHROMIUM = '/usr/bin/chromium';

export interface ProvisionOptions {
    /** Told what is being done, as each step starts. */
    say: (line: string) => void;
    /** Default: process.env. */
    env?: NodeJS.ProcessEnv;
}

/** A command, as it would be typed in a shell, and how it ended (`not run: why` when it was not). */
export interface Attempt {
    command: string;
    outcome: string;
}

export interface Provisioned {
    /** The Chromium to render with; undefined when none could be had. */
    path: string | undefined;
    /** What was tried, in order; empty when a Chromium was found straight away. */
    attempts: Attempt[];
    /** One line: what was run and where the browser is, or what to run to get one. */
    note: string;
}

export async function provisionChromium({ say, env = process.env }: ProvisionOptions): Promise<Provisioned> {
    const found = findChromium(env);
    if (found) return { path: found, attempts: [], note: `Chromium at ${found}` };
    if (env.CHROMIUM_PATH) {
        // The user chose a browser: installing another would hide that the choice is wrong.
        return {
            path: undefined,
            attempts: [],
            note:
                `CHROMIUM_PATH is ${env.CHROMIUM_PATH}, which does not exist; point it at a Chromium or Chrome ` +
                `binary, or unset it`,
        };
    }
    const attempts: Attempt[] = [];
    const path = (await fromPlaywright(env, say, attempts)) ?? (await fromDebian(env, say, attempts));
    const tried = attempts.map(({ command, outcome }) => `\`${command}\` ${outcome}`).join('; ');
    const note = path
        ? `no Chromium was found: ${tried}`
        : `no Chromium found (${tried}); to render pages that need a browser, ${INSTALL_HINT}`;
    return { path, attempts, note };
}

async function fromPlaywright(
    env: NodeJS.ProcessEnv,
    say: ProvisionOptions['say'],
    attempts: Attempt[],
): Promise<string | undefined> {
    const command = PLAYWRIGHT_INSTALL.join(' ');
    if (isSet(env.PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD)) {
        attempts.push({ command, outcome: 'not run: PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD is set' });
        return undefined;
    }
    const unreachable = await unreachableDownload(env);
    if (unreachable) {
        attempts.push({ command, outcome: `not run: its download host is out of reach (${unreachable})` });
        return undefined;
    }
    say(`no Chromium found; downloading Playwright's Chromium (\`${command}\`, about 150 MB) …`);
    const result = await run(PLAYWRIGHT_INSTALL, env);
    const path = result.ok ? findChromium(env) : undefined;
    const failure = result.ok ? (path ? await launchFailure(path) : 'no browser where Playwright looks') : result.why;
    attempts.push({ command, outcome: failure ? `failed (${failure})` : `succeeded: ${path}` });
    if (failure) say(`\`${command}\` failed (${failure}); trying the next way`);
    return failure ? undefined : path;
}

/**
 * Debian's package, installed from the package lists already on the machine when they have it, so
 * an install needs no `apt-get update` (and no network when the package is cached); the lists are
 * refreshed only when that fails.
 */
async function fromDebian(
    env: NodeJS.ProcessEnv,
    say: ProvisionOptions['say'],
    attempts: Attempt[],
): Promise<string | undefined> {
    const install = `DEBIAN_FRONTEND=noninteractive ${APT_INSTALL.join(' ')}`;
    if (!onPath('apt-get', env)) return undefined;
    if (process.getuid?.() !== 0) {
        attempts.push({ command: install, outcome: 'not run: needs root' });
        return undefined;
    }
    const aptEnv = { ...env, ...APT_ENV };
    say(`no Chromium found; installing Debian's chromium (\`${install}\`) …`);
    let result = await run(APT_INSTALL, aptEnv);
    if (!result.ok) {
        attempts.push({ command: install, outcome: `failed (${result.why})` });
        say(
            `the install failed (${result.why}); refreshing the package lists (\`${APT_UPDATE.join(' ')}\`) and ` +
                `trying again …`,
        );
        const update = await run(APT_UPDATE, aptEnv);
        attempts.push({ command: APT_UPDATE.join(' '), outcome: update.ok ? 'succeeded' : `failed (${update.why})` });
        if (!update.ok) return undefined;
        result = await run(APT_INSTALL, aptEnv);
    }
    const path = result.ok && existsSync(DEBIAN_CHROMIUM) ? DEBIAN_CHROMIUM : undefined;
    attempts.push({
        command: install,
        outcome: path ? `succeeded: ${path}` : `failed (${result.ok ? `no ${DEBIAN_CHROMIUM} after it` : result.why})`,
    });
    if (path) say(`Debian's chromium is installed: ${path}`);
    return path;
}

/**
 * Why Playwright's download cannot start, found by opening one connection to where its CLI would
 * connect: the proxy when one is set, else the download host (`PLAYWRIGHT_DOWNLOAD_HOST` when set).
 * Undefined when the connection opens.
 */
function unreachableDownload(env: NodeJS.ProcessEnv): Promise<string | undefined> {
    const proxy = env.https_proxy || env.HTTPS_PROXY || env.all_proxy || env.ALL_PROXY;
    const address =
        proxy || env.PLAYWRIGHT_CHROMIUM_DOWNLOAD_HOST || env.PLAYWRIGHT_DOWNLOAD_HOST || PLAYWRIGHT_DOWNLOAD_HOST;
    if (!URL.canParse(address)) return Promise.resolve(`${address} is not a URL`);
    const target = new URL(address);
    const host = target.hostname;
    const port = Number(target.port) || (target.protocol === 'http:' ? 80 : 443);
    return new Promise((resolve) => {
        const socket = connect({ host, port });
        const done = (why: string | undefined) => {
            clearTimeout(timer);
            socket.destroy();
            resolve(why);
        };
        const timer = setTimeout(
            () => done(`${host}:${port} did not answer in ${REACH_MILLIS / 1000} s`),
            REACH_MILLIS,
        );
        socket.once('connect', () => done(undefined));
        socket.once('error', (error: NodeJS.ErrnoException) => done(`${host}:${port}: ${error.code ?? error.message}`));
    });
}

/** Runs a command with its output held back; a failure says its exit code and the line that says why. */
function run([command, ...args]: Command, env: NodeJS.ProcessEnv): Promise<{ ok: boolean; why: string }> {
    return new Promise((resolve) => {
        const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
        let output = '';
        const keep = (chunk: string) => {
            output = (output + chunk).slice(-20_000);
        };
        child.stdout.setEncoding('utf8').on('data', keep);
        child.stderr.setEncoding('utf8').on('data', keep);
        child.on('error', (error) => resolve({ ok: false, why: error.message }));
        child.on('close', (code) => resolve({ ok: code === 0, why: `exit ${code}: ${reasonIn(output)}` }));
    });
}

/** The line of a command's output that says why it failed: apt's `E:` or Node's `Error:` line, else the last one. */
function reasonIn(output: string): string {
    const lines = output
        .split('\n')
        .map((line) => line.trim())
        .filter(Boolean);
    return lines.find((line) => /^(E|Error): /.test(line)) ?? lines.at(-1) ?? 'no output';
}

function onPath(name: string, env: NodeJS.ProcessEnv): boolean {
    return (env.PATH ?? '').split(delimiter).some((dir) => {
        if (!dir) return false;
        try {
            accessSync(join(dir, name), constants.X_OK);
            return true;
        } catch {
            return false;
        }
    });
}

/** Read as Playwright reads its boolean variables. */
function isSet(value: string | undefined): boolean {
    return !!value && value !== '0' && value !== 'false';
}
