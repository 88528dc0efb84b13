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
    /**
     * Adds one key on behalf of `owner`, a page claiming it as its canonical URL: true when the key
     * was new, or when the same owner claimed it before (the page's retry, on any worker); false
     * when it came in otherwise (as a link, or another page's claim).
     */
    claim(key: string, owner: string): Promise<boolean>;
    /** How many keys it holds. */
    readonly size: number;
    describe(): SeenSetReport;
}

/** Exact, in memory: no false positives, about 100 bytes per URL. */
export class MemorySeenSet implements SeenSet {
    private readonly keys = new Set<string>();
    private readonly claims = new ClaimOwners();

    async has(keys: readonly string[]): Promise<boolean[]> {
        return keys.map((key) => this.keys.has(key));
    }

    async add(keys: readonly string[]): Promise<boolean[]> {
        return keys.map((key) => this.addOne(key));
    }

    async claim(key: string, owner: string): Promise<boolean> {
        return this.claims.claim(key, owner, () => this.addOne(key));
    }

    get size(): number {
        return this.keys.size;
    }

    describe(): SeenSetReport {
        return { kind: 'exact', urls: this.keys.size };
    }

    private addOne(key: string): boolean {
        if (this.keys.has(key)) return false;
        this.keys.add(key);
        return true;
    }
}

/**
 * Who claimed which key, for the in-memory sets: few keys, one per page reached by another URL
 * than its canonical one, held for the run.
 */
export class ClaimOwners {
    private readonly owners = new Map<string, string>();

    /** SeenSet.claim, with `add` adding the key to the set and saying whether it was new. */
    claim(key: string, owner: string, add: () => boolean): boolean {
        const claimant = this.owners.get(key);
        if (claimant !== undefined) return claimant === owner;
        if (!add()) return false;
        this.owners.set(key, owner);
        return true;
    }
}
