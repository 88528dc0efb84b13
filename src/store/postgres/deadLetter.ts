/**
 * A fleet's dead-letter (`npm run dead-letter` with --database-url), as store/deadLetterStore.ts
 * is the embedded one's: its entries in PostgreSQL, read from one snapshot, and re-queued into the
 * fleet's queues in Redis. A re-queued request is added to its stage's queue first and its entry
 * deleted after, the entry as it was read (a newer one, from a worker failing the request again
 * meanwhile, stays): a requeue cut short between the two leaves the request pending and still in
 * dead-letter, where the next outcome of the request replaces it, never a request in neither.
 */
import type { RequestOptions } from '@crawlee/core';
import type { DeadLetterEntry } from '../../vocabulary/failure.js';
import type { Stage } from '../../vocabulary/request.js';
import { type DeadLetterFilter, matchesFilter, type RequeueResult } from '../deadLetterStore.js';
import type { PgDatabase } from './database.js';
import { keysetBatches } from './reader.js';

/** Where a re-queued request goes: its stage's queue, by name, and how to put it back there (JobQueue.requeue). */
export interface RequeueTarget {
    name: string;
    requeue(requests: RequestOptions[]): Promise<{ added: number; alreadyPending: number }>;
}

interface Row {
    key: string;
    value: DeadLetterEntry;
    at: Date;
}

export class PgDeadLetter {
    constructor(
        private readonly db: PgDatabase,
        readonly site: string,
    ) {}

    /** The entries that match, in the order they were first dead-lettered. */
    async *entries(filter: DeadLetterFilter = {}): AsyncGenerator<DeadLetterEntry> {
        for await (const rows of this.rows())
            for (const row of rows) if (matchesFilter(row.value, filter)) yield row.value;
    }

    /** Re-queues the entries that match into `queues`, a batch of entries at a time. */
    async requeue(filter: DeadLetterFilter, queues: Record<Stage, RequeueTarget>): Promise<RequeueResult> {
        const result: RequeueResult = { entries: [], byQueue: {}, added: 0, alreadyPending: 0 };
        for await (const rows of this.rows()) {
            const matching = rows.filter((row) => matchesFilter(row.value, filter));
            for (const stage of ['http', 'browser'] as const) {
                const ofStage = matching.filter((row) => (row.value.stage === 'browser') === (stage === 'browser'));
                if (ofStage.length === 0) continue;
                const queue = queues[stage];
                // The frontier queues a request with its URL as its unique key, which is the entry's request key.
                const { added, alreadyPending } = await queue.requeue(
                    ofStage.map(({ key, value }) => ({
                        url: value.url,
                        uniqueKey: key,
                        userData: value.label === undefined ? {} : { label: value.label },
                    })),
                );
                result.added += added;
                result.alreadyPending += alreadyPending;
                if (added > 0) result.byQueue[queue.name] = (result.byQueue[queue.name] ?? 0) + added;
            }
            await this.db.query(
                `DELETE FROM ${this.db.table('dead_letter')} AS d
                 USING unnest($2::text[], $3::timestamptz[]) AS taken(key, at)
                 WHERE d.site = $1 AND d.request_key = taken.key AND d.dead_lettered_at = taken.at`,
                [this.site, matching.map((row) => row.key), matching.map((row) => row.at)],
            );
            result.entries.push(...matching.map((row) => row.value));
        }
        return result;
    }

    private rows(): AsyncGenerator<Row[]> {
        return keysetBatches<Row>(
            this.db,
            'dead_letter',
            'request_key AS key, entry AS value, dead_lettered_at AS at',
            this.site,
        );
    }
}
