/**
 * The progress line: every few seconds, what the run has done and how fast it is going now —
 * one line, the same numbers as `/status` (see live.ts). On a terminal the live line
 * (liveProgress.ts) says the same in place of these lines.
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

/**
 * `pages 120 · 24.1/s · queue 80 · in flight 12 · retries 3 · errors
 * 5 · dead 1 · escalations 4 · items 110 (+2 invalid, 1.8%) · ETA 4s`
 */
export function formatProgress(progress: LiveSnapshot): string {
    const parts = progressParts(progress);
    return [
        parts.pages,
        parts.rate,
        parts.queue,
        parts.inFlight,
        parts.retries,
        parts.errors,
        parts.dead,
        parts.escalations,
        parts.items,
        parts.changes,
        parts.eta,
    ]
        .filter((part) => part !== undefined)
        .join(' · ');
}

/**
 * The progress line's parts, each as it reads there; undefined for what
 * is not known. The live line (liveProgress.ts) says them the same way.
 */
export function progressParts(progress: LiveSnapshot) {
    const unfinished = progress.queued + (progress.inFlight ?? 0);
    return {
        pages: `pages ${progress.pages}`,
        rate: `${progress.pagesPerSec}/s`,
        queue: `queue ${progress.queued}`,
        inFlight: progress.inFlight === null ? undefined : `in flight ${progress.inFlight}`,
        retries: `retries ${progress.retries}`,
        errors: `errors ${progress.errors}`,
        dead: `dead ${progress.deadLettered}`,
        escalations: `escalations ${progress.escalations}`,
        items: `items ${progress.items} (+${progress.invalid} invalid, ${formatShare(progress.invalidShare)})`,
        changes:
            progress.changes &&
            `changes ${progress.changes.new} new, ${progress.changes.changed} changed, ` +
                `${progress.changes.unchanged} unchanged, ${progress.changes.removed} removed`,
        eta: progress.etaSec === null || unfinished === 0 ? undefined : `ETA ${formatDuration(progress.etaSec)}`,
    };
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
