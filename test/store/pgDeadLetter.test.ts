/**
 * A fleet's dead-letter (src/store/postgres/deadLetter.ts): entries in the machine's real
 * PostgreSQL (a schema of the test's own), re-queued into BullMQ queues in its real Redis (a key
 * prefix of the test's own), both removed after.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { getRequestId } from '@crawlee/core';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { JobQueue } from '../../src/frontier/redis/jobQueue.js';
import { deleteKeysUnder } from '../../src/frontier/redisSeenSet.js';
import { PgDeadLetter } from '../../src/store/postgres/deadLetter.js';
import { PgSink } from '../../src/store/postgres/sink.js';
import type { DeadLetterEntry } from '../../src/vocabulary/failure.js';
import type { Stage } from '../../src/vocabulary/request.js';
import { openPostgres, type PgDatabase } from '../../src/store/postgres/database.js';
import { fleetKeys } from '../../src/wiring/openDistributed.js';
import { assertOneLineError, runScript } from '../helpers/cli.js';
import { POSTGRES_URL, REDIS_URL, withSchema } from '../helpers/fleetWorld.js';

const SITE = 'shop';
const url = (path: string) => `http://127.0.0.1:9/${path}`;

function entry(path: string, reason: string, stage: Stage = 'http'): DeadLetterEntry {
    return {
        url: url(path),
        label: 'product',
        failureClass: reason === 'http-404' ? 'permanent' : 'transient',
        reason,
        error: reason,
        attempts: 3,
        stage,
        deadLetteredAt: '2024-01-01T00:00:00.000Z',
    };
}

describe("a fleet's dead-letter", () => {
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    const redisPrefix = `dragnet-test-${randomUUID().slice(0, 8)}`;
    const prefix = fleetKeys(redisPrefix, SITE).queuePrefix;
    const queues = {
        http: new JobQueue({ redis, prefix, name: `${SITE}-http` }),
        browser: new JobQueue({ redis, prefix, name: `${SITE}-browser` }),
    };
    const schema = `dragnet_test_${randomUUID().slice(0, 8)}`;
    let db: PgDatabase;
    let store: PgDeadLetter;

    before(async () => {
        db = await openPostgres(withSchema(POSTGRES_URL, schema));
        store = new PgDeadLetter(db, SITE);
        await new PgSink(db).commit(SITE, [
            { requestKey: url('a'), deadLetter: entry('a', 'timeout') },
            { requestKey: url('b'), deadLetter: entry('b', 'timeout', 'browser') },
            { requestKey: url('c'), deadLetter: entry('c', 'timeout') },
            { requestKey: url('d'), deadLetter: entry('d', 'http-404') },
        ]);
        // a's failed job is still kept by BullMQ under its id; c is queued again already.
        // BullMQ leaves a connection it was given open when it closes.
        const connection = redis.duplicate();
        const failing = new Worker(
            `${SITE}-http`,
            async () => {
                throw new Error('gave up');
            },
            { connection, prefix },
        );
        await queues.http.queue.add('page', { url: url('a') } as never, { jobId: getRequestId(url('a')), attempts: 1 });
        while ((await queues.http.queue.getJobState(getRequestId(url('a')))) !== 'failed')
            await new Promise((resolve) => setTimeout(resolve, 20));
        await failing.close();
        connection.disconnect();
        await queues.http.addRequests([{ url: url('c'), uniqueKey: url('c') }]);
    });
    after(async () => {
        await Promise.all([queues.http.close(), queues.browser.close()]);
        await deleteKeysUnder(redis, prefix);
        redis.disconnect();
        await db?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await db?.close();
    });

    it('lists the entries that match, in order', async () => {
        const listed: string[] = [];
        for await (const found of store.entries({ reason: 'timeout' })) listed.push(found.url);
        assert.deepEqual(listed, [url('a'), url('b'), url('c')]);
    });

    it("re-queues them into their stages' queues, a finished job replaced, a pending one left, and takes them out", async () => {
        const result = await store.requeue({ reason: 'timeout' }, queues);
        assert.deepEqual(
            result.entries.map((found) => found.url),
            [url('a'), url('b'), url('c')],
        );
        assert.deepEqual(result.byQueue, { [`${SITE}-http`]: 1, [`${SITE}-browser`]: 1 });
        assert.deepEqual([result.added, result.alreadyPending], [2, 1]);
        assert.equal(await queues.http.queue.getJobState(getRequestId(url('a'))), 'prioritized');
        assert.equal(await queues.browser.queue.getJobState(getRequestId(url('b'))), 'prioritized');
        const job = await queues.http.queue.getJob(getRequestId(url('a')));
        assert.deepEqual([job!.data.url, job!.data.userData.label, job!.data.retryCount], [url('a'), 'product', 0]);
        const left: string[] = [];
        for await (const found of store.entries()) left.push(`${found.reason} ${found.url}`);
        assert.deepEqual(left, [`http-404 ${url('d')}`]);
    });

    it('is listed and re-queued by `npm run dead-letter` with --database-url and --redis-url', async () => {
        const databaseUrl = withSchema(POSTGRES_URL, schema);
        const command = (args: string[]) =>
            runScript('src/commands/deadLetter.ts', [...args, '--site', SITE, '--database-url', databaseUrl]);
        const listed = await command(['list', '--json']);
        assert.equal(listed.code, 0, listed.stderr);
        assert.deepEqual(
            listed.stdout
                .trimEnd()
                .split('\n')
                .map((line) => (JSON.parse(line) as DeadLetterEntry).url),
            [url('d')],
        );
        assertOneLineError(await command(['requeue']), 2, /set --redis-url \(REDIS_URL\) too/);
        const requeued = await command(['requeue', '--redis-url', REDIS_URL, '--redis-prefix', redisPrefix]);
        assert.equal(requeued.code, 0, requeued.stderr);
        assert.match(requeued.stdout, new RegExp(`re-queued 1 dead-letter entry of ${SITE}: 1 to ${SITE}-http`));
        assert.match(requeued.stdout, /next: the fleet's workers take them/);
        assert.equal(await queues.http.queue.getJobState(getRequestId(url('d'))), 'prioritized');
    });
});
