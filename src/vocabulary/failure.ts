/**
 * What went wrong, in the words every part uses: the five failure classes (decided in one place,
 * fetch/failures/failures.ts), a failure as classified, and the dead-letter entry a request given up on
 * leaves behind. What each class means and does: fetch/failures/failures.ts.
 */
import type { Stage } from './request.js';

export const FAILURE_CLASSES = ['transient', 'blocked', 'permanent', 'invalid', 'exit'] as const;
export type FailureClass = (typeof FAILURE_CLASSES)[number];

export interface ClassifiedFailure {
    failureClass: FailureClass;
    /** A short, stable reason for reports and the dead-letter store, e.g. `http-404`, `timeout`. */
    reason: string;
    status?: number;
    message: string;
    /** The site's `Retry-After`, in ms, when it sent one. */
    retryAfterMs?: number;
}

/** Where a request ends when it will not succeed in this run, and why (see frontier/deadLetter.ts). */
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
    stage: Stage;
    /** When its first attempt failed; absent when it was never fetched. */
    firstFailedAt?: string;
    deadLetteredAt: string;
    /**
     * The URLs of the redirects that led here, first first (a redirect loop or chain is dead-lettered at its last hop).
     */
    redirectedFrom?: string[];
    /** The request's id in its queue, kept when `url` is stored with its password masked (store/records.ts). */
    requestId?: string;
};
