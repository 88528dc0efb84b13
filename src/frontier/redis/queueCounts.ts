/** What a BullMQ queue holds across the fleet, as counted in Redis (jobQueue.ts, the fleet status). */
import type { Queue } from 'bullmq';

/**
 * Jobs waiting (in BullMQ's `wait` list or its prioritized set), delayed
 * (retries waiting for their time) and active (locked to a worker).
 */
export interface QueueCounts {
    waiting: number;
    delayed: number;
    active: number;
}

/** A queue's jobs across the fleet, as BullMQ counts them in Redis. */
export async function queueCounts(queue: Queue): Promise<QueueCounts> {
    const counts = await queue.getJobCounts('waiting', 'prioritized', 'delayed', 'active');
    return {
        waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
        delayed: counts.delayed ?? 0,
        active: counts.active ?? 0,
    };
}
