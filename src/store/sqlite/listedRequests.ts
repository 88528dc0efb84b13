/**
 * The requests a queue client's `listAndLockHead` has just locked, as it read them. Crawlee prolongs
 * and hydrates each of them next (its `getOrHydrateRequest`: `prolongRequestLock`, then `getRequest`),
 * which would read the row twice more and parse again what the listing parsed; those two calls are
 * answered from here. Only this client changes a request it holds locked (the site lock keeps other
 * processes off the queue, store/siteLock.ts), and each of its own changes to a request forgets it
 * here first. An entry is hydrated once.
 */
import type { RequestOptions, RequestQueueHeadItem } from '@crawlee/types';

/** A stored request: a head item for the listing, the request's options for hydrating it. */
export type ListedRequest = RequestQueueHeadItem & RequestOptions;

/** Entries kept at most: Crawlee lists 25 at a time, so only requests it never asks about again pile up. */
const MAX_ENTRIES = 10_000;

export class ListedRequests {
    private readonly entries = new Map<string, { request: ListedRequest; lockedUntil: number }>();

    /** The request as `listAndLockHead` read and locked it, until `lockedUntil`; returns it. */
    remember(request: ListedRequest, lockedUntil: number): ListedRequest {
        if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
        this.entries.set(request.id, { request, lockedUntil });
        return request;
    }

    /** Until when this client holds the lock it listed the request with; undefined when it does not know. */
    lockedUntil(id: string): number | undefined {
        return this.entries.get(id)?.lockedUntil;
    }

    /** The listed request, once, while its lock still holds. */
    take(id: string, now: number): ListedRequest | undefined {
        const entry = this.entries.get(id);
        this.entries.delete(id);
        return entry && entry.lockedUntil > now ? entry.request : undefined;
    }

    /** Before this client changes the request. */
    forget(id: string): void {
        this.entries.delete(id);
    }

    /** Before this client changes many requests at once. */
    clear(): void {
        this.entries.clear();
    }
}
