/**
 * The set of URL keys a run has already admitted, so a page enters the frontier once
 * whichever path, redirect or canonical link leads to it.
 */
import type { SeenSetReport } from '../vocabulary/report.js';

export interface SeenSet {
    /** For each key, whether the set holds it. */
    has(keys: readonly string[]): Promise<boolean[]>;
    /** Adds the keys; for each, whether it was new (a key repeated within the call is new once). */
    add(keys: readonly string[]): Promise<boolean[]>;
    /** How many keys it holds. */
    readonly size: number;
    describe(): SeenSetReport;
}

/** Exact, in memory: no false positives, about 100 bytes per URL. */
export class MemorySeenSet implements SeenSet {
    private readonly keys = new Set<string>();

    async has(keys: readonly string[]): Promise<boolean[]> {
        return keys.map((key) => this.keys.has(key));
    }

    async add(keys: readonly string[]): Promise<boolean[]> {
        return keys.map((key) => {
            if (this.keys.has(key)) return false;
            this.keys.add(key);
            return true;
        });
    }

    get size(): number {
        return this.keys.size;
    }

    describe(): SeenSetReport {
        return { kind: 'exact', urls: this.keys.size };
    }
}
