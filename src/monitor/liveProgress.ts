/**
 * The live view on a terminal: the progress line pinned below the log (pinnedLine.ts) and redrawn
 * in place every second, with the same numbers and words as the periodic progress line
 * (progress.ts), the most telling first so that a narrow terminal cuts the least telling.
 *
 * A bar is drawn only when the run's total is known, which is when no page can join the run any
 * more: the frontier has admitted `--max-requests` URLs. Until then every page fetched may still
 * discover more, so the pages left are a lower bound (as the ETA says), and a bar against it would
 * run backwards as links are found.
 */
import { styleText } from 'node:util';
import { LiveStatus, type LiveSnapshot, type Load } from './live.js';
import type { PinnedLine } from './pinnedLine.js';
import { progressParts } from './progress.js';
import type { RunStats } from './stats.js';

export interface LiveProgressOptions {
    stats: RunStats;
    /** Where the line is drawn: stderr's (pinnedLine.ts), which the log writes above. */
    line: PinnedLine;
    /** Time between redraws. Default: 1000 ms. */
    refreshMs?: number;
    /** How far back the rate looks. Default: 5000 ms, the periodic line's interval. */
    rateWindowMs?: number;
    /** The stages' load (see RunningStages), for requests in flight. Default: not shown. */
    load?: () => Load;
    /**
     * The most URLs the frontier admits (`--max-requests`), when the count it checks is this
     * process's own; a fleet's workers each count only their part. Default: no limit, no bar.
     */
    maxRequests?: number;
}

/** Pins the live line; returns the function that takes it away. */
export function startLiveProgress({
    stats,
    line,
    refreshMs = 1000,
    rateWindowMs = 5000,
    load,
    maxRequests,
}: LiveProgressOptions): () => void {
    const live = new LiveStatus({ stats, load, rateWindowMs });
    const content = (width: number) =>
        formatLiveLine(live.snapshot(), {
            width,
            total: maxRequests !== undefined && stats.admitted >= maxRequests ? stats.admitted : undefined,
            color: line.colors,
        });
    // The first draw waits a tick, as the first progress line waits an interval:
    // a run over within a second (`npm run try`'s one page) shows none.
    const timer = setInterval(() => line.show(content), refreshMs);
    timer.unref();
    return () => {
        clearInterval(timer);
        line.clear();
    };
}

export interface LiveLineOptions {
    /** Columns the line may take: what does not fit is left off, least telling first. */
    width: number;
    /** Pages the run finishes in all, when known: then a bar. Default: unknown. */
    total?: number;
    /** ANSI colours. Default: false. */
    color?: boolean;
}

const SEPARATOR = ' · ';

/**
 * `███████░░░░░░ 52% · pages 104/200 · 24.1/s · ETA 4s · queue 80 · in flight 12
 * · errors 5 · escalations 4 · retries 3 · dead 1 · items 110 (+2 invalid, 1.8%)`
 */
export function formatLiveLine(progress: LiveSnapshot, { width, total, color = false }: LiveLineOptions): string {
    const parts = progressParts(progress);
    const fields: Field[] = [
        ...(total === undefined ? [] : [barOf(progress.pages / Math.max(total, 1), width)]),
        { text: total === undefined ? parts.pages : `${parts.pages}/${total}` },
        { text: parts.rate },
        ...(parts.eta === undefined ? [] : [{ text: parts.eta }]),
        { text: parts.queue },
        ...(parts.inFlight === undefined ? [] : [{ text: parts.inFlight }]),
        { text: parts.errors, painted: progress.errors > 0 ? paint('red', parts.errors) : undefined },
        { text: parts.escalations },
        { text: parts.retries },
        { text: parts.dead, painted: progress.deadLettered > 0 ? paint('red', parts.dead) : undefined },
        { text: parts.items },
        ...(parts.changes === undefined ? [] : [{ text: parts.changes }]),
    ];
    return fit(fields, width, color);
}

/** A part of the line: its text, and how it looks in colour when that differs. */
interface Field {
    text: string;
    painted?: string;
}

/**
 * The share done as a bar of a sixth of the width (5 to 20 cells) and a percentage that reads 100% only when all is.
 */
function barOf(share: number, width: number): Field {
    const done = Math.min(1, Math.max(0, share));
    const cells = Math.min(20, Math.max(5, Math.floor(width / 6)));
    const filled = '█'.repeat(Math.floor(done * cells));
    const empty = '░'.repeat(cells - filled.length);
    const percent = ` ${Math.floor(done * 100)}%`;
    return { text: filled + empty + percent, painted: paint('cyan', filled) + paint('gray', empty) + percent };
}

/**
 * `text` in colour, unasked whether stdout takes it: whether the
 * line is drawn in colour is its terminal's (stderr's) to say.
 */
function paint(format: 'red' | 'cyan' | 'gray', text: string): string {
    return text && styleText(format, text, { validateStream: false });
}

/**
 * The fields that fit in `width`, in order up to the first that does not; the first cut short when even it is too long.
 */
function fit(fields: Field[], width: number, color: boolean): string {
    const kept: Field[] = [];
    let used = 0;
    for (const field of fields) {
        const needs = (kept.length > 0 ? SEPARATOR.length : 0) + field.text.length;
        if (used + needs > width) break;
        kept.push(field);
        used += needs;
    }
    const [first] = fields;
    if (kept.length === 0 && first) return `${first.text.slice(0, width - 1)}…`;
    return kept.map((field) => (color ? (field.painted ?? field.text) : field.text)).join(SEPARATOR);
}
