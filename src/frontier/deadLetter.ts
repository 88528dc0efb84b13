/**
 * Dead-letter: where a request ends when it will not succeed in this run — a permanent failure,
 * its attempts used up, a route stopped, or no browser to render it. Every entry says why, so it
 * can be inspected and re-queued (`npm run dead-letter`). Entries are stored with the request
 * marked handled, in one transaction (store/outcomes.ts).
 */
import type { FailureClass } from '../fetch/failures.js';
import type { Outcome } from '../store/outcomes.js';

export type DeadLetterEntry = {
    url: string;
    label?: string;
    failureClass: FailureClass;
    /** Short and stable: `http-404`, `timeout`, `renderer-unavailable`. */
    reason: string;
    /** The last error message. */
    error: string;
    status?: number;
    /** Fetch attempts made, the first included (0: given up on before a fetch). */
    attempts: number;
    /** The stage whose queue the request was in; a re-queued request goes back there. */
    stage: 'http' | 'browser';
    /** When its first attempt failed; absent when it was never fetched. */
    firstFailedAt?: string;
    deadLetteredAt: string;
};

/** The outcome of a request given up on: its dead-letter entry, counted by class and reason. */
export function deadLetterOutcome(entry: Omit<DeadLetterEntry, 'deadLetteredAt'>): Outcome {
    return {
        deadLetter: { ...entry, deadLetteredAt: new Date().toISOString() },
        count: (stats) => stats.countDeadLetter(entry.failureClass, entry.reason),
    };
}
