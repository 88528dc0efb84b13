/**
 * Crawlee's `RequestQueue` for the SQLite client: its in-process caches bounded, and its reclaim
 * without a second, late unlock.
 *
 * The caches: the SQLite client answers "is this request already here?" itself, in one index lookup.
 *
 * Crawlee 3.x's RequestQueue remembers every request it has added or fetched, to save round trips
 * to a remote API: an LRU of up to 2,000,000 entries (`requestCache`) and a 1,000,000-slot dedup
 * table (`requestSeenCache`). At a million queued requests that is ~0.5 GB of live heap, and with
 * V8's heap growth ~1.8 GB peak RSS (bench/frontier.ts). Bounded, a request that has fallen out of
 * them costs one more local client call: the dedup answer comes from the database, and a fetched
 * request is hydrated by `prolongRequestLock` + `getRequest` instead of from memory. Order is not
 * affected: the forefront flag Crawlee keeps in `requestCache` only re-sorts each head batch, which
 * the SQLite client already returns forefront-first.
 *
 *     const queue = await BoundedRequestQueue.open('http', { config });
 */
import { type Configuration, RequestProvider, RequestQueue, type RequestProviderOptions } from '@crawlee/core';

type SeenCache = BoundedRequestQueue['requestSeenCache'];

/**
 * A Crawlee RequestQueue field (3.18) the reclaim below sets as
 * Crawlee's own does: re-list soon, forefront requests are waiting.
 */
interface ForefrontFlag {
    shouldCheckForForefrontRequests: boolean;
}

export class BoundedRequestQueue extends RequestQueue {
    /** Most requests kept in Crawlee's request LRU (Crawlee: 2,000,000). ~400 bytes each. Default: 50,000. */
    static requestCacheSize = 50_000;
    /** Slots of Crawlee's uniqueKey dedup table (Crawlee: 1,000,000). ~100 bytes each when full. Default: 100,000. */
    static seenCacheSlots = 100_000;

    constructor(options: RequestProviderOptions, config?: Configuration) {
        super(options, config);
        const { requestCacheSize, seenCacheSlots } = this.constructor as typeof BoundedRequestQueue;
        // These are Crawlee internals (3.18): fail loudly if an upgrade renames them, rather than
        // silently growing again.
        if (
            typeof this.requestCache?.maxLength !== 'number' ||
            typeof this.requestSeenCache?.constructor !== 'function' ||
            // biome-ignore lint/plugin/noDoubleCast: the flag is private in Crawlee's types
            typeof (this as unknown as ForefrontFlag).shouldCheckForForefrontRequests !== 'boolean'
        ) {
            throw new Error(
                'BoundedRequestQueue: Crawlee RequestQueue internals changed (requestCache, requestSeenCache, ' +
                    'shouldCheckForForefrontRequests)',
            );
        }
        this.requestCache.maxLength = requestCacheSize;
        // The dedup table's size is fixed at construction; its class is not exported, so take it from the instance.
        const SeenCacheClass = this.requestSeenCache.constructor as new (slots: number) => SeenCache;
        this.requestSeenCache = new SeenCacheClass(seenCacheSlots);
    }

    /**
     * Crawlee's reclaim stores the request (`updateRequest`), then deletes its lock. The SQLite
     * client's `updateRequest` releases the lock itself (requestQueueClient.ts), so the delete could
     * only release a lock taken in between: another task of the crawler, listing the queue's head
     * meanwhile, locks the request again for its next attempt, and the delete would free it to be
     * handed out a second time while that attempt runs (seen: one URL dead-lettered twice). Here
     * the reclaim is the store alone.
     */
    override async reclaimRequest(
        ...[request, options]: Parameters<RequestQueue['reclaimRequest']>
    ): ReturnType<RequestQueue['reclaimRequest']> {
        const result = await RequestProvider.prototype.reclaimRequest.call(this, request, options);
        // biome-ignore lint/plugin/noDoubleCast: the flag is private in Crawlee's types
        if (result && options?.forefront) (this as unknown as ForefrontFlag).shouldCheckForForefrontRequests = true;
        return result;
    }

    /** Crawlee's own `open`, which builds the queue through the class it is called on: typed here only. */
    declare static open: (...args: Parameters<typeof RequestQueue.open>) => Promise<BoundedRequestQueue>;
}

// Crawlee's StorageManager picks the storage client's methods by class name ("RequestQueue" →
// `requestQueue()`/`requestQueues()`), so the subclass must answer to its parent's name.
Object.defineProperty(BoundedRequestQueue, 'name', { value: RequestQueue.name });
