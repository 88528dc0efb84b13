/**
 * The distributed backend's outcomes (see store/outcomes.ts): committed to PostgreSQL in groups —
 * the outcomes settled while one commit is under way go together in the next (groupWriter.ts) —
 * idempotently by request key, so a page done twice (its worker lost the job's lock, another took
 * the job) is stored once. `settle()` resolves once committed; the stage completes the request's
 * job after that, so a killed worker never leaves a completed job without its records.
 */
import type { RequestSchema } from '@crawlee/types';
import type { RunStats } from '../../monitor/stats.js';
import type { FrontierQueue } from '../../vocabulary/queue.js';
import { GroupWriter } from '../groupWriter.js';
import type { Outcome, Outcomes } from '../outcomes.js';
import type { PgSink } from './sink.js';

export interface PgOutcomesOptions {
    sink: PgSink;
    site: string;
    stats: RunStats;
    /** Most outcomes per commit. Default: 200. */
    maxGroupSize?: number;
}

export class PgOutcomes implements Outcomes {
    private readonly writer: GroupWriter<{ requestKey: string; outcome: Outcome }>;

    constructor({ sink, site, stats, maxGroupSize = 200 }: PgOutcomesOptions) {
        this.writer = new GroupWriter({
            maxBatchSize: maxGroupSize,
            write: async (group) => {
                await sink.commit(
                    site,
                    group.map(({ requestKey, outcome: { items, quarantine, deadLetter } }) => ({
                        requestKey,
                        items,
                        quarantine,
                        deadLetter,
                    })),
                );
                for (const { outcome } of group) outcome.count?.(stats);
            },
        });
    }

    settle(_queue: FrontierQueue, request: RequestSchema, outcome: Outcome): Promise<void> {
        return this.writer.add({ requestKey: request.uniqueKey, outcome });
    }

    /** Resolves once every outcome settled so far is committed (or failed). */
    flush(): Promise<void> {
        return this.writer.flush();
    }
}
