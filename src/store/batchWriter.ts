/**
 * Collects records and hands them to storage in batches: when `maxBatchSize` is reached,
 * after `maxDelayMs`, and on `flush()`. Writes are serialized so batches land in the order
 * they were collected. A failed write loses nothing: its records go back to the front of the
 * queue for the next flush, and the error reaches the next caller of `add()` or `flush()`.
 */

export interface BatchWriterOptions<T> {
    /** Writes one batch; called with at least one record. */
    write: (batch: T[]) => Promise<void>;
    /** Records per batch. Default: 100. */
    maxBatchSize?: number;
    /** The longest a record waits before its batch is written. Default: 1000 ms. */
    maxDelayMs?: number;
}

export class BatchWriter<T> {
    private readonly write: (batch: T[]) => Promise<void>;
    private readonly maxBatchSize: number;
    private readonly maxDelayMs: number;
    private pending: T[] = [];
    private timer: NodeJS.Timeout | undefined;
    /** The last write in the chain; never rejects, so one failure does not stop later batches. */
    private writing: Promise<void> = Promise.resolve();
    /** A failure of a timed flush, kept for the next caller. */
    private unreported: unknown;

    constructor(options: BatchWriterOptions<T>) {
        this.write = options.write;
        this.maxBatchSize = options.maxBatchSize ?? 100;
        this.maxDelayMs = options.maxDelayMs ?? 1000;
    }

    /** Queues a record; waits for storage only when a batch is full. */
    async add(record: T): Promise<void> {
        this.throwUnreported();
        this.pending.push(record);
        if (this.pending.length >= this.maxBatchSize) {
            await this.flush();
        } else {
            this.timer ??= setTimeout(() => {
                this.flush().catch((error: unknown) => {
                    this.unreported = error;
                });
            }, this.maxDelayMs);
        }
    }

    /** Writes everything queued so far; resolves when it is stored. */
    async flush(): Promise<void> {
        this.throwUnreported();
        clearTimeout(this.timer);
        this.timer = undefined;
        const batch = this.pending;
        this.pending = [];
        if (batch.length === 0) return this.writing;
        const written = this.writing.then(() => this.write(batch));
        this.writing = written.catch(() => undefined);
        try {
            await written;
        } catch (error) {
            this.pending.unshift(...batch);
            throw error;
        }
    }

    private throwUnreported(): void {
        if (this.unreported === undefined) return;
        const error = this.unreported;
        this.unreported = undefined;
        throw error;
    }
}
