/**
 * `npm run status -- --site S [--json] [--watch]`: the shared state of a site's distributed run — its
 * queues, its workers and their rates, the fleet's counters, dead-letter by reason, the drift breaker
 * and the exits the exit breakers hold out — read from Redis and PostgreSQL (wiring/fleetStatus.ts).
 * Any machine with the two URLs can ask. With --watch it asks again every --interval seconds, redrawn
 * in place on a terminal, until Ctrl+C.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { optionLines, parseCommandLine } from '../options/config.js';
import { ConfigError } from '../options/configError.js';
import { DISTRIBUTED_DEFAULTS } from '../options/crawlOptions.js';
import { type FleetStatus, readFleetStatus } from '../wiring/fleetStatus.js';
import { connectParts } from '../wiring/openDistributed.js';
import { runCommand } from './command.js';

const SHARED = ['site', 'redisUrl', 'databaseUrl', 'redisCluster', 'redisPrefix'] as const;

const HELP = `Usage: npm run status -- [--site NAME] [--json] [--watch [--interval SECS]] [--redis-url URL] [--database-url URL]
                        [--redis-prefix P]
Shows the shared state of the site's distributed run: queued, delayed (retries waiting) and active
(locked to a worker) requests per stage, the workers heard of in the last seconds, pages/s, the
fleet's counters, dead-letter by reason, the routes the drift breaker stopped and the exits (proxies)
the exit breakers hold out. --watch: again every --interval seconds (default 2), redrawn in place on a
terminal (a JSON line each time with --json), until Ctrl+C.
${optionLines([...SHARED])}
`;

runCommand(async () => {
    const commandLine = parseCommandLine(process.argv.slice(2), process.env, SHARED, {
        json: { type: 'boolean' },
        watch: { type: 'boolean' },
        interval: { type: 'string' },
    });
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
    const intervalSecs = flags.interval === undefined ? 2 : Number(flags.interval);
    if (!(intervalSecs >= 0.2 && Number.isFinite(intervalSecs)))
        throw new ConfigError('--interval must be a number of seconds, 0.2 or more');
    const stopped = new AbortController();
    process.once('SIGINT', () => stopped.abort());
    const redraw = flags.watch && !flags.json && process.stdout.isTTY;
    try {
        do {
            const status = await readFleetStatus(redis, db, { prefix, site: options.site });
            const text = flags.json ? `${JSON.stringify(status)}\n` : formatStatus(status);
            // Home and clear below: the next view is drawn over the last one.
            process.stdout.write(redraw ? `\x1b[H\x1b[J${text}` : flags.watch && !flags.json ? `${text}\n` : text);
            if (flags.watch) await sleep(intervalSecs * 1000, undefined, { signal: stopped.signal }).catch(() => {});
        } while (flags.watch && !stopped.signal.aborted);
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
        ...(status.recrawl
            ? [
                  `recrawl  run ${status.recrawl.run}: ${status.recrawl.items.unchanged} unchanged, ` +
                      `${status.recrawl.items.changed} changed, ${status.recrawl.items.new} new, ` +
                      `${status.recrawl.items.removed} removed items so far`,
              ]
            : []),
        `breaker  ${trips.length === 0 ? 'no route stopped' : trips.join('; ')}`,
        `exits    ${
            status.restingExits.length === 0
                ? 'none resting'
                : status.restingExits.map(({ exit, until }) => `${exit} resting until ${until}`).join('; ')
        }`,
        `at       ${new Date().toISOString()}`,
        '',
    ];
    return lines.join('\n');
}
