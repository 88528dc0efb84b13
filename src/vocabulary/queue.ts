/**
 * What the pipeline asks of a stage's queue, whichever backend holds it: Crawlee's request
 * manager (what a crawler fetches from, marks handled and reclaims to), plus adding requests at
 * the back or the front. The embedded backend is Crawlee's own `RequestQueue` over SQLite
 * (store/sqlite/); the distributed one is a BullMQ queue in Redis (frontier/redis/jobQueue.ts).
 * Crawlee's crawlers take either through their `requestManager` option.
 */
import type { IRequestManager, RequestOptions } from '@crawlee/core';

export interface FrontierQueue extends IRequestManager {
    /** Adds requests at the back, or with `forefront` at the front. (One, `addRequest`, says `wasAlreadyPresent` when a request of its unique key is queued or in work.) */
    addRequests(requests: RequestOptions[], options?: { forefront?: boolean }): Promise<unknown>;
}
