/**
 * The set of URL keys a run has already admitted, so a page enters the frontier once
 * whichever path, redirect or canonical link leads to it.
 */

/** What a seen-set says about itself in the run summary. */
export interface SeenSetReport {
    kind: 'exact' | 'bloom';
    urls: number;
    /** Bloom: estimated new URLs wrongly answered "seen", hence skipped. */
    expectedSkipped?: number;
    /** Bloom: the chance of that at the current fill. */
    falsePositiveRate?: number;
    /** Bloom: memory held. */
    bytes?: number;
}

export interface SeenSet {
    /** Adds the keys; for each, whether it was new (a key repeated within the call is new once). */
    add(keys: readonly string[]): Promise<boolean[]>;
    /** How many keys it holds. */
    readonly size: number;
    describe(): SeenSetReport;
}

/** Exact, in memory: no false positives, about 100 bytes per URL. */
export class MemorySeenSet implements SeenSet {
    private readonly keys = new Set<string>();

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
