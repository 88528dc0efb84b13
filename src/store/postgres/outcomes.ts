/**
 * The distributed backend's outcomes (see store/outcomes.ts): committed to PostgreSQL in groups —
 * the outcomes settled while one commit is under way go together in the next (groupWriter.ts) —
 * idempotently by request key, so a page done twice (its worker lost the job's lock, another took
 * the job) is stored once. `settle()` resolves once committed; the stage completes the request's
 * job after that, so a killed worker never leaves a completed job without its records. Each outcome
 * carries its job's take (`fenceOf`), so one from a worker that lost the job is refused (sink.ts).
 */
import type { RequestSchema } from '@crawlee/types';
import type { RunStats } from '../../monitor/stats.js';
import type { FrontierQueue, OutcomeFence } from '../../vocabulary/queue.js';
import { GroupWriter } from '../groupWriter.js';
import type { Outcome, Outcomes } from '../outcomes.js';
import { writePageRecords } from './pageHistory.js';
import type { PgSink } from './sink.js';

export interface PgOutcomesOptions {
    sink: PgSink;
    site: string;
    stats: RunStats;
    /** The run of the site's series the outcomes' page records belong to (known once the fleet is joined). */
    run: () => number;
    /** Most outcomes per commit. Default: 200. */
    maxGroupSize?: number;
    /** The take of the job a request in work came from (JobQueue.fenceOf). Default: none, no fence. */
    fenceOf?: (queue: FrontierQueue, request: RequestSchema) => OutcomeFence | undefined;
    /** Called with each request whose outcome was refused: another worker has since taken its job. */
    onRefused?: (requestKey: string) => void;
}

interface Pending {
    requestKey: string;
    fence: OutcomeFence | undefined;
    outcome: Outcome;
}

export class PgOutcomes implements Outcomes {
    private readonly writer: GroupWriter<Pending>;
    private readonly fenceOf: PgOutcomesOptions['fenceOf'];

    constructor({ sink, site, stats, run, maxGroupSize = 200, fenceOf, onRefused }: PgOutcomesOptions) {
        this.fenceOf = fenceOf;
        this.writer = new GroupWriter({
            maxBatchSize: maxGroupSize,
            write: async (group) => {
                const refused = await sink.commit(
                    site,
                    group.map(({ requestKey, fence, outcome: { items, quarantine, deadLetter, page } }) => ({
                        requestKey,
                        items,
                        quarantine,
                        deadLetter,
                        page,
                        fence,
                    })),
                    (client, committed) =>
                        writePageRecords(
                            client,
                            sink.db,
                            site,
                            run(),
                            committed.flatMap(({ requestKey, page }) => (page ? [{ requestKey, record: page }] : [])),
                        ),
                );
                for (const { requestKey, outcome } of group) {
                    if (refused.has(requestKey)) onRefused?.(requestKey);
                    else outcome.count?.(stats);
                }
            },
        });
    }

    settle(queue: FrontierQueue, request: RequestSchema, outcome: Outcome): Promise<void> {
        return this.writer.add({ requestKey: request.uniqueKey, fence: this.fenceOf?.(queue, request), outcome });
    }

    /** Resolves once every outcome settled so far is committed (or failed). */
    flush(): Promise<void> {
        return this.writer.flush();
    }
}
