/**
 * dragnet's Crawlee storage client: request queues and datasets in one SQLite file
 * (`<storageDir>/dragnet.sqlite`), where their per-operation cost stays flat at millions of rows;
 * key-value stores — Crawlee's small state records (session pool, statistics, …) — stay with
 * @crawlee/memory-storage, as files under the same dir, where they are no bottleneck (Crawlee's
 * statistics saved without secrets: scrubbedStatistics.ts).
 *
 *     const storage = new SqliteStorageClient({ storageDir });
 *     const config = new Configuration({ storageClient: storage });
 *     const queue = await RequestQueue.open('http', { config });
 *     …
 *     await storage.close();
 */
import { resolve } from 'node:path';
import { MemoryStorage } from '@crawlee/memory-storage';
import type {
    DatasetClient,
    DatasetCollectionClient,
    Dictionary,
    KeyValueStoreClient,
    KeyValueStoreCollectionClient,
    RequestQueueClient,
    RequestQueueCollectionClient,
    RequestQueueOptions,
    SetStatusMessageOptions,
    StorageClient,
} from '@crawlee/types';
import { openDatabase, releaseDatabase, type SqliteDb } from './database.js';
import {
    type IterateItemsOptions,
    iterateItems,
    SqliteDatasetClient,
    SqliteDatasetCollectionClient,
} from './datasetClient.js';
import { SqliteRequestQueueClient, SqliteRequestQueueCollectionClient } from './requestQueueClient.js';
import { releaseAllLocks } from './requestQueueSql.js';
import { scrubbingStatistics } from './scrubbedStatistics.js';

export interface SqliteStorageClientOptions {
    /** Root of all storage. Default: `CRAWLEE_STORAGE_DIR`, else `./storage`. */
    storageDir?: string;
    /**
     * Free every request lock in the database when the client is created. For one process resuming
     * a crawl that a crashed predecessor left with requests locked: without it they wait out their
     * lock (about the request handler timeout) before anyone can fetch them. Never set it while
     * another process is crawling from the same storage dir — its requests would be fetched twice.
     * Default: false.
     */
    releaseLocksOnOpen?: boolean;
    /** Hand out the requests of every queue in random order (see SqliteRequestQueueOptions). Default: false. */
    randomOrder?: boolean;
    /** Write key-value stores to disk (memory-storage's `persistStorage`). Default: true. */
    persistKeyValueStores?: boolean;
    /** How long (ms) to wait for another process's write lock on the database. Default: 5000. */
    busyTimeoutMs?: number;
    /** SQLite page cache in MiB (see database.ts for why it is larger than SQLite's 2). Default: 64. */
    cacheSizeMb?: number;
}

export class SqliteStorageClient implements StorageClient {
    readonly storageDir: string;
    readonly db: SqliteDb;
    private readonly keyValueStorage: MemoryStorage;
    private readonly randomOrder: boolean;
    private closed = false;

    constructor(options: SqliteStorageClientOptions = {}) {
        this.storageDir = resolve(options.storageDir ?? process.env.CRAWLEE_STORAGE_DIR ?? './storage');
        this.db = openDatabase(this.storageDir, {
            busyTimeoutMs: options.busyTimeoutMs,
            cacheSizeMb: options.cacheSizeMb,
        });
        if (options.releaseLocksOnOpen) releaseAllLocks(this.db);
        this.randomOrder = options.randomOrder ?? false;
        this.keyValueStorage = new MemoryStorage({
            localDataDirectory: this.storageDir,
            persistStorage: options.persistKeyValueStores ?? true,
        });
    }

    requestQueues(): RequestQueueCollectionClient {
        return new SqliteRequestQueueCollectionClient(this.db);
    }

    requestQueue(id: string, options?: RequestQueueOptions): RequestQueueClient {
        return new SqliteRequestQueueClient(this.db, id, options, { randomOrder: this.randomOrder });
    }

    datasets(): DatasetCollectionClient {
        return new SqliteDatasetCollectionClient(this.db);
    }

    dataset<Data extends Dictionary = Dictionary>(id: string): DatasetClient<Data> {
        return new SqliteDatasetClient<Data>(this.db, id);
    }

    keyValueStores(): KeyValueStoreCollectionClient {
        return this.keyValueStorage.keyValueStores();
    }

    keyValueStore(id: string): KeyValueStoreClient {
        return scrubbingStatistics(this.keyValueStorage.keyValueStore(id));
    }

    async setStatusMessage(message: string, options?: SetStatusMessageOptions): Promise<void> {
        await this.keyValueStorage.setStatusMessage(message, options);
    }

    /** Every item of a dataset, read in batches (see `iterateItems` in datasetClient.ts). */
    iterateItems<T extends Dictionary = Dictionary>(
        datasetIdOrName: string,
        options?: IterateItemsOptions,
    ): AsyncGenerator<T> {
        return iterateItems<T>(this.db, datasetIdOrName, options);
    }

    /**
     * What Crawlee runs on start when `purgeOnStart` is set, as memory-storage does it: empties the
     * default request queue and dataset (named `default`) and Crawlee's temporary ones, and the
     * default key-value store except its INPUT. Named storages are kept.
     */
    async purge(): Promise<void> {
        await this.keyValueStorage.purge();
        for (const { name } of (await this.requestQueues().list()).items) {
            if (isPurgedOnStart(name)) await this.requestQueue(name).delete();
        }
        for (const { name } of (await this.datasets().list()).items) {
            if (isPurgedOnStart(name)) await this.dataset(name).delete();
        }
    }

    /**
     * Waits for key-value store writes and checkpoints the database. The database stays open:
     * Crawlee's crawlers call `teardown()` at the end of every `run()`, and the same storage is
     * used again by the next one. `close()` ends it.
     */
    async teardown(): Promise<void> {
        await this.keyValueStorage.teardown();
        if (!this.closed) this.db.pragma('wal_checkpoint(PASSIVE)');
    }

    /** `teardown()`, then lets go of the database (closed once the last client on this dir lets go). */
    async close(): Promise<void> {
        await this.teardown();
        if (this.closed) return;
        this.closed = true;
        releaseDatabase(this.storageDir);
    }
}

function isPurgedOnStart(name: string | undefined): name is string {
    return name === 'default' || (name?.startsWith('__CRAWLEE_TEMPORARY') ?? false);
}
