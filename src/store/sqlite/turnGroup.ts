/**
 * SQLite writes gathered over one turn of the event loop and committed together at its end. A
 * commit costs SQLite more than the rows it writes (~150 µs against ~20 µs for a queue row on the
 * bench's real-weight shop), and under load one turn settles many pages: their outcomes
 * (outcomes.ts), the links they add and the queue locks Crawlee gives back (requestQueueClient.ts)
 * each commit once per turn, not once per page.
 *
 * `commit` runs the turn's entries in one transaction, each in a savepoint of its own, and says for
 * each what it gave or the error that kept it out: an entry that cannot be stored fails alone. When
 * the transaction itself fails, every entry of the turn fails with it. `add()` resolves once its
 * entry is committed, so a process killed at any moment has stored all of an acknowledged write.
 */

export type Committed<T> = { ok: true; value: T } | { ok: false; error: unknown };

interface Waiting<Entry, T> {
    entry: Entry;
    stored: (value: T) => void;
    failed: (error: unknown) => void;
}

export class TurnGroup<Entry, T> {
    private waiting: Waiting<Entry, T>[] = [];

    constructor(private readonly commit: (entries: Entry[]) => Committed<T>[]) {}

    /** Commits `entry` with the rest of this turn's; resolves with what the commit gave for it. */
    add(entry: Entry): Promise<T> {
        return new Promise((stored, failed) => {
            this.waiting.push({ entry, stored, failed });
            if (this.waiting.length === 1) setImmediate(() => this.commitWaiting());
        });
    }

    private commitWaiting(): void {
        const group = this.waiting;
        this.waiting = [];
        let results: Committed<T>[];
        try {
            results = this.commit(group.map(({ entry }) => entry));
        } catch (error) {
            results = group.map(() => ({ ok: false, error }));
        }
        group.forEach(({ stored, failed }, index) => {
            const result = results[index];
            if (!result)
                throw new Error(`TurnGroup: the commit gave ${results.length} results for ${group.length} entries`);
            if (result.ok) stored(result.value);
            else failed(result.error);
        });
    }
}

/**
 * What `write` gave, or the error it threw. Inside the group's transaction `write` must be a
 * better-sqlite3 transaction function: it then runs as a savepoint, rolled back alone when it throws.
 */
export function attempt<T>(write: () => T): Committed<T> {
    try {
        return { ok: true, value: write() };
    } catch (error) {
        return { ok: false, error };
    }
}
