/**
 * Crawlee's `RequestQueue` with its in-process caches bounded, for a queue whose storage client
 * answers "is this request already here?" itself — the SQLite client does, in one index lookup.
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
import { type Configuration, RequestQueue, type RequestProviderOptions } from '@crawlee/core';

type SeenCache = BoundedRequestQueue['requestSeenCache'];

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
        if (typeof this.requestCache?.maxLength !== 'number' || typeof this.requestSeenCache?.constructor !== 'function') {
            throw new Error('BoundedRequestQueue: Crawlee RequestQueue internals changed (requestCache, requestSeenCache)');
        }
        this.requestCache.maxLength = requestCacheSize;
        // The dedup table's size is fixed at construction; its class is not exported, so take it from the instance.
        const SeenCacheClass = this.requestSeenCache.constructor as new (slots: number) => SeenCache;
        this.requestSeenCache = new SeenCacheClass(seenCacheSlots);
    }

    static override async open(...args: Parameters<typeof RequestQueue.open>): Promise<BoundedRequestQueue> {
        return (await super.open(...args)) as BoundedRequestQueue;
    }
}

// Crawlee's StorageManager picks the storage client's methods by class name ("RequestQueue" →
// `requestQueue()`/`requestQueues()`), so the subclass must answer to its parent's name.
Object.defineProperty(BoundedRequestQueue, 'name', { value: RequestQueue.name });
