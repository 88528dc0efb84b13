/**
 * `npm run dead-letter -- list|requeue [--class C] [--label L] [--reason R]`: shows a site's
 * dead-letter, or puts the chosen entries' requests back in their queues for the next run, which
 * resumes and fetches them (store/deadLetterStore.ts). With --database-url, a fleet's: its
 * dead-letter in PostgreSQL, re-queued into its queues in Redis (--redis-url), where its workers, or
 * the next worker to start, take them (store/postgres/deadLetter.ts).
 */
import { once } from 'node:events';
import { optionLines, parseCommandLine } from '../options/config.js';
import { ConfigError } from '../options/configError.js';
import { DISTRIBUTED_DEFAULTS } from '../options/crawlOptions.js';
import { type DeadLetterFilter, DeadLetterStore, type RequeueResult } from '../store/deadLetterStore.js';
import { connectPostgres } from '../store/postgres/connect.js';
import { PgDeadLetter } from '../store/postgres/deadLetter.js';
import { connectRedis } from '../frontier/redis/connection.js';
import { JobQueue } from '../frontier/redis/jobQueue.js';
import { fleetKeys } from '../wiring/openDistributed.js';
import { FAILURE_CLASSES, type DeadLetterEntry, type FailureClass } from '../vocabulary/failure.js';
import { siteNameOf } from '../site/sites.js';
import { runCommand } from './command.js';

const SHARED = ['site', 'storageDir', 'databaseUrl', 'redisUrl', 'redisCluster', 'redisPrefix'] as const;

const HELP = `Usage: npm run dead-letter -- list    [--class C] [--label L] [--reason R] [--json] [--limit N]
       npm run dead-letter -- requeue [--class C] [--label L] [--reason R]
       both take [--site NAME] [--storage-dir DIR | --database-url URL [--redis-url URL]]
list     the entries that match, as a table and a count by class and reason; --json: one entry per line
requeue  makes their requests pending again in their queues with a fresh set of attempts and takes them
         out of the dead-letter; the next \`npm start\` of the site resumes and fetches exactly those
With --database-url, a distributed run's dead-letter in that PostgreSQL; requeue puts the requests in
the fleet's queues in --redis-url's Redis, where its workers take them.
Filters are ANDed, none means every entry. --class: ${FAILURE_CLASSES.join(', ')}.
${optionLines([...SHARED])}
`;

/** Where the entries are read from: the embedded store or a fleet's. */
interface DeadLetterReader {
    site: string;
    entries(filter: DeadLetterFilter): AsyncIterable<DeadLetterEntry>;
}

const COLUMNS: [string, (entry: DeadLetterEntry) => string][] = [
    ['url', (e) => e.url],
    ['label', (e) => e.label ?? ''],
    ['class', (e) => e.failureClass],
    ['reason', (e) => e.reason],
    ['status', (e) => (e.status === undefined ? '' : String(e.status))],
    ['attempts', (e) => String(e.attempts)],
    ['dead-lettered at', (e) => e.deadLetteredAt],
];

runCommand(async () => {
    const args = process.argv.slice(2);
    const action = args[0]?.startsWith('-') === false ? args[0] : undefined;
    const commandLine = parseCommandLine(action ? args.slice(1) : args, process.env, SHARED, {
        class: { type: 'string' },
        label: { type: 'string' },
        reason: { type: 'string' },
        json: { type: 'boolean' },
        limit: { type: 'string' },
    });
    if (commandLine === 'help') {
        process.stdout.write(HELP);
        return 0;
    }
    const { options, flags } = commandLine;
    const { storageDir } = options;
    const site = await siteNameOf(commandLine.options.site);
    if (action !== 'list' && action !== 'requeue') {
        throw new ConfigError(
            `${action ? `unknown action "${action}"` : 'no action'}: say list or requeue (see --help)`,
        );
    }
    if (flags.class !== undefined && !FAILURE_CLASSES.includes(flags.class as FailureClass)) {
        throw new ConfigError(`--class must be one of ${FAILURE_CLASSES.join(', ')}, not "${flags.class}"`);
    }
    if (action === 'requeue' && (flags.json || flags.limit !== undefined))
        throw new ConfigError('--json and --limit are for list (see --help)');
    const limit = flags.limit === undefined ? Infinity : Number(flags.limit);
    if (!(Number.isInteger(limit) && limit >= 1) && limit !== Infinity)
        throw new ConfigError('--limit must be a whole number >= 1');
    const filter: DeadLetterFilter = {
        failureClass: flags.class as FailureClass | undefined,
        label: flags.label,
        reason: flags.reason,
    };

    const list = (store: DeadLetterReader) =>
        flags.json ? listJson(store, filter, limit) : listTable(store, filter, limit);
    if (options.databaseUrl) {
        const db = await connectPostgres(options.databaseUrl);
        try {
            const store = new PgDeadLetter(db, site);
            if (action === 'list') return await list(store);
            if (!options.redisUrl)
                throw new ConfigError(
                    "requeue puts a fleet's requests in its queues in Redis: set --redis-url (REDIS_URL) too",
                );
            return await requeueInFleet(store, filter, {
                redisUrl: options.redisUrl,
                cluster: options.redisCluster,
                prefix: options.redisPrefix ?? DISTRIBUTED_DEFAULTS.redisPrefix,
            });
        } finally {
            await db.close();
        }
    }
    const store = DeadLetterStore.open(storageDir, site);
    if (!store)
        throw new ConfigError(
            `no dead-letter of ${site} in ${storageDir}: no run of the site stored anything there (see --site, ` +
                `--storage-dir)`,
        );
    try {
        if (action === 'requeue')
            return reportRequeue(
                store.requeue(filter),
                site,
                filter,
                `npm start -- --site ${shellWord(site)} --storage-dir ${shellWord(storageDir)}   (resumes the run ` +
                    'and fetches them)',
            );
        return await list(store);
    } finally {
        store.close();
    }
});

/** Re-queues into the fleet's queues of the site in Redis. */
async function requeueInFleet(
    store: PgDeadLetter,
    filter: DeadLetterFilter,
    redisOptions: { redisUrl: string; cluster?: boolean; prefix: string },
): Promise<number> {
    const { site } = store;
    const redis = await connectRedis(redisOptions.redisUrl, {
        name: `${redisOptions.prefix}:dead-letter`,
        cluster: redisOptions.cluster,
    });
    const keys = fleetKeys(redisOptions.prefix, site);
    const queue = (name: string) => new JobQueue({ redis, prefix: keys.queuePrefix, name });
    const queues = { http: queue(keys.httpQueue), browser: queue(keys.browserQueue) };
    try {
        const result = await store.requeue(filter, queues);
        return reportRequeue(
            result,
            site,
            filter,
            `the fleet's workers take them; with none running, npm start -- --site ${shellWord(site)} with ` +
                'REDIS_URL and DATABASE_URL set joins the run and fetches them',
        );
    } finally {
        await Promise.all([queues.http.close(), queues.browser.close()]);
        redis.disconnect();
    }
}

async function listJson(store: DeadLetterReader, filter: DeadLetterFilter, limit: number): Promise<number> {
    let count = 0;
    for await (const entry of store.entries(filter)) {
        if (count++ >= limit) break;
        await write(`${JSON.stringify(entry)}\n`);
    }
    return 0;
}

/** Two passes, as CSV export does: the first sizes the columns and counts, the second prints; memory stays flat. */
async function listTable(store: DeadLetterReader, filter: DeadLetterFilter, limit: number): Promise<number> {
    const columns = COLUMNS.map(([title, cell]) => ({ title, cell, width: title.length }));
    const byClass = new Map<string, Map<string, number>>();
    let total = 0;
    for await (const entry of store.entries(filter)) {
        if (total++ < limit) {
            for (const column of columns) column.width = Math.max(column.width, column.cell(entry).length);
        }
        let reasons = byClass.get(entry.failureClass);
        if (!reasons) {
            reasons = new Map();
            byClass.set(entry.failureClass, reasons);
        }
        reasons.set(entry.reason, (reasons.get(entry.reason) ?? 0) + 1);
    }
    if (total === 0) {
        process.stdout.write(`no dead-letter entries of ${store.site}${filterWords(filter)}\n`);
        return 0;
    }
    const row = (text: (column: (typeof columns)[number]) => string) =>
        `${columns
            .map((column) => text(column).padEnd(column.width))
            .join('  ')
            .trimEnd()}\n`;
    await write(row((column) => column.title));
    let shown = 0;
    for await (const entry of store.entries(filter)) {
        if (shown++ >= limit) break;
        await write(row((column) => column.cell(entry)));
    }
    const counts = [...byClass].map(([failureClass, reasons]) => {
        const sum = [...reasons.values()].reduce((a, b) => a + b, 0);
        return `${failureClass} ${sum} (${[...reasons].map(([reason, n]) => `${reason} ${n}`).join(', ')})`;
    });
    const head = total > limit ? `${limit} of ${total} entries shown` : `${total} ${total === 1 ? 'entry' : 'entries'}`;
    await write(`${head}${filterWords(filter)}: ${counts.join(', ')}\n`);
    return 0;
}

function reportRequeue(result: RequeueResult, site: string, filter: DeadLetterFilter, next: string): number {
    if (result.entries.length === 0) {
        process.stdout.write(
            `nothing matched: no dead-letter entries of ${site}${filterWords(filter)}, nothing re-queued\n`,
        );
        return 0;
    }
    const queues = Object.entries(result.byQueue).map(([queue, n]) => `${n} to ${queue}`);
    const notes = [
        result.added > 0 ? `${result.added} missing from their queue, added back` : '',
        result.alreadyPending > 0 ? `${result.alreadyPending} pending already` : '',
    ].filter(Boolean);
    process.stdout.write(
        `re-queued ${result.entries.length} dead-letter ${result.entries.length === 1 ? 'entry' : 'entries'} ` +
            `of ${site}${filterWords(filter)}: ` +
            `${queues.join(', ') || 'none'}${notes.length > 0 ? ` (${notes.join('; ')})` : ''}\n` +
            `next: ${next}\n`,
    );
    return 0;
}

/** The filter as words: ` with class permanent, label product`. */
function filterWords(filter: DeadLetterFilter): string {
    const parts = [
        filter.failureClass && `class ${filter.failureClass}`,
        filter.label !== undefined && `label ${filter.label}`,
        filter.reason !== undefined && `reason ${filter.reason}`,
    ].filter(Boolean);
    return parts.length > 0 ? ` with ${parts.join(', ')}` : '';
}

function shellWord(word: string): string {
    return /^[\w./:@%+=,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Writes with backpressure, so a long list piped to a slow reader is not held in memory. */
async function write(chunk: string): Promise<void> {
    if (!process.stdout.write(chunk)) await once(process.stdout, 'drain');
}
