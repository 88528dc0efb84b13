/**
 * Secrets end to end: a distributed run whose database URL has a password (PostgreSQL's trust auth
 * here ignores it), whose Redis URL has a user's password (an ACL user made for the test), and
 * whose site sends an Authorization header and a Cookie with every request. The run is logged at
 * debug level, has a page that fails (dead-letter), one that fails its schema (quarantine) and a
 * response that sets a cookie; then every log line, the summary (printed and JSON), the report,
 * every file of the storage dir, every row of the run's PostgreSQL schema and every key of its
 * Redis prefix are searched for the secrets. Its requests go out through two proxy tiers of real
 * local proxies with passwords, one of them broken (its 407s are logged as exit faults), and the
 * passwords are searched for too.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile, rm, mkdtemp } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { runCli, type CliResult } from '../helpers/cli.js';
import { POSTGRES_URL, REDIS_URL, withSchema } from '../helpers/fleetWorld.js';
import { startProxyWorld, type ProxyWorld } from '../helpers/proxyWorld.js';
import { storedFiles } from '../helpers/storedFiles.js';

const id = randomBytes(4).toString('hex');
const SECRETS = {
    database: `DbPass-${id}-x9`,
    redis: `RedisPass-${id}-x9`,
    authorization: `Bearer AuthToken-${id}-x9`,
    cookie: `session=CookieValue-${id}-x9`,
    setCookie: `SetCookieValue-${id}-x9`,
};
const prefix = `dragnet-test-${id}`;
const schema = `dragnet_test_${id}`;
const redisUser = `dragnet-test-${id}`;
const SITE = fileURLToPath(new URL('./fixtures/secretSite.ts', import.meta.url));

/** A shop that answers only requests that carry the site's credentials. */
async function serveShop(): Promise<{ server: Server; origin: string; unauthorized: () => number }> {
    let unauthorized = 0;
    const server = createServer((req, res) => {
        if (req.url === '/robots.txt') return void res.writeHead(404).end();
        // The site's own cookie first, then what it set (its token) once it has set it.
        if (req.headers.authorization !== SECRETS.authorization || !req.headers.cookie?.startsWith(SECRETS.cookie)) {
            unauthorized += 1;
            return void res.writeHead(401).end();
        }
        const html = (body: string) => `<html><body>${body}</body></html>`;
        res.setHeader('content-type', 'text/html; charset=utf-8');
        if (req.url === '/') {
            const links = ['/products/1', '/products/2', '/products/gone', '/products/broken'].map(
                (href) => `<a class="p" href="${href}">p</a>`,
            );
            return void res
                .writeHead(200, { 'set-cookie': `token=${SECRETS.setCookie}; Path=/` })
                .end(html(links.join('')));
        }
        if (req.url === '/products/gone') return void res.writeHead(404).end(html('gone'));
        if (req.url === '/products/broken') return void res.writeHead(200).end(html('<h1>No price</h1>'));
        res.writeHead(200).end(html(`<h1>Product ${req.url}</h1><p class="price">£9.99</p>`));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
        server,
        origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        unauthorized: () => unauthorized,
    };
}

/** Every value under the Redis prefix, as text. */
async function redisText(redis: Redis): Promise<string> {
    const parts: string[] = [];
    for await (const keys of redis.scanStream({ match: `*${prefix}:*`, count: 1000 })) {
        for (const key of keys as string[]) {
            const type = await redis.type(key);
            if (type === 'string') parts.push((await redis.getBuffer(key))?.toString('latin1') ?? '');
            else if (type === 'hash') parts.push(JSON.stringify(await redis.hgetall(key)));
            else if (type === 'list') parts.push(JSON.stringify(await redis.lrange(key, 0, -1)));
            else if (type === 'set') parts.push(JSON.stringify(await redis.smembers(key)));
            else if (type === 'zset') parts.push(JSON.stringify(await redis.zrange(key, 0, -1)));
            else if (type === 'stream') parts.push(JSON.stringify(await redis.xrange(key, '-', '+')));
        }
    }
    return parts.join('\n');
}

/** Every row of every table in the run's schema, as text. */
async function databaseText(db: pg.Client): Promise<string> {
    const tables = await db.query<{ table_name: string }>(
        'SELECT table_name FROM information_schema.tables WHERE table_schema = $1',
        [schema],
    );
    const parts: string[] = [];
    for (const { table_name } of tables.rows) {
        const rows = await db.query(`SELECT row_to_json(t)::text AS row FROM "${schema}"."${table_name}" t`);
        parts.push(...rows.rows.map((row) => row.row as string));
    }
    return parts.join('\n');
}

/** Every file under `dir`, as bytes read as latin1 (so a secret in any encoding of ASCII is found). */
async function filesText(dir: string): Promise<Map<string, string>> {
    return new Map([...(await storedFiles(dir))].map(([path, bytes]) => [join(dir, path), bytes.toString('latin1')]));
}

describe('a run configured with secrets', () => {
    let shop: Awaited<ReturnType<typeof serveShop>>;
    let redis: Redis;
    let db: pg.Client;
    let storageDir: string;
    let result: CliResult;
    let proxies: ProxyWorld;
    const written = new Map<string, string>();

    before(async () => {
        shop = await serveShop();
        proxies = await startProxyWorld({ datacenter: 2, residential: 1, broken: 1 });
        redis = new Redis(REDIS_URL);
        await redis.call('ACL', 'SETUSER', redisUser, 'on', `>${SECRETS.redis}`, '~*', '&*', '+@all');
        const postgres = new URL(POSTGRES_URL);
        db = new pg.Client({
            host: postgres.hostname,
            port: Number(postgres.port),
            database: postgres.pathname.slice(1),
            user: postgres.username || userInfo().username,
        });
        await db.connect();
        storageDir = await mkdtemp(join(tmpdir(), 'dragnet-secrets-'));
        const redisUrl = new URL(REDIS_URL);
        redisUrl.username = redisUser;
        redisUrl.password = SECRETS.redis;
        const databaseUrl = new URL(withSchema(POSTGRES_URL, schema));
        databaseUrl.username = userInfo().username;
        databaseUrl.password = SECRETS.database;
        const summaryJson = join(storageDir, 'summary.json');
        result = await runCli(
            [
                '--site',
                SITE,
                '--start-url',
                `${shop.origin}/`,
                '--storage-dir',
                storageDir,
                '--summary-json',
                summaryJson,
                '--log-level',
                'debug',
                '--max-attempts',
                '1',
                ...proxies.tierSpecs().flatMap((spec) => ['--proxy-tier', spec]),
            ],
            {
                REDIS_URL: redisUrl.href,
                DATABASE_URL: databaseUrl.href,
                DRAGNET_REDIS_PREFIX: prefix,
                SECRET_SITE_AUTHORIZATION: SECRETS.authorization,
                SECRET_SITE_COOKIE: SECRETS.cookie,
            },
        );
        written.set('stderr (the log)', result.stderr);
        written.set('stdout (the summary)', result.stdout);
        for (const [file, text] of await filesText(storageDir)) written.set(file, text);
        written.set('PostgreSQL', await databaseText(db));
        written.set('Redis', await redisText(redis));
    });
    // Each part is cleaned up on its own, so one that failed to open does not leave the others behind.
    after(async () => {
        shop?.server.close();
        await proxies?.close();
        await db?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
        await db?.end().catch(() => undefined);
        if (redis) {
            for await (const keys of redis.scanStream({ match: `*${prefix}:*`, count: 1000 }))
                if ((keys as string[]).length) await redis.del(...(keys as string[]));
            await redis.call('ACL', 'DELUSER', redisUser);
            redis.disconnect();
        }
        if (storageDir) await rm(storageDir, { recursive: true, force: true });
    });

    it(`runs with them: every request carried the credentials, and \
the run has a dataset, a dead-letter and a quarantine`, async () => {
        assert.equal(result.code, 0, result.stderr.slice(-2000));
        assert.equal(shop.unauthorized(), 0);
        const summary = JSON.parse(await readFile(join(storageDir, 'summary.json'), 'utf8'));
        assert.equal(summary.items.stored, 2);
        assert.equal(summary.items.invalid, 1);
        assert.deepEqual(summary.deadLetterByReason, { 'http-404': 1 });
        assert.ok(
            [...written.keys()].some((name) => name.endsWith('.html')),
            'a report was written',
        );
        assert.ok((written.get('Redis') ?? '').length > 0, "the fleet's keys were read from Redis");
    });

    for (const [name, secret] of Object.entries(SECRETS)) {
        it(`writes the ${name} secret nowhere`, () => {
            const found = [...written].filter(([, text]) => text.includes(secret)).map(([where]) => where);
            assert.deepEqual(found, []);
        });
    }

    it(`writes no proxy password anywhere, though its requests went \
through the proxies and the broken one was logged`, async () => {
        const summary = JSON.parse(await readFile(join(storageDir, 'summary.json'), 'utf8'));
        assert.ok(summary.proxies.tiers[0].ok > 0, 'requests went out through the datacenter tier');
        assert.ok(
            summary.proxies.exits.some((exit: { exitFaults: number }) => exit.exitFaults > 0),
            'the broken proxy was tried',
        );
        assert.match(result.stderr, /exit datacenter\/127\.0\.0\.1:\d+ failed/);
        for (const secret of proxies.secrets) {
            const found = [...written].filter(([, text]) => text.includes(secret)).map(([where]) => where);
            assert.deepEqual(found, [], 'a proxy password was written');
        }
    });

    it('searches text that does hold what the run did (the search can fail)', () => {
        assert.ok(written.get('PostgreSQL')!.includes('/products/1'));
        assert.ok(written.get('stderr (the log)')!.includes(shop.origin));
    });
});
