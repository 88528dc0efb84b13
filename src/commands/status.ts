/**
 * `npm run status -- --site S [--json]`: the shared state of a site's distributed run — its queues,
 * its workers and their rates, the fleet's counters, dead-letter by reason and the drift breaker —
 * read from Redis and PostgreSQL (wiring/fleetStatus.ts). Any machine with the two URLs can ask.
 */
import { optionLines, parseCommandLine } from '../options/config.js';
import { ConfigError } from '../options/configError.js';
import { DISTRIBUTED_DEFAULTS } from '../options/crawlOptions.js';
import { type FleetStatus, readFleetStatus } from '../wiring/fleetStatus.js';
import { connectParts } from '../wiring/openDistributed.js';
import { runCommand } from './command.js';

const SHARED = ['site', 'redisUrl', 'databaseUrl', 'redisCluster', 'redisPrefix'] as const;

const HELP = `Usage: npm run status -- [--site NAME] [--json] [--redis-url URL] [--database-url URL] [--redis-prefix P]
Shows the shared state of the site's distributed run: queued, delayed (retries waiting) and active
(locked to a worker) requests per stage, the workers heard of in the last seconds, pages/s, the
fleet's counters, dead-letter by reason and the routes the drift breaker stopped.
${optionLines([...SHARED])}
`;

runCommand(async () => {
    const commandLine = parseCommandLine(process.argv.slice(2), process.env, SHARED, { json: { type: 'boolean' } });
    if (commandLine === 'help') {
        process.stdout.write(HELP);
        return 0;
    }
    const { options, flags } = commandLine;
    if (!options.redisUrl || !options.databaseUrl)
        throw new ConfigError(
            'status reads a distributed run: set --redis-url (REDIS_URL) and --database-url (DATABASE_URL)',
        );
    const prefix = options.redisPrefix ?? DISTRIBUTED_DEFAULTS.redisPrefix;
    const { redis, db } = await connectParts(
        options.redisUrl,
        options.databaseUrl,
        `${prefix}:status`,
        options.redisCluster,
    );
    try {
        const status = await readFleetStatus(redis, db, { prefix, site: options.site });
        process.stdout.write(flags.json ? `${JSON.stringify(status)}\n` : formatStatus(status));
    } finally {
        redis.disconnect();
        await db.close();
    }
    return 0;
});

function formatStatus(status: FleetStatus): string {
    const { queues, totals } = status;
    const queue = (name: string, { waiting, delayed, active, spilled }: FleetStatus['queues']['http']) =>
        `  ${name.padEnd(8)} ${waiting} waiting, ${delayed} delayed (retries), ${active} active, ${spilled} spilled ` +
        `to PostgreSQL`;
    const trips = status.tripped.map(
        (trip) => `route "${trip.route}" stopped at ${trip.at} (${Math.round(trip.invalidShare * 100)}% invalid)`,
    );
    const lines = [
        `dragnet: ${status.site}, distributed`,
        'queues',
        queue('http', queues.http),
        queue('browser', queues.browser),
        ...(status.fleetConcurrency === null
            ? []
            : [`  limit    ${status.fleetConcurrency} pages in work at once, fleet-wide`]),
        `workers  ${status.workers.length} active, ${status.pagesPerSec} pages/s`,
        ...status.workers.map(
            (worker) =>
                `  ${worker.id.padEnd(36)} since ${worker.startedAt}, ${worker.pagesPerSec.toFixed(1)} pages/s, ` +
                `seen ${worker.seenAt}`,
        ),
        `counted  ${totals.succeeded} succeeded, ${totals.deadLettered} dead-lettered, ${totals.retries} ` +
            `retries; ${totals.httpFetched} fetched, ${totals.browserRendered} rendered; ${totals.itemsStored} ` +
            `items, ${totals.itemsInvalid} invalid`,
        `stored   ${status.stored.items} items, ${status.stored.quarantine} quarantined, ${status.stored.deadLetter} ` +
            `dead-lettered, ${status.stored.rawPages} raw pages`,
        ...status.deadLetter.map(
            ({ reason, failureClass, count }) => `  dead-letter ${reason} (${failureClass}): ${count}`,
        ),
        `breaker  ${trips.length === 0 ? 'no route stopped' : trips.join('; ')}`,
        '',
    ];
    return lines.join('\n');
}
