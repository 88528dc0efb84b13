/**
 * The frontier's overflow in PostgreSQL: the jobs of a queue past what Redis should hold. A
 * BullMQ job costs Redis a few hundred bytes (bench/distributed.ts measures it), so a backlog of
 * tens of millions of URLs would need tens of GB of Redis; here it costs disk. The job queue spills
 * record pages here past its `maxWaiting` and feeds them back in windows as the queue drains
 * (frontier/redis/jobQueue.ts). Feeding deletes the rows in the same transaction that hands them to
 * BullMQ, so a worker killed meanwhile leaves them here (at worst a job is in both, and BullMQ's job
 * id keeps it once while it is queued). A job pushed twice is kept once (a unique index on its id).
 */
import type { JobBacklog, SpilledJob } from '../../vocabulary/queue.js';
import { jsonb, onlyRow, type PgDatabase } from './database.js';
import { retryTransient } from './sink.js';

export class PgBacklog implements JobBacklog {
    private readonly table: string;

    /** The backlog of queue `queue` of `site`. */
    constructor(
        private readonly db: PgDatabase,
        private readonly site: string,
        private readonly queue: string,
    ) {
        this.table = db.table('backlog');
    }

    async push(jobs: readonly SpilledJob[]): Promise<void> {
        if (jobs.length === 0) return;
        await retryTransient(() =>
            this.db.query(
                `INSERT INTO ${this.table} (site, queue, job_id, priority, data)
                 SELECT $1, $2, * FROM unnest($3::text[], $4::int[], $5::json[])
                 ON CONFLICT (site, queue, job_id) DO NOTHING`,
                [
                    this.site,
                    this.queue,
                    jobs.map((job) => job.jobId),
                    jobs.map((job) => job.priority),
                    jobs.map((job) => jsonb(job.data)),
                ],
            ),
        );
    }

    async feed(count: number, add: (jobs: SpilledJob[]) => Promise<void>): Promise<number> {
        return retryTransient(() =>
            this.db.transaction(async (client) => {
                const { rows } = await client.query<{
                    seq: string;
                    job_id: string;
                    priority: number;
                    data: Record<string, unknown>;
                }>(
                    `DELETE FROM ${this.table} WHERE (site, queue, seq) IN (
                         SELECT site, queue, seq FROM ${this.table} WHERE site = $1 AND queue = $2 ORDER BY seq LIMIT \
$3 FOR UPDATE SKIP LOCKED
                     ) RETURNING seq, job_id, priority, data`,
                    [this.site, this.queue, count],
                );
                if (rows.length === 0) return 0;
                // RETURNING has no order of its own; the jobs go to BullMQ oldest first.
                const jobs = rows
                    .sort((a, b) => Number(a.seq) - Number(b.seq))
                    .map((row) => ({ jobId: row.job_id, priority: row.priority, data: row.data }));
                await add(jobs);
                return jobs.length;
            }),
        );
    }

    async count(): Promise<number> {
        const result = await retryTransient(() =>
            this.db.query<{ n: string }>(`SELECT count(*) AS n FROM ${this.table} WHERE site = $1 AND queue = $2`, [
                this.site,
                this.queue,
            ]),
        );
        return Number(onlyRow(result).n);
    }

    async isEmpty(): Promise<boolean> {
        const result = await retryTransient(() =>
            this.db.query<{ empty: boolean }>(
                `SELECT NOT EXISTS (SELECT 1 FROM ${this.table} WHERE site = $1 AND queue = $2) AS empty`,
                [this.site, this.queue],
            ),
        );
        return onlyRow(result).empty;
    }

    async clear(): Promise<void> {
        await retryTransient(() =>
            this.db.query(`DELETE FROM ${this.table} WHERE site = $1 AND queue = $2`, [this.site, this.queue]),
        );
    }
}
