/**
 * The Crawlee datasets of a site: parsed items, quarantine and dead-letter, each written in
 * batches. Names are fixed here so every command (run, export, reparse) finds the same stores.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { Configuration, Dataset } from '@crawlee/core';
import { readOwnMemoryWithoutChildren } from '../monitor/memoryReadings.js';
import type { DeadLetterEntry } from '../vocabulary/failure.js';
import { BatchWriter } from './batchWriter.js';
import type { QuarantineEntry, StoredItem } from './records.js';
import { NEXT, PREVIOUS, type SiteResults, type StoreReader, type StoreSink } from './siteResults.js';
import { DATABASE_FILE, openDatabase, releaseDatabase } from './sqlite/database.js';
import { SqliteStorageClient, type SqliteStorageClientOptions } from './sqlite/storageClient.js';
import { StorageTable } from './sqlite/storageTable.js';

/**
 * Crawlee storage under `storageDir`: request queues and datasets in one SQLite file (their cost
 * per operation stays flat at millions of rows), Crawlee's small key-value records as files.
 * `memoryMbytes`: the autoscaled pools' memory ceiling (see runtime/memoryBudget.ts); default: Crawlee's,
 * a quarter of the machine's memory. `close()` when done.
 */
export function openStorage(
    storageDir: string,
    options: Omit<SqliteStorageClientOptions, 'storageDir'> = {},
    memoryMbytes?: number,
): { config: Configuration; storage: SqliteStorageClient } {
    const storage = new SqliteStorageClient({ storageDir, ...options });
    return {
        config: readOwnMemoryWithoutChildren(
            new Configuration({ storageClient: storage, purgeOnStart: false, memoryMbytes }),
        ),
        storage,
    };
}

/** Whether a run stored a dataset called `name` in `storageDir`. Creates nothing, not even the database. */
export function hasStoredDataset(storageDir: string, name: string): boolean {
    if (!existsSync(resolve(storageDir, DATABASE_FILE))) return false;
    const db = openDatabase(storageDir);
    try {
        return StorageTable.of(db, 'datasets').find(name) !== undefined;
    } finally {
        releaseDatabase(storageDir);
    }
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

/** The dataset's records in order, a page of `pageSize` at a time. */
export async function* datasetItems<T extends Record<string, unknown>>(
    dataset: Dataset<T>,
    pageSize = 1000,
): AsyncGenerator<T> {
    for (let offset = 0; ; offset += pageSize) {
        const page = await dataset.getData({ offset, limit: pageSize });
        yield* page.items as T[];
        if (page.items.length < pageSize) return;
    }
}

/**
 * The site's results as versions of its datasets (siteResults.ts): the next version is written
 * as `<name>-reparsed`; promoting renames the current one `<name>-previous` and the next one `<name>`.
 */
export async function datasetResults(site: string, config: Configuration): Promise<SiteResults> {
    const names = storeNames(site);
    const stores = [names.items, names.quarantine, names.deadLetter];
    for (const name of stores) await (await Dataset.open(`${name}${NEXT}`, { config })).drop();
    const reader = async <T extends Record<string, unknown>>(name: string): Promise<StoreReader<T>> => {
        const dataset = await Dataset.open<T>(name, { config });
        return { entries: () => datasetItems(dataset), count: async () => (await dataset.getInfo())?.itemCount ?? 0 };
    };
    const sink = async <T extends Record<string, unknown>>(name: string): Promise<StoreSink<T>> => {
        const records = await DatasetSink.open<T>(`${name}${NEXT}`, config);
        return {
            push: (record) => records.push(record),
            flush: () => records.flush(),
            count: () => records.count(),
            entries: async function* () {
                await records.flush();
                yield* datasetItems(records.dataset);
            },
        };
    };
    return {
        current: {
            items: await reader<StoredItem>(names.items),
            quarantine: await reader<QuarantineEntry>(names.quarantine),
            deadLetter: await reader<DeadLetterEntry>(names.deadLetter),
        },
        next: {
            items: await sink<StoredItem>(names.items),
            quarantine: await sink<QuarantineEntry>(names.quarantine),
            deadLetter: await sink<DeadLetterEntry>(names.deadLetter),
        },
        promote: async () => {
            for (const name of stores) await promote(config, name);
        },
    };
}

/** Makes `<name>-reparsed` the dataset called `name`; the current one becomes `<name>-previous`. */
async function promote(config: Configuration, name: string): Promise<void> {
    const client = config.getStorageClient();
    await (await Dataset.open(`${name}${PREVIOUS}`, { config })).drop();
    const current = await Dataset.open(name, { config });
    await client.dataset(current.id).update({ name: `${name}${PREVIOUS}` });
    const next = await Dataset.open(`${name}${NEXT}`, { config });
    await client.dataset(next.id).update({ name });
}
