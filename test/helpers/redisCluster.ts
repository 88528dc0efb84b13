/**
 * A Redis Cluster of the test's own on loopback: `primaries` redis-server processes in cluster mode,
 * each on a free port (and its cluster bus on that port + 10000), joined by `redis-cli --cluster
 * create` with the slots split among them and no replicas. Nothing is persisted; `close()` stops the
 * servers and removes their directory.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';

const run = promisify(execFile);

export interface RedisClusterWorld {
    /** `redis://127.0.0.1:PORT` of the first node: what a worker is given. */
    url: string;
    ports: number[];
    close(): Promise<void>;
}

export async function startRedisCluster(primaries = 3): Promise<RedisClusterWorld> {
    const dir = await mkdtemp(join(tmpdir(), 'dragnet-redis-cluster-'));
    const servers: ChildProcess[] = [];
    const close = async () => {
        for (const server of servers) server.kill('SIGKILL');
        await rm(dir, { recursive: true, force: true });
    };
    try {
        const ports: number[] = [];
        while (ports.length < primaries) {
            const port = 20_000 + Math.floor(Math.random() * 20_000);
            if (!ports.includes(port) && (await isFree(port)) && (await isFree(port + 10_000))) ports.push(port);
        }
        for (const port of ports) {
            const server = spawn(
                'redis-server',
                [
                    ...['--port', `${port}`, '--bind', '127.0.0.1', '--cluster-enabled', 'yes'],
                    ...['--cluster-config-file', `nodes-${port}.conf`, '--dir', dir],
                    ...['--save', '', '--appendonly', 'no', '--cluster-node-timeout', '5000'],
                ],
                { stdio: 'ignore' },
            );
            servers.push(server);
        }
        await Promise.all(ports.map((port) => answers(port)));
        await run('redis-cli', [
            '--cluster',
            'create',
            ...ports.map((port) => `127.0.0.1:${port}`),
            '--cluster-replicas',
            '0',
            '--cluster-yes',
        ]);
        await Promise.all(ports.map((port) => clusterReady(port)));
        return { url: `redis://127.0.0.1:${ports[0]}`, ports, close };
    } catch (error) {
        await close();
        throw error;
    }
}

function isFree(port: number): Promise<boolean> {
    return new Promise((resolve) => {
        const probe = createServer();
        probe.once('error', () => resolve(false));
        probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
}

/** Resolves once the node on `port` answers PING (within 10 s). */
async function answers(port: number): Promise<void> {
    await until(port, async (redis) => (await redis.ping()) === 'PONG');
}

/** Resolves once the node on `port` says the cluster is ok: every slot served (within 10 s). */
async function clusterReady(port: number): Promise<void> {
    await until(port, async (redis) => /cluster_state:ok/.test(await redis.cluster('INFO')));
}

async function until(port: number, check: (redis: Redis) => Promise<boolean>): Promise<void> {
    const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => 50 });
    redis.on('error', () => {});
    try {
        for (const started = Date.now(); ; await new Promise((resolve) => setTimeout(resolve, 50))) {
            if (await check(redis).catch(() => false)) return;
            if (Date.now() - started > 10_000) throw new Error(`the Redis node on port ${port} is not ready in 10 s`);
        }
    } finally {
        redis.disconnect();
    }
}
