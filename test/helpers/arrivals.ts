/** The most of `arrivals` (ms, in any order) within any span of `windowMs`: a site's peak request rate. */
export function peakInWindow(arrivals: readonly number[], windowMs: number): number {
    const sorted = [...arrivals].sort((a, b) => a - b);
    let peak = 0;
    for (let first = 0, last = 0; last < sorted.length; last++) {
        while (sorted[last]! - sorted[first]! >= windowMs) first++;
        peak = Math.max(peak, last - first + 1);
    }
    return peak;
}
