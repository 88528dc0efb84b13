/**
 * A network of the test's own: Redis, PostgreSQL and each worker on a host of its own, a Linux
 * network namespace joined to a bridge by a veth link, so that what crosses the network can be cut,
 * slowed or lost (`ip link`, `tc netem`) for one host at a time. The bridge, in this namespace, is
 * the hosts' gateway, and the fixture shop listens on its address. The addresses are a /24 of
 * 10.0.0.0/8 that no interface of the machine has; everything (namespaces, links, the bridge, the
 * servers and their directories) is removed by `close()`.
 *
 * Needs root, `ip` and `tc` (iproute2), redis-server and PostgreSQL's server binaries;
 * `netWorldProblem` says what is missing, for a test to skip with; `netemProblem`, whether the
 * kernel can delay and drop packets too.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFile, chmod, chown, mkdtemp, rm } from 'node:fs/promises';
import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startScript, type RunningCli } from './cli.js';

/** How long a worker of a network world may run before it is taken for hung. */
const WORKER_TIMEOUT_MS = 300_000;

const PG_BIN = (() => {
    const versions = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').sort() : [];
    const latest = versions.at(-1);
    return latest ? `/usr/lib/postgresql/${latest}/bin` : undefined;
})();

/** Why a network world cannot be made on this machine; undefined when it can. */
export const netWorldProblem: string | undefined = (() => {
    if (process.getuid?.() !== 0) return 'network namespaces need root';
    for (const command of ['ip', 'tc', 'redis-server', 'runuser', 'setpriv'])
        if (!commandExists(command)) return `${command} is not installed`;
    if (!PG_BIN || !existsSync(join(PG_BIN, 'initdb'))) return "PostgreSQL's server binaries are not installed";
    return undefined;
})();

/** Why `netem` cannot delay or drop packets here (a kernel without sch_netem); undefined when it can. */
export const netemProblem: string | undefined = (() => {
    if (netWorldProblem) return netWorldProblem;
    const probe = `dnprobe${randomBytes(2).toString('hex')}`;
    try {
        sh('ip', ['netns', 'add', probe]);
        sh('ip', ['netns', 'exec', probe, 'tc', 'qdisc', 'add', 'dev', 'lo', 'root', 'netem', 'delay', '1ms']);
        return undefined;
    } catch {
        return "this kernel has no netem (sch_netem): tc cannot delay or drop a link's packets";
    } finally {
        quietly('ip', ['netns', 'del', probe]);
    }
})();

export interface NetHost {
    /** The network namespace. */
    netns: string;
    address: string;
    /** The link's end on the bridge side: down, the host is cut off. */
    link: string;
}

export interface NetWorld {
    /** The bridge's address: the hosts' way to this namespace, where the shop listens. */
    gateway: string;
    redis: NetHost & { url: string; restart(): Promise<void> };
    postgres: NetHost & { url: string; restart(): Promise<void> };
    workers: NetHost[];
    /** Starts the CLI on a worker's host, with `env` added to its environment. */
    startWorker(index: number, args: string[], env?: NodeJS.ProcessEnv): RunningCli;
    /** Cuts `host` off the network: its link goes down, both ways. */
    cut(host: NetHost): void;
    heal(host: NetHost): void;
    /** Has `tc netem` delay and drop `host`'s packets both ways, e.g. `['delay', '40ms', 'loss', '5%']`. */
    netem(host: NetHost, spec: string[]): void;
    close(): Promise<void>;
}

/** Redis, PostgreSQL and `workers` worker hosts on a bridge of their own. */
export async function openNetWorld(workers: number): Promise<NetWorld> {
    if (netWorldProblem) throw new Error(`no network world here: ${netWorldProblem}`);
    const id = randomBytes(2).toString('hex');
    const subnet = freeSubnet();
    const bridge = `dnb${id}`;
    const dir = await mkdtemp(join(tmpdir(), 'dragnet-net-'));
    const hosts: NetHost[] = [];
    const servers = new Map<string, ChildProcess>();
    const close = async () => {
        for (const server of servers.values()) server.kill('SIGKILL');
        // A link is deleted with its peer; a namespace's own go with it only once the kernel has let it go.
        for (const host of hosts) {
            quietly('ip', ['link', 'del', host.link]);
            quietly('ip', ['netns', 'del', host.netns]);
        }
        quietly('ip', ['link', 'del', bridge]);
        await rm(dir, { recursive: true, force: true });
    };
    try {
        sh('ip', ['link', 'add', bridge, 'type', 'bridge']);
        sh('ip', ['addr', 'add', `${subnet}.1/24`, 'dev', bridge]);
        sh('ip', ['link', 'set', bridge, 'up']);
        const addHost = (name: string, n: number): NetHost => {
            const host = { netns: `dn${id}${name}`, address: `${subnet}.${10 + n}`, link: `dnv${id}${n}` };
            hosts.push(host);
            sh('ip', ['netns', 'add', host.netns]);
            sh('ip', ['link', 'add', host.link, 'type', 'veth', 'peer', 'name', `dnp${id}${n}`]);
            sh('ip', ['link', 'set', `dnp${id}${n}`, 'netns', host.netns, 'name', 'eth0']);
            sh('ip', ['link', 'set', host.link, 'master', bridge, 'up']);
            inside(host, 'ip', ['addr', 'add', `${host.address}/24`, 'dev', 'eth0']);
            inside(host, 'ip', ['link', 'set', 'eth0', 'up']);
            inside(host, 'ip', ['link', 'set', 'lo', 'up']);
            return host;
        };
        const redisHost = addHost('r', 0);
        const pgHost = addHost('p', 1);
        const workerHosts = Array.from({ length: workers }, (_, n) => addHost(`w${n}`, 2 + n));

        const startRedis = () => {
            const server = spawn(
                'ip',
                [
                    ...['netns', 'exec', redisHost.netns, 'redis-server'],
                    ...[
                        '--bind',
                        redisHost.address,
                        '--port',
                        '6379',
                        '--protected-mode',
                        'no',
                        '--dir',
                        dir,
                        '--save',
                        '',
                    ],
                    ...['--appendonly', 'yes', '--appendfsync', 'everysec', '--maxmemory-policy', 'noeviction'],
                ],
                { stdio: 'ignore' },
            );
            servers.set('redis', server);
        };
        const pgData = join(dir, 'pg');
        await chmod(dir, 0o755);
        sh('mkdir', ['-p', pgData]);
        await chown(pgData, uidOf('postgres'), gidOf('postgres'));
        sh('runuser', ['-u', 'postgres', '--', join(PG_BIN!, 'initdb'), '-D', pgData, '--auth=trust']);
        await appendFile(join(pgData, 'pg_hba.conf'), `host all all ${subnet}.0/24 trust\n`);
        const startPostgres = () => {
            const server = spawn(
                'ip',
                [
                    // setpriv execs PostgreSQL as its user (runuser would stay between, and keep our signals from it).
                    ...[
                        'netns',
                        'exec',
                        pgHost.netns,
                        'setpriv',
                        '--reuid=postgres',
                        '--regid=postgres',
                        '--init-groups',
                    ],
                    ...[join(PG_BIN!, 'postgres'), '-D', pgData, '-h', pgHost.address, '-p', '5432', '-k', pgData],
                    ...['-c', 'fsync=off', '-c', 'max_connections=200'],
                ],
                { stdio: 'ignore' },
            );
            servers.set('postgres', server);
        };
        const redisReady = () => untilReady(`Redis at ${redisHost.address}`, () => listens(redisHost, 6379));
        // PostgreSQL listens before it takes queries ("the database system is starting up").
        const postgresReady = () => untilReady(`PostgreSQL at ${pgHost.address}`, () => acceptsQueries(pgHost));
        startRedis();
        startPostgres();
        await redisReady();
        await postgresReady();

        const restart = async (name: string, start: () => void, ready: () => Promise<void>) => {
            const server = servers.get(name)!;
            const exited = new Promise((resolve) => server.once('exit', resolve));
            server.kill(name === 'postgres' ? 'SIGINT' : 'SIGTERM'); // each one's own clean, fast shutdown
            await exited;
            start();
            await ready();
        };
        return {
            gateway: `${subnet}.1`,
            redis: {
                ...redisHost,
                url: `redis://${redisHost.address}:6379`,
                restart: () => restart('redis', startRedis, redisReady),
            },
            postgres: {
                ...pgHost,
                url: `postgres://postgres@${pgHost.address}:5432/postgres`,
                restart: () => restart('postgres', startPostgres, postgresReady),
            },
            workers: workerHosts,
            // A worker cut off for tens of seconds hears from Redis and PostgreSQL again only at its TCP
            // connections' next retransmission, which backs off to tens of seconds: on a loaded machine
            // it took the cut-off worker of a CI run past the usual 120 s.
            startWorker: (index, args, env = {}) =>
                startScript('src/main.ts', args, env, undefined, workerHosts[index]!.netns, WORKER_TIMEOUT_MS),
            cut: (host) => sh('ip', ['link', 'set', host.link, 'down']),
            heal: (host) => sh('ip', ['link', 'set', host.link, 'up']),
            netem: (host, spec) => {
                sh('tc', ['qdisc', 'replace', 'dev', host.link, 'root', 'netem', ...spec]);
                inside(host, 'tc', ['qdisc', 'replace', 'dev', 'eth0', 'root', 'netem', ...spec]);
            },
            close,
        };
    } catch (error) {
        await close();
        throw error;
    }
}

function sh(command: string, args: string[]): void {
    execFileSync(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

function quietly(command: string, args: string[]): void {
    try {
        sh(command, args);
    } catch {
        // already gone
    }
}

function inside(host: NetHost, command: string, args: string[]): void {
    sh('ip', ['netns', 'exec', host.netns, command, ...args]);
}

function commandExists(command: string): boolean {
    try {
        execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
        return true;
    } catch {
        return false;
    }
}

const uidOf = (user: string) => Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
const gidOf = (user: string) => Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());

/** A 10.x.y.0/24 that no address of the machine is in. */
function freeSubnet(): string {
    const taken = execFileSync('ip', ['-4', '-o', 'addr'], { encoding: 'utf8' });
    for (;;) {
        const subnet = `10.${200 + Math.floor(Math.random() * 50)}.${Math.floor(Math.random() * 256)}`;
        if (!taken.includes(` ${subnet}.`)) return subnet;
    }
}

/** Resolves once `ready()` says so, asked every 100 ms; fails after 30 s. */
async function untilReady(what: string, ready: () => Promise<boolean>): Promise<void> {
    for (const started = Date.now(); !(await ready()); await new Promise((resolve) => setTimeout(resolve, 100)))
        if (Date.now() - started > 30_000) throw new Error(`${what} is not ready after 30 s`);
}

/** Whether something listens on `host`'s `port`, as seen from this namespace. */
async function listens(host: NetHost, port: number): Promise<boolean> {
    const { connect } = await import('node:net');
    return new Promise<boolean>((resolve) => {
        const socket = connect({ host: host.address, port });
        socket.once('connect', () => {
            socket.destroy();
            resolve(true);
        });
        socket.once('error', () => resolve(false));
    });
}

/** Whether PostgreSQL on `host` accepts connections (pg_isready exits 0). */
function acceptsQueries(host: NetHost): Promise<boolean> {
    return new Promise((resolve) =>
        execFile(join(PG_BIN!, 'pg_isready'), ['-q', '-h', host.address, '-p', '5432'], (error) => resolve(!error)),
    );
}
