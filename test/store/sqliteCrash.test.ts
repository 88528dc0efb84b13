import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Configuration, getRequestId, log, RequestQueue } from '@crawlee/core';

import { SqliteStorageClient } from '../../src/store/sqlite/storageClient.js';

log.setLevel(log.LEVELS.WARNING);
const CHILD = fileURLToPath(new URL('./sqliteCrashChild.ts', import.meta.url));
const KILLS = 3;

interface Acknowledged {
    added: Set<string>;
    handled: Set<string>;
}

/**
 * Runs the child on `dir` until it has acknowledged some work, then SIGKILLs it at a random moment
 * `minMs`–`maxMs` later. Collects every complete line it printed.
 */
async function runAndKill(dir: string, acked: Acknowledged, minMs: number, maxMs: number): Promise<void> {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        child.on('exit', (_code, signal) => resolve(signal)),
    );
    let pending = '';
    let started!: () => void;
    const working = new Promise<void>((resolve) => (started = resolve));
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        const lines = (pending + chunk).split('\n');
        pending = lines.pop()!; // a line cut by the kill was never fully acknowledged
        for (const line of lines) {
            const [kind, ...keys] = line.split(' ');
            for (const key of keys) (kind === 'ADD' ? acked.added : acked.handled).add(key);
            if (kind === 'HANDLED') started();
        }
    });
    await Promise.race([working, exited]);
    await sleep(minMs + Math.random() * (maxMs - minMs));
    child.kill('SIGKILL');
    assert.equal(await exited, 'SIGKILL', 'the child was still working when killed');
}

it(`a queue written by a process killed with SIGKILL three times \
reopens consistent, loses nothing and drains`, async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'dragnet-sqlite-crash-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const acked: Acknowledged = { added: new Set(), handled: new Set() };
    for (let kill = 0; kill < KILLS; kill++) await runAndKill(dir, acked, 50, 1500);
    assert.ok(acked.added.size > 0 && acked.handled.size > 0, 'the child acknowledged work before each kill');

    // Locks of the dead children are released, as one process resuming its own crawl would.
    const storage = new SqliteStorageClient({ storageDir: dir, releaseLocksOnOpen: true });
    t.after(() => storage.close());
    const { db } = storage;
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');

    const queue = await RequestQueue.open('crash', {
        config: new Configuration({ storageClient: storage, purgeOnStart: false }),
    });
    const client = storage.requestQueue(queue.id);
    for (const key of acked.added)
        assert.ok(await client.getRequest(getRequestId(key)), `acknowledged add ${key} is stored`);
    for (const key of acked.handled) {
        assert.ok((await client.getRequest(getRequestId(key)))?.handledAt, `acknowledged handle ${key} is handled`);
    }

    // Every request is either pending (a position, no handledAt) or handled (no position, handledAt),
    // and the counters in the queue row agree with the rows.
    const counts = db
        .prepare(
            `SELECT q.total_count AS total, q.handled_count AS handled,
                (SELECT count(*) FROM requests r WHERE r.queue_seq = q.seq) AS rows,
                (SELECT count(*) FROM requests r WHERE r.queue_seq = q.seq AND r.order_no IS NULL) AS handledRows,
                (SELECT count(*) FROM requests r WHERE r.queue_seq = q.seq
                    AND (r.order_no IS NULL) <> (json_extract(r.json, '$.handledAt') IS NOT NULL)) AS inconsistent,
                (SELECT count(*) FROM requests r WHERE r.queue_seq = q.seq \
AND r.order_no IS NULL AND r.locked_until IS NOT NULL) AS lockedHandled
             FROM request_queues q WHERE q.name = 'crash'`,
        )
        .get() as {
        total: number;
        handled: number;
        rows: number;
        handledRows: number;
        inconsistent: number;
        lockedHandled: number;
    };
    assert.equal(counts.total, counts.rows);
    assert.equal(counts.handled, counts.handledRows);
    assert.deepEqual([counts.inconsistent, counts.lockedHandled], [0, 0]);
    assert.ok(counts.total >= acked.added.size && counts.handled >= acked.handled.size);

    let drained = 0;
    for (let request = await queue.fetchNextRequest(); request; request = await queue.fetchNextRequest()) {
        await queue.markRequestHandled(request);
        drained += 1;
    }
    assert.equal(await queue.isFinished(), true);
    assert.equal(drained, counts.total - counts.handled);
    const info = await queue.getInfo();
    assert.deepEqual(
        [info?.totalRequestCount, info?.handledRequestCount, info?.pendingRequestCount],
        [counts.total, counts.total, 0],
    );
});
