/**
 * A request whose job's lease ran out under one worker while another took it and finished it: the
 * outcome of the latest take is the one stored, whichever commits first (src/store/postgres/sink.ts,
 * OutcomeFence). Two JobQueues on the machine's real Redis (a key prefix of the test's own) and a
 * PgOutcomes each on its real PostgreSQL (a schema of the test's own), all removed after.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { it } from 'node:test';
import { getRequestId, type Request } from '@crawlee/core';
import { Redis } from 'ioredis';
import { JobQueue } from '../../src/frontier/redis/jobQueue.js';
import { deleteKeysUnder } from '../../src/frontier/redisSeenSet.js';
import { RunStats } from '../../src/monitor/stats.js';
import type { Outcome } from '../../src/store/outcomes.js';
import { PgOutcomes } from '../../src/store/postgres/outcomes.js';
import { PgSink } from '../../src/store/postgres/sink.js';
import type { StoredItem } from '../../src/store/records.js';
import type { DeadLetterEntry } from '../../src/vocabulary/failure.js';
import { REDIS_URL } from '../helpers/fleetWorld.js';
import { storedRows, testDatabase } from '../helpers/pgSchema.js';

const SITE = 'shop';
const QUEUE = 'shop-http';
const LOCK_MILLIS = 1_000;
const url = (path: string) => `http://127.0.0.1:9/${path}`;

const items = (page: string, worker: string, count: number): Outcome => ({
    items: Array.from(
        { length: count },
        (_, index): StoredItem => ({
            name: `${worker} ${index}`,
            _url: url(page),
            _route: 'product',
            _rawKey: url(page),
            _renderer: 'http',
            _fetchedAt: new Date().toISOString(),
        }),
    ),
});

const deadLetter = (page: string): Outcome => ({
    deadLetter: {
        url: url(page),
        label: 'product',
        failureClass: 'permanent',
        reason: 'http-404',
        error: 'HTTP 404',
        attempts: 1,
        stage: 'http',
        deadLetteredAt: new Date().toISOString(),
    } satisfies DeadLetterEntry,
});

/** The next `count` requests the queue hands out. */
async function take(queue: JobQueue, count: number): Promise<Map<string, Request>> {
    const taken = new Map<string, Request>();
    const until = Date.now() + 15_000;
    while (taken.size < count) {
        const request = await queue.fetchNextRequest();
        if (request) taken.set(request.url, request);
        else if (Date.now() > until) throw new Error(`took ${taken.size} of ${count}`);
        else await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return taken;
}

it('stores the latest take of a job whose lease ran out, in one table, whichever worker commits first', async (t) => {
    const { db } = await testDatabase(t);
    const prefix = `dragnet-test-${randomUUID().slice(0, 8)}`;
    const connections = [0, 1].map(() => new Redis(REDIS_URL, { maxRetriesPerRequest: null }));
    const [first, second] = connections.map(
        (redis) => new JobQueue({ redis, prefix, name: QUEUE, lockMillis: LOCK_MILLIS, prefetch: 2 }),
    ) as [JobQueue, JobQueue];
    t.after(async () => {
        await Promise.all([first.close(), second.close()]);
        await deleteKeysUnder(connections[0]!, prefix);
        for (const redis of connections) redis.disconnect();
    });
    const refused: string[] = [];
    const outcomesOf = (queue: JobQueue) =>
        new PgOutcomes({
            sink: new PgSink(db),
            site: SITE,
            stats: new RunStats(),
            run: () => 1,
            fenceOf: (_queue, request) => queue.fenceOf(request),
            onRefused: (key) => refused.push(key),
        });

    // The first worker takes both pages, then stops renewing their leases (its lock keys are gone, as
    // when it is cut off or frozen); the second worker takes them back once the leases are up.
    await first.addRequests([{ url: url('a') }, { url: url('b') }]);
    first.start();
    const stale = await take(first, 2);
    for (const page of ['a', 'b']) await connections[0]!.del(`${prefix}:${QUEUE}:${getRequestId(url(page))}:lock`);
    second.start();
    const fresh = await take(second, 2);
    for (const page of ['a', 'b']) {
        const [was, is] = [first.fenceOf(stale.get(url(page))!), second.fenceOf(fresh.get(url(page))!)];
        assert.equal(was?.jobCreatedAt, is?.jobCreatedAt, 'one job');
        assert.ok(was && is && is.take > was.take, `${page}: taken again (${was?.take} then ${is?.take})`);
    }

    // a: the worker that holds it commits first; the stale one's later commit is refused.
    await outcomesOf(second).settle(second, fresh.get(url('a'))!, items('a', 'second', 2));
    await outcomesOf(first).settle(first, stale.get(url('a'))!, items('a', 'first', 3));
    // b: the stale worker commits first; the later take's outcome, a dead-letter, replaces it.
    await outcomesOf(first).settle(first, stale.get(url('b'))!, items('b', 'first', 3));
    await outcomesOf(second).settle(second, fresh.get(url('b'))!, deadLetter('b'));

    assert.deepEqual(refused, [url('a')]);
    const stored = await storedRows<StoredItem>(db, SITE, 'items');
    assert.deepEqual(
        stored.map((item) => `${item._url} ${item.name}`),
        [`${url('a')} second 0`, `${url('a')} second 1`],
    );
    const deadLetters = await storedRows<DeadLetterEntry>(db, SITE, 'deadLetter');
    assert.deepEqual(
        deadLetters.map((entry) => `${entry.url} ${entry.reason}`),
        [`${url('b')} http-404`],
    );
    assert.deepEqual(await storedRows(db, SITE, 'quarantine'), []);
});

it('stores an outcome with no fence as before: a judged page keeps its items over a later dead-letter', async (t) => {
    const { db } = await testDatabase(t);
    const sink = new PgSink(db);
    const key = url('c');
    const [item] = items('c', 'one', 1).items ?? [];
    assert.deepEqual(await sink.commit(SITE, [{ requestKey: key, items: [item!] }]), new Set());
    await sink.commit(SITE, [{ requestKey: key, deadLetter: deadLetter('c').deadLetter }]);
    assert.equal((await storedRows(db, SITE, 'items')).length, 1);
    assert.deepEqual(await storedRows(db, SITE, 'deadLetter'), []);
});
