/**
 * Fleet-wide policy, distributed mode: what one worker decides about the site holds for all. A
 * route the drift breaker stops in one worker is shared through Redis and stopped in every other
 * within about a second (and in a worker that joins later, at once). The fleet-wide limit of pages
 * in work is BullMQ's global concurrency (openDistributed.ts); the counters are each worker's
 * heartbeat (Fleet).
 */
import type { Pipeline } from './build.js';

/** How often a worker shares its trips and adopts the others'. */
const SYNC_MILLIS = 1_000;

/** Starts sharing; the function returned stops it, after a last exchange. */
export function shareFleetPolicy({ stores: { fleet }, driftBreaker, options: { log } }: Pipeline): () => Promise<void> {
    if (!fleet) return async () => {};
    const shared = new Set<string>();
    const exchange = async () => {
        for (const trip of driftBreaker.tripped) {
            if (shared.has(trip.route)) continue;
            await fleet.shareTrip(trip);
            shared.add(trip.route);
        }
        for (const trip of await fleet.trips()) {
            shared.add(trip.route);
            if (driftBreaker.adopt(trip)) {
                log.error(
                    { drift: trip },
                    `route "${trip.route}" was stopped by the drift breaker of another worker; its pages go to ` +
                        `dead-letter as route-stopped here too`,
                );
            }
        }
    };
    const failed = (error: unknown) =>
        log.warn({ err: error }, 'could not exchange fleet policy with Redis; trying again');
    void exchange().catch(failed);
    const timer = setInterval(() => void exchange().catch(failed), SYNC_MILLIS);
    return async () => {
        clearInterval(timer);
        await exchange().catch(failed);
    };
}
