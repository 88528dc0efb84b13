/**
 * A site's results as versions, which is what reparse (parse/reparse.ts) needs: the current items,
 * quarantine and dead-letter to read, an empty next version to fill, and `promote()` to make the
 * next one current. Two backends have them: Crawlee datasets (datasets.ts, the embedded mode) and
 * PostgreSQL (postgres/results.ts, the distributed mode).
 */
import type { DeadLetterEntry } from '../vocabulary/failure.js';
import type { QuarantineEntry, StoredItem } from './records.js';

/** One store of a version, to read. */
export interface StoreReader<T> {
    /** Every record, in the order stored, read a batch at a time. */
    entries(): AsyncIterable<T>;
    count(): Promise<number>;
}

/** One store of the next version, to fill: records are written in batches; reading flushes first. */
export interface StoreSink<T> extends StoreReader<T> {
    push(record: T): Promise<void>;
    flush(): Promise<void>;
}

export interface SiteResults {
    current: {
        items: StoreReader<StoredItem>;
        quarantine: StoreReader<QuarantineEntry>;
        deadLetter: StoreReader<DeadLetterEntry>;
    };
    /** Empty when opened (what an earlier, unfinished reparse left is dropped). */
    next: {
        items: StoreSink<StoredItem>;
        quarantine: StoreSink<QuarantineEntry>;
        deadLetter: StoreSink<DeadLetterEntry>;
    };
    /**
     * The next version becomes the current one, and the current one `-previous`; the version before that is dropped.
     */
    promote(): Promise<void>;
}

/** Suffix of the next version's names while it is written. */
export const NEXT = '-reparsed';
/** Suffix of the version a promote replaced. */
export const PREVIOUS = '-previous';
