/**
 * A browser that does not start for a page, though Chromium started at the run's check
 * (chromium.ts): it crashed as it came up, or memory ran short. Crawlee takes that for a broken
 * setup and ends the crawl; the browser stage retries the page in a browser launched anew, and
 * dead-letters it as `browser-launch-failed` when none starts.
 *
 * A Chromium that started for the check and never again would cost every page its attempts in
 * launches (4 each by default, seconds apart), for nothing: after MAX_LAUNCH_FAILURES_IN_A_ROW
 * launches in a row fail, with no page opened between them, the breaker opens and stays open for
 * the run, and the stage sends the pages that reach it to dead-letter at once, for the same reason.
 */
import type { BrowserLaunchError } from '@crawlee/browser-pool';
import { FetchFailure } from '../failures/failures.js';

/** Failed launches in a row, no page opened between them, after which no browser is launched in this run. */
export const MAX_LAUNCH_FAILURES_IN_A_ROW = 5;

/** The failure a launch that did not start gives its page's attempt: transient, to retry in a new browser. */
export function launchFailure(error: BrowserLaunchError): FetchFailure {
    const cause = error.cause instanceof Error ? error.cause.message : error.message;
    return new FetchFailure(
        'transient',
        `the browser did not start: ${cause.split('\n')[0]}`,
        undefined,
        'browser-launch-failed',
    );
}

export class LaunchBreaker {
    /** Told once, when the breaker opens, why. */
    onOpen: (reason: string) => void = () => undefined;
    private failuresInARow = 0;

    constructor(private readonly maxFailuresInARow = MAX_LAUNCH_FAILURES_IN_A_ROW) {}

    /** A page opened: a browser runs. */
    opened(): void {
        if (!this.open) this.failuresInARow = 0;
    }

    failed(): void {
        if (this.open) return;
        this.failuresInARow += 1;
        if (this.open) this.onOpen(this.reason);
    }

    /** True once the launches failed `maxFailuresInARow` times in a row; it stays so. */
    get open(): boolean {
        return this.failuresInARow >= this.maxFailuresInARow;
    }

    /** Why pages are not rendered any more, for their dead-letter entries. */
    get reason(): string {
        return `the browser did not start for ${this.failuresInARow} pages in a row: no more launches in this run`;
    }
}
