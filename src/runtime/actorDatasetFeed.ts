/**
 * The site's items, fed into the actor's default dataset while the run stores them (runtime/actor.ts).
 * Every `intervalSecs` the items the site's dataset holds past those already pushed are pushed, a
 * batch at a time, and how far the feed got is saved in the actor's key-value store after each
 * batch. So the same actor run going on (after a migration) goes on from there, and a new actor run
 * (whose storages start empty) pushes the site's dataset from its first item, a resumed crawl's
 * earlier sessions included: the actor's dataset ends as the site's dataset is. The feed follows the
 * dataset, not the stages: only committed items reach it, and the pipeline knows nothing of it. A
 * crash between a push and its save (or a save that fails) pushes that batch again.
 *
 * Which dataset is this run's: a crawl empties the stores of a finished run when it opens them
 * (wiring/open.ts), which is after the feed starts. So a dataset the feed has not pushed from is
 * taken as this run's once it was created or written since the feed started, or once the crawl has
 * returned; before that it may be the one about to be emptied.
 *
 * The feed reads the embedded backend's SQLite dataset, through its own client on the storage dir
 * (the database is shared within the process: store/sqlite/database.ts).
 */
import type { Dictionary } from '@crawlee/types';
import type { Logger } from 'pino';
import { SqliteStorageClient } from '../store/sqlite/storageClient.js';

/**
 * Where the items go: the actor's default dataset, and its default
 * key-value store for the feed's progress. Apify's `Actor` has these.
 */
export interface ActorStorages {
    pushData(items: Dictionary[]): Promise<unknown>;
    getValue<T>(key: string): Promise<T | null>;
    setValue(key: string, value: unknown): Promise<unknown>;
}

export interface ActorDatasetFeedOptions {
    storageDir: string;
    /** The site's dataset of items (storeNames(site).items). */
    dataset: string;
    actor: ActorStorages;
    log: Logger;
    /** Time between pushes. Default: 2 s. */
    intervalSecs?: number;
    /** Most items read and pushed at once; the SDK splits a push into requests of at most 9 MB. Default: 500. */
    batchSize?: number;
    /** The key-value record that says how far the feed got. Default: `DRAGNET_DATASET_FEED`. */
    progressKey?: string;
}

/** How far the feed got: `pushed` items of the site's dataset with this id. */
interface FeedProgress {
    dataset: string;
    pushed: number;
}

const FEED_DEFAULTS = { intervalSecs: 2, batchSize: 500, progressKey: 'DRAGNET_DATASET_FEED' };

export class ActorDatasetFeed {
    private readonly storage: SqliteStorageClient;
    private readonly startedAt = Date.now();
    private readonly intervalMs: number;
    private readonly batchSize: number;
    private readonly progressKey: string;
    private progress: FeedProgress | undefined;
    private following: Promise<void> | undefined;
    private stopping = false;
    private wake: (() => void) | undefined;

    private constructor(private readonly options: ActorDatasetFeedOptions) {
        this.storage = new SqliteStorageClient({ storageDir: options.storageDir, persistKeyValueStores: false });
        this.intervalMs = (options.intervalSecs ?? FEED_DEFAULTS.intervalSecs) * 1000;
        this.batchSize = options.batchSize ?? FEED_DEFAULTS.batchSize;
        this.progressKey = options.progressKey ?? FEED_DEFAULTS.progressKey;
    }

    /** Starts feeding; call it before the crawl opens its stores. */
    static async start(options: ActorDatasetFeedOptions): Promise<ActorDatasetFeed> {
        const feed = new ActorDatasetFeed(options);
        feed.progress = (await options.actor.getValue<FeedProgress>(feed.progressKey)) ?? undefined;
        feed.following = feed.follow();
        return feed;
    }

    /** Items pushed of the site's dataset. */
    get pushed(): number {
        return this.progress?.pushed ?? 0;
    }

    /**
     * Stops feeding after a last push of everything: for a crawl that returned, so the site's dataset is this run's.
     */
    async finish(): Promise<void> {
        await this.stopFollowing();
        try {
            await this.pushNew(true);
            this.options.log.info({ pushed: this.pushed }, `the actor's dataset holds the site's ${this.pushed} items`);
        } finally {
            await this.storage.close();
        }
    }

    /**
     * Stops feeding after a crawl failed: a last push of a dataset
     * already taken as this run's; a push that fails is logged.
     */
    async abandon(): Promise<void> {
        await this.stopFollowing();
        try {
            await this.pushNew(false);
        } catch (error) {
            this.options.log.error(
                { err: error },
                `the actor's dataset: the last push failed (${(error as Error).message}); ${this.pushed} items were ` +
                    `pushed`,
            );
        } finally {
            await this.storage.close();
        }
    }

    private async stopFollowing(): Promise<void> {
        this.stopping = true;
        this.wake?.();
        await this.following;
    }

    private async follow(): Promise<void> {
        while (!this.stopping) {
            try {
                await this.pushNew(false);
            } catch (error) {
                this.options.log.warn(
                    { err: error },
                    `the actor's dataset: a push failed (${(error as Error).message}); trying again ` +
                        `in ${this.intervalMs / 1000} s`,
                );
            }
            await new Promise<void>((resolve) => {
                const timer = setTimeout(resolve, this.intervalMs);
                this.wake = () => {
                    clearTimeout(timer);
                    resolve();
                };
            });
        }
    }

    /**
     * Pushes the items past those pushed; `crawled`: the crawl has returned,
     * so the site's dataset is this run's whenever it was written.
     */
    private async pushNew(crawled: boolean): Promise<void> {
        const info = await this.storage.dataset(this.options.dataset).get();
        if (!info) return;
        if (this.progress?.dataset !== info.id) {
            if (!crawled && info.modifiedAt.getTime() < this.startedAt) return;
            if (this.progress)
                this.options.log.info(
                    `the actor's dataset: the site's dataset was started over; pushing it from its first item`,
                );
            this.progress = { dataset: info.id, pushed: 0 };
        }
        const { actor } = this.options;
        while (this.progress.pushed < info.itemCount) {
            const limit = Math.min(this.batchSize, info.itemCount - this.progress.pushed);
            const items: Dictionary[] = [];
            for await (const item of this.storage.iterateItems(info.id, { offset: this.progress.pushed, limit }))
                items.push(item);
            await actor.pushData(items);
            this.progress = { dataset: info.id, pushed: this.progress.pushed + items.length };
            await actor.setValue(this.progressKey, this.progress);
        }
    }
}
