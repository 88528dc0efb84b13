/**
 * The Crawlee datasets of a site: parsed items, quarantine and dead-letter, each written in
 * batches. Names are fixed here so every command (run, export, reparse) finds the same stores.
 */
import { Configuration, Dataset } from '@crawlee/core';
import { BatchWriter } from './batchWriter.js';
import { SqliteStorageClient, type SqliteStorageClientOptions } from './sqlite/storageClient.js';

/**
 * Crawlee storage under `storageDir`: request queues and datasets in one SQLite file (their cost
 * per operation stays flat at millions of rows), Crawlee's small key-value records as files.
 * `close()` when done.
 */
export function openStorage(
    storageDir: string,
    options: Omit<SqliteStorageClientOptions, 'storageDir'> = {},
): { config: Configuration; storage: SqliteStorageClient } {
    const storage = new SqliteStorageClient({ storageDir, ...options });
    return { config: new Configuration({ storageClient: storage, purgeOnStart: false }), storage };
}

export type StoreNames = ReturnType<typeof storeNames>;

/** The storage names of a site's stores. */
export function storeNames(site: string) {
    return {
        items: site,
        quarantine: `${site}-quarantine`,
        deadLetter: `${site}-dead-letter`,
        httpQueue: `${site}-http`,
        browserQueue: `${site}-browser`,
    };
}

/** A dataset that takes records one by one and stores them in batches. */
export class DatasetSink<T extends Record<string, unknown>> {
    private readonly writer: BatchWriter<T>;

    private constructor(readonly dataset: Dataset<T>) {
        this.writer = new BatchWriter({ write: (batch) => dataset.pushData(batch) });
    }

    static async open<T extends Record<string, unknown>>(name: string, config: Configuration): Promise<DatasetSink<T>> {
        return new DatasetSink(await Dataset.open<T>(name, { config }));
    }

    async push(record: T): Promise<void> {
        await this.writer.add(record);
    }

    async flush(): Promise<void> {
        await this.writer.flush();
    }

    /** Stored records (flushes first). */
    async count(): Promise<number> {
        await this.flush();
        return (await this.dataset.getInfo())?.itemCount ?? 0;
    }
}
