/**
 * Reading the option table (options/options.ts): a flag over its environment variable (read from `.env`)
 * over its default, checked by the option's schema, for `npm start` and for the options the other
 * commands share with it. `--help` is made from the same table.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { z } from 'zod';
import { ConfigError } from './configError.js';
import type { CrawlOptions, DistributedOptions } from './crawlOptions.js';
import { memoryBudgetMb } from '../runtime/memoryBudget.js';
import { ENVIRONMENT_ONLY, OPTIONS, type OptionName, optionsByGroup } from './options.js';
import type { OptionSpec } from './optionSpec.js';
import { type GivenInput, type RunInput, readRunInput } from './runInput.js';

/** The options' values, as their schemas read them. */
export type Config = { [Name in OptionName]: z.output<(typeof OPTIONS)[Name]['schema']> };

type ParseArgsOptions = NonNullable<ParseArgsConfig['options']>;
type FlagValues = Record<string, string | boolean | (string | boolean)[] | undefined>;
/** What parseArgs gives for flags `Options`. */
type ValuesOf<Options extends ParseArgsOptions> = ReturnType<
    typeof parseArgs<{ options: Options; strict: true; allowPositionals: false }>
>['values'];

const ALL_OPTIONS = Object.keys(OPTIONS) as OptionName[];
const HELP_FLAG = { help: { type: 'boolean' } } as const satisfies ParseArgsOptions;
const INPUT_FLAG = { input: { type: 'string' } } as const satisfies ParseArgsOptions;

/**
 * The configuration for a run, or `'help'` when help was asked for: flags over variables over the
 * run's input (options/runInput.ts) over defaults. `given` is an input from elsewhere, an actor's
 * (`Actor.getInput()`): read as the run's input in place of the storage dir's INPUT.json. Throws ConfigError.
 */
export function parseConfig(argv: string[], env: NodeJS.ProcessEnv, given?: GivenInput): Config | 'help' {
    const flags = parseFlags(argv, { ...flagsOf(ALL_OPTIONS), ...INPUT_FLAG, ...HELP_FLAG });
    if (flags.help) return 'help';
    const storageDir = readOption('storageDir', flags, env) as string;
    return readOptions(
        ALL_OPTIONS,
        flags,
        env,
        readRunInput(flags.input as string | undefined, env, storageDir, given),
    );
}

/**
 * Another command's command line: the table's options `shared` (flag, variable, default and checks
 * as `npm start` has them), the command's own `flags` and `--help`. `'help'` when help was asked for.
 */
export function parseCommandLine<Shared extends OptionName, Own extends ParseArgsOptions>(
    argv: string[],
    env: NodeJS.ProcessEnv,
    shared: readonly Shared[],
    own: Own,
): { options: Pick<Config, Shared>; flags: ValuesOf<Own> } | 'help' {
    const flags = parseFlags(argv, { ...flagsOf(shared), ...own, ...HELP_FLAG });
    if (flags.help) return 'help';
    const ownFlags = Object.fromEntries(
        Object.keys(own).flatMap((name) => (flags[name] === undefined ? [] : [[name, flags[name]]])),
    );
    return { options: readOptions(shared, flags, env), flags: ownFlags as ValuesOf<Own> };
}

/** Parses flags, turning a parse failure into a ConfigError. */
function parseFlags(argv: string[], options: ParseArgsOptions): FlagValues {
    try {
        return parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values;
    } catch (error) {
        // parseArgs explains itself over lines; the first says what is
        // wrong, and a value starting with a dash needs `--flag=-1`.
        const [what, ...more] = (error as Error).message.split('\n');
        const dashHint = more.find((line) => line.startsWith('To specify an option argument starting with a dash'));
        throw new ConfigError(`${what}${dashHint ? ` ${dashHint}` : ''} (see --help)`);
    }
}

/** parseArgs' description of the flags of options `names`. */
function flagsOf(names: readonly OptionName[]): ParseArgsOptions {
    return Object.fromEntries(
        names.map((name) => {
            const spec: OptionSpec = OPTIONS[name];
            return [spec.flag, { type: spec.kind === 'switch' ? 'boolean' : 'string', multiple: spec.kind === 'list' }];
        }),
    );
}

function readOptions<Names extends OptionName>(
    names: readonly Names[],
    flags: FlagValues,
    env: NodeJS.ProcessEnv,
    input?: RunInput,
): Pick<Config, Names> {
    return Object.fromEntries(names.map((name) => [name, readOption(name, flags, env, input)])) as Pick<Config, Names>;
}

/**
 * An option's value: its flag, else its variable (an empty one counts as unset), else the input's,
 * else its default; as its schema reads it. A bad value is named as it was given: `--max-concurrency
 * must be …`, `DRAGNET_MAX_CONCURRENCY (--max-concurrency) must be …`, or `storage/…/INPUT.json:
 * maxConcurrency must be …`.
 */
function readOption(name: OptionName, flags: FlagValues, env: NodeJS.ProcessEnv, input?: RunInput): unknown {
    const spec: OptionSpec = OPTIONS[name];
    const variable = env[spec.env] || undefined;
    const fromEnv =
        variable !== undefined && spec.kind === 'list'
            ? variable.split(spec.listSeparator ?? /\s+/).filter(Boolean)
            : variable;
    const given = flags[spec.flag] ?? fromEnv;
    const fromInput = given === undefined ? input?.values[name] : undefined;
    const parsed = spec.schema.safeParse(given ?? fromInput ?? spec.default);
    if (!parsed.success) {
        const message = parsed.error.issues[0]?.message ?? 'is not valid';
        if (fromInput !== undefined && input) throw new ConfigError(`${input.source}: ${name} ${message}`);
        throw new ConfigError(
            flags[spec.flag] === undefined && fromEnv !== undefined
                ? `${spec.env} (--${spec.flag}) ${message}`
                : `--${spec.flag} ${message}`,
        );
    }
    return parsed.data;
}

/** How an option's default reads in `--help` and the docs; undefined when it has none. */
export function shownDefault(spec: OptionSpec): string | undefined {
    return spec.defaultText ?? (spec.default === undefined ? undefined : String(spec.default));
}

export function helpText(): string {
    const lines = [
        'dragnet — crawl a site through the whole pipeline',
        '',
        'Usage: npm start -- [options]',
        '       npm start                  crawl the built-in demo shop (started in-process, offline)',
        '',
        'Options (flags override environment variables, which may be set in .env):',
    ];
    for (const { title, names } of optionsByGroup()) lines.push('', `${title}:`, optionLines(names));
    lines.push(
        '',
        `  ${'--input <file>'.padEnd(30)} the run's input: a JSON object of these options by name (maxConcurrency, ` +
            `startUrls, …); flags and variables override it (default: ` +
            `<storage-dir>/key_value_stores/default/INPUT.json; env: DRAGNET_INPUT, the JSON itself)`,
        `  ${'--help'.padEnd(30)} show this help`,
        '',
        'Environment only:',
    );
    for (const variable of ENVIRONMENT_ONLY)
        lines.push(`  ${variable.env.padEnd(30)} ${variable.doc} (default: ${variable.defaultText})`);
    lines.push('');
    return lines.join('\n');
}

/** The `--help` lines of options `names`: flag, doc, default and variable. */
export function optionLines(names: readonly OptionName[]): string {
    return names
        .map((name) => {
            const spec: OptionSpec = OPTIONS[name];
            const flag = `--${spec.flag}${spec.kind === 'switch' ? '' : ' <value>'}`.padEnd(30);
            const byDefault = shownDefault(spec);
            return (
                `  ${flag} ${spec.doc} ` +
                `(${byDefault === undefined ? '' : `default: ${byDefault}; `}env: ${spec.env})`
            );
        })
        .join('\n');
}

/** The crawl options a configuration asks for; the caller adds the site, start URLs, Chromium and logger. */
export function crawlOptionsOf(config: Config): Omit<CrawlOptions, 'site' | 'startUrls' | 'chromiumPath' | 'log'> {
    return {
        storageDir: config.storageDir,
        archiveDir: config.archiveDir,
        allowDomains: config.allowDomains,
        allowPrivateNetwork: config.allowPrivateNetwork,
        maxResponseMb: config.maxResponseMb,
        fresh: config.fresh,
        recrawl: config.recrawl,
        revisit: { revisitMin: config.revisitMin, revisitMax: config.revisitMax },
        randomOrder: config.requestOrder === 'random',
        maxConcurrency: config.maxConcurrency,
        adaptiveConcurrency: config.adaptiveConcurrency,
        browserConcurrency: config.browserConcurrency,
        parseWorkers: config.parseWorkers,
        browserWaitSecs: config.browserWaitSecs,
        maxRequests: config.maxRequests,
        requestTimeoutSecs: config.requestTimeoutSecs,
        adaptiveTimeout: config.adaptiveTimeout,
        retry: {
            maxAttempts: config.maxAttempts,
            baseDelaySecs: config.retryBaseDelaySecs,
            factor: config.retryFactor,
            maxDelaySecs: config.retryMaxDelaySecs,
            maxRetryAfterSecs: config.maxRetryAfterSecs,
        },
        seenSet: config.seenSet,
        expectedUrls: config.expectedUrls,
        bloomErrorRate: config.bloomErrorRate,
        driftBreaker: {
            window: config.driftWindow,
            threshold: config.driftThreshold,
            minSamples: config.driftMinPages,
            scope: config.driftScope,
        },
        metricsPort: config.metricsPort,
        metricsHost: config.metricsHost,
        progressIntervalSecs: config.progressIntervalSecs,
        progress: config.progress,
        memoryMb: memoryBudgetMb(config.memoryMb),
        proxies: {
            tiers: config.proxyTiers.length > 0 ? config.proxyTiers : undefined,
            tierCosts: Object.fromEntries(config.proxyTierCosts.map(({ name, cost }) => [name, cost])),
            sessionMaxUses: config.sessionMaxUses,
            wire: config.wire,
            maxRate: config.maxRate,
            crawlDelay: config.crawlDelay,
            maxCrawlDelaySecs: config.maxCrawlDelaySecs,
        },
        distributed: distributedOptionsOf(config),
    };
}

/** The distributed mode when both URLs are given; one without the other is a mistake worth a clear message. */
function distributedOptionsOf(config: Config): DistributedOptions | undefined {
    const { redisUrl, databaseUrl } = config;
    if (!redisUrl && !databaseUrl) return undefined;
    if (!redisUrl || !databaseUrl) {
        throw new ConfigError(
            `the distributed mode needs both --redis-url (REDIS_URL) and --database-url (DATABASE_URL); ` +
                `only ${redisUrl ? '--redis-url' : '--database-url'} is set`,
        );
    }
    const { redisCluster, redisPrefix, jobLockSecs, finishGraceSecs, fleetConcurrency, maxWaitingJobs } = config;
    return {
        redisUrl,
        databaseUrl,
        redisCluster,
        redisPrefix,
        jobLockSecs,
        finishGraceSecs,
        fleetConcurrency,
        maxWaitingJobs,
    };
}
