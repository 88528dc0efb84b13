import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';

import { GroupWriter } from '../../src/store/groupWriter.js';

/** A writer whose storage records every batch it is handed; each write takes until `release()` when `manual`. */
function recordingWriter(
    options: { maxBatchSize?: number; manual?: boolean; failWhen?: (batch: number[]) => boolean } = {},
) {
    const batches: number[][] = [];
    const releases: (() => void)[] = [];
    let writesAtOnce = 0;
    let mostAtOnce = 0;
    const writer = new GroupWriter<number>({
        maxBatchSize: options.maxBatchSize,
        write: async (batch) => {
            mostAtOnce = Math.max(mostAtOnce, ++writesAtOnce);
            try {
                if (options.manual) await new Promise<void>((resolve) => releases.push(resolve));
                if (options.failWhen?.(batch)) throw new Error('disk full');
                batches.push([...batch]);
            } finally {
                writesAtOnce -= 1;
            }
        },
    });
    const release = async () => {
        releases.shift()?.();
        await tick();
    };
    return { writer, batches, release, mostAtOnce: () => mostAtOnce };
}

describe('GroupWriter', () => {
    it('add() resolves only once its record is written', async () => {
        const { writer, batches, release } = recordingWriter({ manual: true });
        let stored = false;
        const added = writer.add(1).then(() => (stored = true));
        await tick();
        assert.equal(stored, false, 'not before the write is done');
        await release();
        await added;
        assert.deepEqual(batches, [[1]]);
    });

    it(`writes at once, and records that arrive during a write \
go together in the next, at most maxBatchSize`, async () => {
        const { writer, batches, release, mostAtOnce } = recordingWriter({ maxBatchSize: 3, manual: true });
        const adds = [writer.add(1)];
        await tick();
        for (let record = 2; record <= 8; record++) adds.push(writer.add(record));
        for (let i = 0; i < 4; i++) await release();
        await Promise.all(adds);
        assert.deepEqual(batches, [[1], [2, 3, 4], [5, 6, 7], [8]]);
        assert.equal(mostAtOnce(), 1, 'one write at a time');
    });

    it(`a failed write rejects the add() of each of its records \
and forgets them; later records are written`, async () => {
        const { writer, batches, release } = recordingWriter({ manual: true, failWhen: (batch) => batch.includes(2) });
        const first = writer.add(1);
        await tick();
        const failing = [writer.add(2), writer.add(3)].map((add) => assert.rejects(add, /disk full/));
        await release(); // [1] is stored, [2, 3] is being written
        await first;
        const later = writer.add(4);
        await release();
        await Promise.all(failing);
        await release();
        await later;
        assert.deepEqual(batches, [[1], [4]]);
    });

    it(`flush() resolves once the writes under way and queued \
have landed, and at once when there are none`, async () => {
        const { writer, batches, release } = recordingWriter({ manual: true });
        await writer.flush();
        void writer.add(1);
        await tick();
        void writer.add(2);
        let flushed = false;
        const flushing = writer.flush().then(() => (flushed = true));
        await release();
        assert.equal(flushed, false, 'the second write is still to come');
        await release();
        await flushing;
        assert.deepEqual(batches, [[1], [2]]);
    });

    it('uses the documented default of 50 records per write', async () => {
        const { writer, batches, release } = recordingWriter({ manual: true });
        const adds = [writer.add(0)];
        await tick();
        for (let record = 1; record <= 120; record++) adds.push(writer.add(record));
        for (let i = 0; i < 4; i++) await release();
        await Promise.all(adds);
        assert.deepEqual(
            batches.map((batch) => batch.length),
            [1, 50, 50, 20],
        );
        assert.deepEqual(
            batches.flat(),
            Array.from({ length: 121 }, (_, index) => index),
        );
    });
});
