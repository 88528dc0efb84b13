/**
 * The progress line: every few seconds, what the run has done and how fast it is going now.
 */
import type { Logger } from 'pino';
import type { RunStats } from './stats.js';

export interface ProgressOptions {
    stats: RunStats;
    log: Logger;
    /** Time between lines. Default: 5000 ms. */
    intervalMs?: number;
}

/** Starts logging progress; returns the function that stops it. */
export function startProgress({ stats, log, intervalMs = 5000 }: ProgressOptions): () => void {
    let lastFinished = stats.finished;
    let lastAt = Date.now();
    const timer = setInterval(() => {
        const now = Date.now();
        const rate = ((stats.finished - lastFinished) * 1000) / Math.max(1, now - lastAt);
        lastFinished = stats.finished;
        lastAt = now;
        const progress = {
            pages: stats.finished,
            pagesPerSec: Number(rate.toFixed(1)),
            queued: stats.admitted - stats.finished,
            errors: stats.errors,
            escalations: stats.escalations,
            deadLettered: stats.deadLettered,
            items: stats.itemsStored,
            invalid: stats.itemsInvalid,
        };
        log.info(
            { progress },
            `pages ${progress.pages} · ${progress.pagesPerSec}/s · queue ${progress.queued} · errors ${progress.errors} · ` +
                `escalations ${progress.escalations} · dead ${progress.deadLettered} · items ${progress.items} (+${progress.invalid} invalid)`,
        );
    }, intervalMs);
    timer.unref();
    return () => clearInterval(timer);
}
