/**
 * What Crawlee's `DatasetClient.listItems()` returns: awaited, one page (`getData()`); iterated with
 * `for await`, every item (`dataset.values()`). Unlike memory-storage's, which loads the whole first
 * page as soon as it is created, nothing is read until one of the two is used, so iterating a large
 * dataset reads it in batches and never holds it in memory.
 */
import type { PaginatedList } from '@crawlee/types';

export class PageListing<T> implements Promise<PaginatedList<T>>, AsyncIterable<T> {
    readonly [Symbol.toStringTag] = 'Promise';
    private page: Promise<PaginatedList<T>> | undefined;

    constructor(
        private readonly readPage: () => PaginatedList<T>,
        private readonly iterate: () => AsyncIterator<T>,
    ) {}

    // biome-ignore lint/suspicious/noThenProperty: Crawlee's listItems() must return a thenable (awaited: one page)
    then<A = PaginatedList<T>, B = never>(
        onfulfilled?: ((value: PaginatedList<T>) => A | PromiseLike<A>) | null,
        onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
    ): Promise<A | B> {
        return this.settle().then(onfulfilled, onrejected);
    }

    catch<B = never>(onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<PaginatedList<T> | B> {
        return this.settle().catch(onrejected);
    }

    finally(onfinally?: (() => void) | null): Promise<PaginatedList<T>> {
        return this.settle().finally(onfinally);
    }

    [Symbol.asyncIterator](): AsyncIterator<T> {
        return this.iterate();
    }

    private settle(): Promise<PaginatedList<T>> {
        // Read on first use, once; later awaits see the same page.
        this.page ??= new Promise((resolve) => resolve(this.readPage()));
        return this.page;
    }
}
