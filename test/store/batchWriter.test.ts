import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';

import { BatchWriter } from '../../src/store/batchWriter.js';

/** A writer whose storage records every batch it is handed, optionally slowly. */
function recordingWriter(options: { maxBatchSize?: number; maxDelayMs?: number; writeDelayMs?: number } = {}) {
    const batches: number[][] = [];
    const writer = new BatchWriter<number>({
        maxBatchSize: options.maxBatchSize,
        maxDelayMs: options.maxDelayMs,
        write: async (batch) => {
            if (options.writeDelayMs) await new Promise((resolve) => setTimeout(resolve, options.writeDelayMs));
            batches.push([...batch]);
        },
    });
    return { writer, batches };
}

describe('BatchWriter', () => {
    it('writes a batch as soon as it is full, and add() waits for that write', async () => {
        const { writer, batches } = recordingWriter({ maxBatchSize: 3, maxDelayMs: 60_000 });
        await writer.add(1);
        await writer.add(2);
        assert.deepEqual(batches, [], 'nothing is written before the batch is full');
        await writer.add(3);
        assert.deepEqual(batches, [[1, 2, 3]]);
        await writer.add(4);
        assert.deepEqual(batches, [[1, 2, 3]]);
        await writer.flush();
        assert.deepEqual(batches, [[1, 2, 3], [4]]);
    });

    it('writes a partial batch once maxDelayMs has passed', async (t) => {
        t.mock.timers.enable({ apis: ['setTimeout'] });
        const { writer, batches } = recordingWriter({ maxBatchSize: 100, maxDelayMs: 1000 });
        await writer.add(1);
        t.mock.timers.tick(500);
        await writer.add(2); // does not restart the clock of the batch
        t.mock.timers.tick(499);
        await tick();
        assert.deepEqual(batches, []);
        t.mock.timers.tick(1);
        await tick();
        assert.deepEqual(batches, [[1, 2]]);

        // The next record starts a new clock.
        await writer.add(3);
        t.mock.timers.tick(999);
        await tick();
        assert.deepEqual(batches, [[1, 2]]);
        t.mock.timers.tick(1);
        await tick();
        assert.deepEqual(batches, [[1, 2], [3]]);
    });

    it('writes everything pending on flush() and cancels the timer', async (t) => {
        t.mock.timers.enable({ apis: ['setTimeout'] });
        const { writer, batches } = recordingWriter({ maxBatchSize: 100, maxDelayMs: 1000 });
        await writer.add(1);
        await writer.add(2);
        await writer.flush();
        assert.deepEqual(batches, [[1, 2]]);
        t.mock.timers.tick(5000);
        await tick();
        assert.deepEqual(batches, [[1, 2]], 'no second, empty or repeated write');
    });

    it('never calls write with an empty batch', async () => {
        const { writer, batches } = recordingWriter();
        await writer.flush();
        await writer.flush();
        assert.deepEqual(batches, []);
    });

    it('keeps the order of records across batches even when writes are slow and overlap', async () => {
        const { writer, batches } = recordingWriter({ maxBatchSize: 4, maxDelayMs: 5, writeDelayMs: 3 });
        const records = Array.from({ length: 50 }, (_, index) => index);
        // Not awaited one by one: adds arrive while earlier batches are still being written.
        await Promise.all(records.map((record) => writer.add(record)));
        await writer.flush();
        assert.deepEqual(batches.flat(), records);
        assert.ok(
            batches.every((batch) => batch.length >= 1 && batch.length <= 4),
            JSON.stringify(batches),
        );
    });

    it('flush() resolves only after writes already under way have landed', async () => {
        const { writer, batches } = recordingWriter({ maxBatchSize: 2, writeDelayMs: 20 });
        await writer.add(1);
        const full = writer.add(2); // fills the batch: a slow write starts
        await writer.flush(); // nothing pending, but a write is in flight
        assert.deepEqual(batches, [[1, 2]]);
        await full;

        const again = writer.add(3).then(() => writer.add(4));
        await tick();
        await writer.add(5);
        await writer.flush();
        assert.deepEqual(batches, [[1, 2], [3, 4], [5]]);
        await again;
    });

    it('uses the documented defaults: 100 records, 1000 ms', async (t) => {
        t.mock.timers.enable({ apis: ['setTimeout'] });
        const { writer, batches } = recordingWriter();
        for (let i = 0; i < 99; i++) await writer.add(i);
        assert.equal(batches.length, 0);
        await writer.add(99);
        assert.equal(batches[0]?.length, 100);
        await writer.add(100);
        t.mock.timers.tick(999);
        await tick();
        assert.equal(batches.length, 1);
        t.mock.timers.tick(1);
        await tick();
        assert.deepEqual(batches[1], [100]);
    });

    it(`a failed write loses nothing: the error reaches the \
caller and the records go out with the next flush`, async () => {
        const stored: number[][] = [];
        let failNext = true;
        const writer = new BatchWriter<number>({
            maxBatchSize: 2,
            maxDelayMs: 60_000,
            write: async (batch) => {
                if (failNext) {
                    failNext = false;
                    throw new Error('disk full');
                }
                stored.push([...batch]);
            },
        });
        await writer.add(1);
        await assert.rejects(writer.add(2), /disk full/);
        await writer.add(3);
        await writer.flush();
        assert.deepEqual(stored.flat(), [1, 2, 3]);
    });

    it('a failed timed flush does not crash the process; its error reaches the next caller', async (t) => {
        t.mock.timers.enable({ apis: ['setTimeout'] });
        const stored: number[] = [];
        let fail = true;
        const writer = new BatchWriter<number>({
            maxDelayMs: 10,
            write: async (batch) => {
                if (fail) throw new Error('disk full');
                stored.push(...batch);
            },
        });
        await writer.add(1);
        t.mock.timers.tick(10);
        await tick();
        await tick();
        await assert.rejects(writer.add(2), /disk full/);
        fail = false;
        await writer.add(2);
        await writer.flush();
        assert.deepEqual(stored, [1, 2]);
    });
});
