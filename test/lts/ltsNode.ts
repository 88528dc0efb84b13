/**
 * Node's current LTS line, for running dragnet under it beside the Node this machine has: the
 * version pinned in package.json (`config.ltsNode`), taken from the npm registry's
 * `node-<platform>-<arch>` package (the binary with its headers; the registry is the one network
 * CI reaches), and better-sqlite3's native module built for it. Both are kept in
 * `~/.cache/dragnet/` (or `$XDG_CACHE_HOME/dragnet/`), so only the first run pays for them.
 *
 * The project's node_modules hold better-sqlite3 built for the Node that installed them. Under the
 * LTS Node, `nativeAddon.mjs` (preloaded through NODE_OPTIONS, so child processes get it too)
 * resolves that module's `.node` file to the one built here; nothing else is swapped.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { arch, homedir, platform } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '../helpers/cli.js';

const run = promisify(execFile);

export interface LtsNode {
    version: string;
    /** The `node` binary. */
    node: string;
    /** The environment that runs `npm` and the project's scripts under it. */
    env: NodeJS.ProcessEnv;
}

/** The LTS version package.json pins. */
export function ltsVersion(): string {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { config?: { ltsNode?: string } };
    const version = manifest.config?.ltsNode;
    if (!version) throw new Error('package.json has no config.ltsNode');
    return version;
}

function cacheDir(): string {
    return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'dragnet');
}

/** The LTS Node with better-sqlite3 built for it, fetched and built once, then taken from the cache. */
export async function provisionLtsNode(version = ltsVersion()): Promise<LtsNode> {
    const home = join(cacheDir(), `node-${version}-${platform()}-${arch()}`);
    const node = join(home, 'bin', 'node');
    if (!existsSync(node)) await unpackInto(home, `node-${platform()}-${arch()}@${version}`);
    const addon = await buildBetterSqlite3(home, node);
    const preload = join(ROOT, 'test', 'lts', 'nativeAddon.mjs');
    return {
        version,
        node,
        env: {
            ...process.env,
            PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ''}`,
            NODE_OPTIONS: `--import=${preload}`,
            LTS_BETTER_SQLITE3_ADDON: addon,
            LTS_NODE_VERSION: version,
        },
    };
}

/** Unpacks an npm package into `target`, atomically: a run killed halfway leaves no half of it. */
async function unpackInto(target: string, spec: string): Promise<void> {
    await mkdir(dirname(target), { recursive: true });
    const work = await mkdtemp(`${target}.partial-`);
    try {
        const { stdout } = await run('npm', ['pack', spec, '--silent', '--pack-destination', work], { cwd: work });
        const tarball = join(work, stdout.trim().split('\n').pop() ?? '');
        await run('tar', ['xzf', tarball, '-C', work]);
        await rename(join(work, 'package'), target);
    } finally {
        await rm(work, { recursive: true, force: true });
    }
}

/**
 * better-sqlite3's module compiled against the LTS Node's headers. node-gyp is npm's own; `--nodedir`
 * points it at the headers the package ships, so it downloads nothing. It must be given, not left to
 * npm: Debian's npm sets `nodedir=/usr` (its own Node 20's headers) and passes it to scripts as
 * `npm_config_nodedir`, which built a module the LTS Node refuses (NODE_MODULE_VERSION 115, not its own).
 */
async function buildBetterSqlite3(home: string, node: string): Promise<string> {
    const source = join(ROOT, 'node_modules', 'better-sqlite3');
    const { version: moduleVersion } = JSON.parse(readFileSync(join(source, 'package.json'), 'utf8')) as {
        version: string;
    };
    const built = join(home, `better-sqlite3-${moduleVersion}`);
    const addon = join(built, 'build', 'Release', 'better_sqlite3.node');
    if (await loads(node, addon)) return addon;

    const work = `${built}.partial`;
    await rm(work, { recursive: true, force: true });
    await cp(source, work, { recursive: true, filter: (path) => !path.startsWith(join(source, 'build')) });
    const { npm_config_nodedir: _npmNodedir, ...env } = process.env;
    await run(node, [nodeGyp(), 'rebuild', '--release', `--nodedir=${home}`, '--jobs=2'], {
        cwd: work,
        env,
        maxBuffer: 64 << 20,
    });
    const fresh = addon.replace(built, work);
    if (!(await loads(node, fresh)))
        throw new Error(`better-sqlite3 built in ${work} does not load under Node ${node}`);
    await rm(built, { recursive: true, force: true });
    await rename(work, built);
    return addon;
}

/**
 * Whether `node` loads the module: a cached build for another Node is built again, and a fresh one that
 * does not load fails here, not in the demo as a storage error.
 */
async function loads(node: string, addon: string): Promise<boolean> {
    if (!existsSync(addon)) return false;
    const load = `process.dlopen({ exports: {} }, ${JSON.stringify(addon)})`;
    return run(node, ['-e', load], { env: {} }).then(
        () => true,
        () => false,
    );
}

/** npm's node-gyp: the one `npm` names to scripts, else the one beside this Node's npm. */
function nodeGyp(): string {
    const named = process.env.npm_config_node_gyp;
    if (named && existsSync(named)) return named;
    for (const prefix of [join(dirname(process.execPath), '..', 'lib'), '/usr/lib', '/usr/local/lib']) {
        const candidate = join(prefix, 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
        if (existsSync(candidate)) return candidate;
    }
    throw new Error("npm's node-gyp not found: set npm_config_node_gyp to node-gyp/bin/node-gyp.js");
}
