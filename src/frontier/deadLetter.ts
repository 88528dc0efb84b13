/**
 * Dead-letter: where a request ends when it will not succeed — a permanent failure, retries
 * used up, or no browser to render it. Every entry says why, so it can be inspected and re-queued.
 */
import type { FailureClass } from '../fetch/failures.js';
import type { DatasetSink } from '../store/datasets.js';

export type DeadLetterEntry = {
    url: string;
    label?: string;
    failureClass: FailureClass;
    /** Short and stable: `http-404`, `timeout`, `renderer-unavailable`. */
    reason: string;
    /** The last error message. */
    error: string;
    status?: number;
    /** Fetch attempts made, the first included. */
    attempts: number;
    stage: 'http' | 'browser';
    deadLetteredAt: string;
};

export class DeadLetter {
    constructor(private readonly sink: DatasetSink<DeadLetterEntry>) {}

    async add(entry: Omit<DeadLetterEntry, 'deadLetteredAt'>): Promise<void> {
        await this.sink.push({ ...entry, deadLetteredAt: new Date().toISOString() });
    }

    async flush(): Promise<void> {
        await this.sink.flush();
    }
}
