/**
 * The image, checked the way this machine can (no Docker engine runs here): the Dockerfile read for
 * what the image must be — non-root, only the storage dir the run's, tini as PID 1, a health check,
 * labels, every file it copies present — and what it runs, run as plain commands: its entrypoint's
 * command, and its health check against a real run serving /status.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Shop, startShop } from '../src/demo/shop.js';
import { ROOT, runScript, startScript } from './helpers/cli.js';
import { ltsVersion } from './lts/ltsNode.js';

const DOCKERFILE = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
/** The runtime stage: from the last FROM on. */
const RUNTIME = DOCKERFILE.slice(DOCKERFILE.lastIndexOf('\nFROM '));

/** The JSON-array form of an instruction (`ENTRYPOINT ["tini", …]`) of the runtime stage. */
function execForm(instruction: string): string[] {
    const match = new RegExp(`^${instruction} (?:.* )?(\\[.*\\])$`, 'm').exec(RUNTIME);
    assert.ok(match, `${instruction} in the runtime stage`);
    return JSON.parse(match[1]!) as string[];
}

/** Exit code of the image's health check with `env`. */
function healthCheck(env: NodeJS.ProcessEnv): Promise<number> {
    const [command, ...args] = execForm('HEALTHCHECK');
    return new Promise((resolve) => {
        execFile(
            command === 'node' ? process.execPath : command!,
            args,
            { cwd: ROOT, env: { PATH: process.env.PATH, ...env } },
            (error) => resolve(error ? Number((error as { code?: number }).code ?? 1) : 0),
        );
    });
}

async function freePort(): Promise<number> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    return port;
}

describe('the image', () => {
    it("builds and runs on Node's current LTS line, the one `npm test` runs the demo under", () => {
        const froms = [...DOCKERFILE.matchAll(/^FROM (\S+)/gm)].map(([, image]) => image);
        const major = ltsVersion().split('.')[0];
        assert.deepEqual(froms, [`node:${major}-bookworm-slim`, `node:${major}-bookworm-slim`]);
    });

    it('runs as the node user, owns only the storage dir, starts under tini, is labelled', () => {
        const lines = RUNTIME.split('\n');
        const user = lines.findIndex((line) => line.startsWith('USER '));
        assert.equal(lines[user], 'USER node');
        assert.ok(
            lines.slice(user + 1).every((line) => !/^(COPY|RUN|ADD) /.test(line)),
            'nothing is copied or run after USER node',
        );
        const chowns = [...RUNTIME.matchAll(/chown[^\n]*/g)].map(([line]) => line);
        assert.deepEqual(chowns, ['chown node:node storage'], 'the storage dir is the only thing the run owns');
        assert.ok(!/COPY --chown/.test(RUNTIME));
        assert.deepEqual(execForm('ENTRYPOINT').slice(0, 2), ['tini', '--']);
        assert.match(RUNTIME, /apt-get install[^\n]* tini/);
        assert.match(RUNTIME, /^LABEL org\.opencontainers\.image\.title="dragnet"/m);
    });

    it('copies only files that exist, and what the run needs', () => {
        const sources = [...DOCKERFILE.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap(([, list]) =>
            list!.split(/\s+/),
        );
        for (const source of sources) assert.ok(existsSync(join(ROOT, source)), `COPY ${source}`);
        for (const needed of ['src', 'routes', 'package.json', 'tsconfig.json', 'docker/healthcheck.mjs'])
            assert.ok(sources.includes(needed), needed);
        assert.match(RUNTIME, /COPY --from=deps \/app\/node_modules/);
        assert.match(RUNTIME, /COPY --from=deps \/app\/vendor/);
    });

    it("runs its entrypoint's command (here without tini)", async () => {
        const [, , node, ...args] = execForm('ENTRYPOINT');
        assert.equal(node, 'node');
        assert.deepEqual(args.slice(0, 3), ['--import', 'tsx', 'src/main.ts']);
        const help = await runScript(args[2]!, ['--help']);
        assert.equal(help.code, 0, help.stderr);
        assert.match(help.stdout, /--memory-mb/);
    });

    describe('its health check', () => {
        let shop: Shop;
        let dir: string;
        before(async () => {
            shop = await startShop({ seed: 4, products: 30, scriptOnlyRate: 0, latencyMs: 200 });
            dir = await mkdtemp(join(tmpdir(), 'dragnet-health-'));
        });
        after(async () => {
            await shop.close();
            await rm(dir, { recursive: true, force: true });
        });

        it(`is healthy without metrics, healthy while the run \
answers /status, unhealthy when nothing does`, async () => {
            assert.equal(await healthCheck({}), 0, 'no metrics port: nothing to ask');
            const port = await freePort();
            assert.equal(await healthCheck({ DRAGNET_METRICS_PORT: String(port) }), 1, 'nothing listening');
            const run = startScript(
                'src/main.ts',
                [
                    '--start-url',
                    `${shop.url}/`,
                    '--allow-private-network',
                    '--max-concurrency',
                    '2',
                    '--storage-dir',
                    dir,
                ],
                {
                    DRAGNET_METRICS_PORT: String(port),
                },
            );
            try {
                let healthy = 1;
                for (let attempt = 0; attempt < 50 && healthy !== 0; attempt += 1) {
                    await new Promise((resolve) => setTimeout(resolve, 200));
                    healthy = await healthCheck({ DRAGNET_METRICS_PORT: String(port) });
                }
                assert.equal(healthy, 0, 'the running crawl answers /status');
            } finally {
                run.child.kill('SIGTERM');
                await run.result;
            }
        });
    });
});
