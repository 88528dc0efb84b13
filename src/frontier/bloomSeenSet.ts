/**
 * A seen-set in fixed memory: a Bloom filter sized from the expected number of URLs and the
 * accepted false-positive rate. The trade-off: a false positive says "seen" for a URL that was
 * not, and that URL is silently skipped. The filter cannot know which ones; it estimates how
 * many (`expectedSkipped`) from its fill level, and the run reports the estimate. The owners of
 * canonical claims, which a filter cannot hold, are kept beside it (`ClaimOwners`).
 */
import { createHash } from 'node:crypto';
import type { SeenSetReport } from '../vocabulary/report.js';
import { ClaimOwners, type SeenSet } from './seenSet.js';

export interface BloomSeenSetOptions {
    /** URLs the run is expected to see. Past it, the false-positive rate climbs. Default: 10 000 000. */
    expectedItems?: number;
    /** Accepted chance that a new URL is taken for a seen one. Default: 0.000001 (1e-6). */
    falsePositiveRate?: number;
}

export const BLOOM_DEFAULTS = { expectedItems: 10_000_000, falsePositiveRate: 1e-6 };

/** A filter's size: `bitCount` bits (m) and `hashCount` positions per key (k). */
export interface BloomSizing {
    bitCount: number;
    hashCount: number;
}

/** The textbook optimum for n expected items at rate p: m = -n ln p / (ln 2)^2 bits and k = (m / n) ln 2 hashes. */
export function bloomSizing(options: BloomSeenSetOptions = {}): BloomSizing {
    const expectedItems = options.expectedItems ?? BLOOM_DEFAULTS.expectedItems;
    const falsePositiveRate = options.falsePositiveRate ?? BLOOM_DEFAULTS.falsePositiveRate;
    if (!(expectedItems > 0)) throw new RangeError('expectedItems must be positive');
    if (!(falsePositiveRate > 0 && falsePositiveRate < 1))
        throw new RangeError('falsePositiveRate must be between 0 and 1');
    const bitCount = Math.ceil((-expectedItems * Math.log(falsePositiveRate)) / Math.LN2 ** 2);
    return { bitCount, hashCount: Math.max(1, Math.round((bitCount / expectedItems) * Math.LN2)) };
}

/**
 * The key's `hashCount` bit positions in a filter of `bitCount` bits. Double hashing
 * (Kirsch–Mitzenmacher): k positions from two hashes of one digest, kept under 2^53 so plain
 * arithmetic stays exact for filters past 2^32 bits.
 */
export function bloomPositions(key: string, hashCount: number, bitCount: number): number[] {
    const digest = createHash('md5').update(key).digest();
    const h1 = digest.readUIntLE(0, 6);
    const h2 = digest.readUIntLE(6, 5) * 2 + 1;
    return Array.from({ length: hashCount }, (_, i) => (h1 + i * h2) % bitCount);
}

export class BloomSeenSet implements SeenSet {
    readonly bitCount: number;
    readonly hashCount: number;
    private readonly bits: Uint8Array;
    private readonly claims = new ClaimOwners();
    private bitsSet = 0;
    private added = 0;
    /** Estimated new URLs answered "seen" so far. */
    expectedSkipped = 0;

    constructor(options: BloomSeenSetOptions = {}) {
        const sizing = bloomSizing(options);
        this.bitCount = sizing.bitCount;
        this.hashCount = sizing.hashCount;
        this.bits = new Uint8Array(Math.ceil(this.bitCount / 8));
    }

    async has(keys: readonly string[]): Promise<boolean[]> {
        return keys.map((key) => this.holds(bloomPositions(key, this.hashCount, this.bitCount)));
    }

    async add(keys: readonly string[]): Promise<boolean[]> {
        return keys.map((key) => this.addOne(key));
    }

    async claim(key: string, owner: string): Promise<boolean> {
        return this.claims.claim(key, owner, () => this.addOne(key));
    }

    get size(): number {
        return this.added;
    }

    describe(): SeenSetReport {
        return {
            kind: 'bloom',
            urls: this.added,
            expectedSkipped: Math.round(this.expectedSkipped * 100) / 100,
            falsePositiveRate: this.falsePositiveRate,
            bytes: this.bytes,
        };
    }

    /** Memory held by the bit array. */
    get bytes(): number {
        return this.bits.byteLength;
    }

    /** The chance, at the current fill, that a new URL is answered "seen". */
    get falsePositiveRate(): number {
        return (this.bitsSet / this.bitCount) ** this.hashCount;
    }

    private addOne(key: string): boolean {
        const positions = bloomPositions(key, this.hashCount, this.bitCount);
        if (this.holds(positions)) return false;
        // This URL got through; a new one like it would have been wrongly rejected with chance p,
        // so each accepted URL stands for p / (1 - p) rejected ones on average.
        const p = this.falsePositiveRate;
        this.expectedSkipped += p / (1 - p);
        for (const bit of positions) {
            if (!this.isSet(bit)) {
                const byte = Math.floor(bit / 8);
                this.bits[byte] = (this.bits[byte] ?? 0) | (1 << (bit % 8));
                this.bitsSet += 1;
            }
        }
        this.added += 1;
        return true;
    }

    /** Whether every one of a key's positions is set: the filter holds the key (or a false positive says so). */
    private holds(positions: readonly number[]): boolean {
        return positions.every((bit) => this.isSet(bit));
    }

    private isSet(bit: number): boolean {
        return ((this.bits[Math.floor(bit / 8)] ?? 0) & (1 << (bit % 8))) !== 0;
    }
}
