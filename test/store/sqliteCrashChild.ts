/**
 * The process sqliteCrash.test.ts kills: works a request queue in <storageDir> forever, adding
 * batches and handling some of what it fetches, and prints each operation only after its await
 * returned — a printed line is a promise that the write is durable.
 *
 *     node --import tsx test/store/sqliteCrashChild.ts <storageDir>
 *
 * Lines: `ADD <uniqueKey> …` for an acknowledged batch, `HANDLED <uniqueKey>` for an acknowledged
 * markRequestHandled. A restarted child continues where the queue is.
 */
import { Configuration, log, RequestQueue } from '@crawlee/core';
import { SqliteStorageClient } from '../../src/store/sqlite/storageClient.js';

const BATCH = 200;
const HANDLE_PER_BATCH = 120;

log.setLevel(log.LEVELS.ERROR);
const storageDir = process.argv[2];
if (!storageDir) throw new Error('usage: sqliteCrashChild.ts <storageDir>');

const storage = new SqliteStorageClient({ storageDir });
const queue = await RequestQueue.open('crash', {
    config: new Configuration({ storageClient: storage, purgeOnStart: false }),
});
// Short locks: requests the killed predecessor had locked come back within a second.
queue.requestLockSecs = 1;

// Batches are atomic and uniqueKeys are never repeated, so the total says which key comes next.
let next = (await queue.getInfo())?.totalRequestCount ?? 0;
for (;;) {
    const keys = Array.from({ length: BATCH }, (_, i) => `http://127.0.0.1:9/r/${next + i}`);
    await queue.addRequests(keys.map((url) => ({ url })));
    next += BATCH;
    process.stdout.write(`ADD ${keys.join(' ')}\n`);
    for (let i = 0; i < HANDLE_PER_BATCH; i++) {
        const request = await queue.fetchNextRequest();
        if (!request) break;
        await queue.markRequestHandled(request);
        process.stdout.write(`HANDLED ${request.uniqueKey}\n`);
    }
}
