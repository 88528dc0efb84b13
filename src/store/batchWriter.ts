/**
 * Collects records and hands them to storage in batches: when `maxBatchSize` is reached,
 * after `maxDelayMs`, and on `flush()`/`close()`. Storage calls are serialized so batches
 * land in the order they were collected.
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
    private writing: Promise<void> = Promise.resolve();

    constructor(options: BatchWriterOptions<T>) {
        this.write = options.write;
        this.maxBatchSize = options.maxBatchSize ?? 100;
        this.maxDelayMs = options.maxDelayMs ?? 1000;
    }

    /** Queues a record; resolves once it is queued, and waits for storage only when a batch is full. */
    async add(record: T): Promise<void> {
        this.pending.push(record);
        if (this.pending.length >= this.maxBatchSize) {
            await this.flush();
        } else {
            this.timer ??= setTimeout(() => void this.flush(), this.maxDelayMs);
        }
    }

    /** Writes everything queued so far; resolves when it is stored. */
    async flush(): Promise<void> {
        clearTimeout(this.timer);
        this.timer = undefined;
        const batch = this.pending;
        this.pending = [];
        if (batch.length > 0) {
            this.writing = this.writing.then(() => this.write(batch));
        }
        await this.writing;
    }
}
