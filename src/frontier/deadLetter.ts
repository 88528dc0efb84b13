/**
 * Dead-letter: where a request ends when it will not succeed in this run — a permanent failure,
 * its attempts used up, a route stopped, or no browser to render it. Every entry says why
 * (DeadLetterEntry), so it can be inspected and re-queued (`npm run dead-letter`). Entries are
 * stored with the request marked handled, in one transaction (store/outcomes.ts).
 */
import type { Outcome } from '../store/outcomes.js';
import type { DeadLetterEntry } from '../vocabulary/failure.js';

/** The outcome of a request given up on: its dead-letter entry, counted by class and reason. */
export function deadLetterOutcome(entry: Omit<DeadLetterEntry, 'deadLetteredAt'>): Outcome {
    return {
        deadLetter: { ...entry, deadLetteredAt: new Date().toISOString() },
        count: (stats) => stats.countDeadLetter(entry.failureClass, entry.reason),
    };
}
