/** Seeded randomness for the fixture shop (catalog.ts): streams, picks and shuffles. */

/** A small, fast, seedable PRNG (mulberry32); returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
    let state = seed >>> 0;
    return () => {
        state = (state + 0x6d2b79f5) >>> 0;
        let t = state;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

export type Random = () => number;

/** A stream of its own for the given seed, independent of `mulberry32(seed)` and of the other ids. */
export function substream(seed: number, id: number): Random {
    return mulberry32((seed ^ Math.imul(id, 0x9e3779b9)) >>> 0);
}

/** `Math.round(rate * count)` distinct ids from 1..count, in random order. */
export function pickShare(random: Random, count: number, rate: number): number[] {
    const ids = Array.from({ length: count }, (_, i) => i + 1);
    return shuffled(random, ids).slice(0, Math.round(rate * count));
}

/** Up to `count` distinct items of `pool` (which holds `except`) other than `except`. */
export function sampleOthers<T extends NonNullable<unknown>>(
    random: Random,
    pool: readonly T[],
    count: number,
    except: T,
): T[] {
    const chosen = new Set<T>();
    const wanted = Math.min(count, pool.length - 1);
    // Rejection sampling: cheap because `count` is tiny next to the pool.
    while (chosen.size < wanted) {
        const item = pick(random, pool);
        if (item !== except) chosen.add(item);
    }
    return [...chosen];
}

// The list helpers take no undefined items, so an undefined read is an index out of range.

export function pick<T extends NonNullable<unknown>>(random: Random, items: readonly T[]): T {
    const item = items[Math.floor(random() * items.length)];
    if (item === undefined) throw new RangeError('pick from an empty list');
    return item;
}

/** The item whose turn `turn` is, going round `items` from the first (turn 0): a round-robin pick. */
export function inTurn<T extends NonNullable<unknown>>(items: readonly T[], turn: number): T {
    const item = items[turn % items.length];
    if (item === undefined) throw new RangeError(`no item for turn ${turn} of a list of ${items.length}`);
    return item;
}

/** A shuffled copy (Fisher-Yates). */
export function shuffled<T extends NonNullable<unknown>>(random: Random, items: readonly T[]): T[] {
    const copy = [...items];
    for (let i = copy.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        const atI = copy[i];
        const atJ = copy[j];
        if (atI === undefined || atJ === undefined) throw new RangeError(`shuffled: index ${i} or ${j} out of range`);
        copy[i] = atJ;
        copy[j] = atI;
    }
    return copy;
}
