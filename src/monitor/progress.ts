/**
 * The progress line: every few seconds, what the run has done and how fast it is going now —
 * one line, the same numbers as `/status` (see live.ts).
 */
import type { Logger } from 'pino';
import { LiveStatus, type LiveSnapshot, type Load } from './live.js';
import type { RunStats } from './stats.js';

export interface ProgressOptions {
    stats: RunStats;
    log: Logger;
    /** Time between lines; also the window the rate is measured over. Default: 5000 ms. */
    intervalMs?: number;
    /** The stages' load (see RunningStages), for requests in flight. Default: not shown. */
    load?: () => Load;
}

/** Starts logging progress; returns the function that stops it. */
export function startProgress({ stats, log, intervalMs = 5000, load }: ProgressOptions): () => void {
    const live = new LiveStatus({ stats, load, rateWindowMs: intervalMs });
    const timer = setInterval(() => {
        const progress = live.snapshot();
        log.info({ progress }, formatProgress(progress));
    }, intervalMs);
    timer.unref();
    return () => clearInterval(timer);
}

/** `pages 120 · 24.1/s · queue 80 · in flight 12 · retries 3 · errors 5 · dead 1 · escalations 4 · items 110 (+2 invalid, 1.8%) · ETA 4s` */
export function formatProgress(progress: LiveSnapshot): string {
    const parts = [
        `pages ${progress.pages}`,
        `${progress.pagesPerSec}/s`,
        `queue ${progress.queued}`,
        ...(progress.inFlight === null ? [] : [`in flight ${progress.inFlight}`]),
        `retries ${progress.retries}`,
        `errors ${progress.errors}`,
        `dead ${progress.deadLettered}`,
        `escalations ${progress.escalations}`,
        `items ${progress.items} (+${progress.invalid} invalid, ${formatShare(progress.invalidShare)})`,
        ...(progress.etaSec === null || progress.queued + (progress.inFlight ?? 0) === 0 ? [] : [`ETA ${formatDuration(progress.etaSec)}`]),
    ];
    return parts.join(' · ');
}

function formatShare(share: number): string {
    const percent = share * 100;
    return `${percent > 0 && percent < 0.1 ? '<0.1' : percent.toFixed(1)}%`;
}

/** `42s`, `3m05s`, `2h07m`. */
export function formatDuration(seconds: number): string {
    const total = Math.max(0, Math.round(seconds));
    if (total < 60) return `${total}s`;
    const minutes = Math.floor(total / 60);
    if (minutes < 60) return `${minutes}m${String(total % 60).padStart(2, '0')}s`;
    return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}
