/**
 * Writes records as they come, in batches that form by themselves (a group commit): a write takes
 * every record that arrived while the one before it was under way, up to `maxBatchSize`. Nothing
 * waits on a timer, so a record is stored within about one write of being added; under load the
 * batches grow and the writes stay few.
 *
 * Unlike BatchWriter, `add()` resolves only once its record is stored. That lets a caller commit
 * what depends on the record after it is on disk: a page's items are committed only after the raw
 * page they were parsed from is written, so a killed process never keeps an item without its page.
 * A failed write rejects the `add()` of every record in it and forgets them: each caller still
 * holds its record and decides what to do (the crawl retries the request).
 */

export interface GroupWriterOptions<T> {
    /** Writes one batch, in order; called with at least one record, never twice at once. */
    write: (batch: T[]) => Promise<void>;
    /** Most records per write. Default: 50. */
    maxBatchSize?: number;
}

interface Waiting<T> {
    record: T;
    stored: () => void;
    failed: (error: unknown) => void;
}

export class GroupWriter<T> {
    private readonly write: (batch: T[]) => Promise<void>;
    private readonly maxBatchSize: number;
    private queue: Waiting<T>[] = [];
    /** The write under way, if any; never rejects. */
    private writing: Promise<void> | undefined;

    constructor(options: GroupWriterOptions<T>) {
        this.write = options.write;
        this.maxBatchSize = options.maxBatchSize ?? 50;
    }

    /** Stores a record: resolves once it is written, rejects if its write failed. */
    add(record: T): Promise<void> {
        return new Promise((stored, failed) => {
            this.queue.push({ record, stored, failed });
            this.writing ??= this.writeQueued();
        });
    }

    /** Resolves once every record added so far has been written (or its write has failed). */
    async flush(): Promise<void> {
        while (this.writing) await this.writing;
    }

    private async writeQueued(): Promise<void> {
        while (this.queue.length > 0) {
            const batch = this.queue.splice(0, this.maxBatchSize);
            try {
                await this.write(batch.map((waiting) => waiting.record));
                for (const waiting of batch) waiting.stored();
            } catch (error) {
                for (const waiting of batch) waiting.failed(error);
            }
        }
        this.writing = undefined;
    }
}
