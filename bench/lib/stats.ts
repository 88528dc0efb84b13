/** Small statistics for a noisy machine: medians over runs, ratios of medians, the steady slice of a series. */
import { STEADY_WINDOW } from '../crawlers/measure.js';

/** The median of the numbers, or null when there are none. */
export function median(values: readonly number[]): number | null {
    if (values.length === 0) return null;
    const sorted = [...values].sort((a, b) => a - b);
    const middle = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** `a / b` to 3 significant decimals, or null when either is missing or b is 0. */
export function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
    if (a == null || b == null || b === 0) return null;
    return round(a / b, 3);
}

export function round(value: number, digits = 1): number {
    const factor = 10 ** digits;
    return Math.round(value * factor) / factor;
}

/** The samples of a series taken at even intervals over a run that fall in its steady window. */
export function steadySlice<T>(samples: readonly T[]): T[] {
    return samples.slice(Math.floor(samples.length * STEADY_WINDOW.from), Math.ceil(samples.length * STEADY_WINDOW.to));
}

/** Median over the steady window and maximum over the whole run. */
export function seriesSummary(samples: readonly number[]): { steadyMedian: number | null; max: number | null } {
    return { steadyMedian: median(steadySlice(samples)), max: samples.length > 0 ? Math.max(...samples) : null };
}
