/**
 * Retries, summed up: a transient failure is retried, not acted on, so it is not worth a log line of
 * its own (each one is at debug level). Every interval in which some were scheduled, one info line
 * says how many and why: `retries in the last 5 s: 12 (http-503 7, timeout 5); 140 in all`. What a
 * person must act on (dead-letters, a tripped breaker, an exit resting) keeps its own lines.
 */
import type { Logger } from 'pino';
import type { RunStats } from './stats.js';

export interface RetrySummaryOptions {
    stats: RunStats;
    log: Logger;
    /** Time between two summaries. Default: 5000 ms. */
    intervalMs?: number;
}

/** Starts summing up retries; returns the function that stops it, saying what the last interval had. */
export function startRetrySummary({ stats, log, intervalMs = 5000 }: RetrySummaryOptions): () => void {
    let said = { ...stats.retryReasons };
    let saidAt = Date.now();
    const sayWhatIsNew = () => {
        const seconds = Math.max(1, Math.round((Date.now() - saidAt) / 1000));
        saidAt = Date.now();
        const recent = Object.entries(stats.retryReasons)
            .map(([reason, count]) => [reason, count - (said[reason] ?? 0)] as const)
            .filter(([, count]) => count > 0)
            .sort(([, a], [, b]) => b - a);
        said = { ...stats.retryReasons };
        const total = recent.reduce((sum, [, count]) => sum + count, 0);
        if (total === 0) return;
        log.info(
            { retries: Object.fromEntries(recent), retriesInAll: stats.retries },
            `retries in the last ${seconds} s: ${total} ` +
                `(${recent.map(([reason, count]) => `${reason} ${count}`).join(', ')}); ${stats.retries} in all`,
        );
    };
    const timer = setInterval(sayWhatIsNew, intervalMs);
    timer.unref();
    return () => {
        clearInterval(timer);
        sayWhatIsNew();
    };
}
