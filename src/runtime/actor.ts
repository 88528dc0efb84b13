/**
 * A run on an actor runner, through Apify's SDK (`apify`). On the Apify platform, which sets
 * `APIFY_IS_AT_HOME`, the SDK keeps the actor's storages behind the platform's API and hears the
 * platform's events on `ACTOR_EVENTS_WEBSOCKET_URL`. Anywhere else `DRAGNET_ACTOR=1` runs the same
 * way with the SDK's local mode: its storages in its local layout (`CRAWLEE_STORAGE_DIR`, else
 * `./storage`: `datasets/default/`, `key_value_stores/default/INPUT.json`, emptied but for the
 * INPUT when the SDK starts) and, when `ACTOR_EVENTS_WEBSOCKET_URL` is set, the platform's events
 * from there, through the SDK's own platform event manager (its local one sends none). Either way:
 *
 * - the actor's input (`Actor.getInput()`) is the run's input, under flags and variables (options/config.ts);
 * - the site's items follow into the actor's default dataset as they are stored (actorDatasetFeed.ts);
 * - `aborting` and `migrating` stop the run as SIGTERM does (runtime/stopSignal.ts): pages in flight finish,
 *   the state is saved and the next run on the same storage dir resumes, exit code 143. The SDK's
 *   own handling of them (exit at once on `aborting`, reboot on `migrating`) is turned off: it would
 *   cut the pages in flight;
 * - `Actor.exit()` ends the actor run with the run's exit code.
 *
 * dragnet's storage dir is its own, apart from the SDK's unless they are the same dir, as both are by
 * default (`./storage`). Their files do not overlap but in `key_value_stores/default`, where the SDK's
 * INPUT and the feed's progress sit beside Crawlee's crawler statistics, which no run resumes from.
 * On the Apify platform the storage dir is on the container's disk, which a new container (after a
 * migration, or for a new run) starts without. The SDK's `Actor` is one per process, so is an actor
 * run: main.ts starts it in the process that does the work (after the memory re-exec).
 */
import { log as crawleeLog, LogLevel } from '@crawlee/core';
import type { Actor as SdkActor } from 'apify';
import { type Config, parseConfig } from '../options/config.js';
import type { Logger } from '../monitor/logger.js';
import { storeNames } from '../store/datasets.js';
import { requestStop } from './stopSignal.js';
import { ActorDatasetFeed } from './actorDatasetFeed.js';

/** The SDK's events that stop the run, each as SIGTERM does (exit code 143). */
const STOP_EVENTS = ['aborting', 'migrating'] as const;

export interface ActorRun {
    /** The run's configuration, the actor's input read as its input. */
    config: Config;
    /**
     * Starts feeding the site's items into the actor's default dataset:
     * before the crawl; the run's end pushes the last of them.
     */
    feedItems(site: string, log: Logger): Promise<void>;
}

/** The actor run as it ends: the feed's last items, then the SDK let go of. */
class RunningActor {
    feed: ActorDatasetFeed | undefined;

    constructor(private readonly actor: typeof SdkActor) {}

    /** The last items pushed, then `Actor.exit()` with the run's exit code, which ends the process. */
    async end(exitCode: number): Promise<void> {
        try {
            await this.feed?.finish();
        } catch (error) {
            await this.actor.exit({ exit: false });
            throw error;
        }
        await this.actor.exit({ exitCode });
    }

    /**
     * After a failure: what is surely this run's pushed, then the SDK let go of
     * without exiting, so the command reports the failure as it always does.
     */
    async endFailed(): Promise<void> {
        await this.feed?.abandon();
        await this.actor.exit({ exit: false });
    }
}

/** This process's actor run, once started. */
let running: RunningActor | undefined;

/** On a runner: the Apify platform's own variable, or dragnet's for the SDK's local mode. */
function onRunner(env: NodeJS.ProcessEnv): boolean {
    return Boolean(env.APIFY_IS_AT_HOME) || env.DRAGNET_ACTOR === '1';
}

/**
 * Starts the actor run when on a runner (else resolves undefined): the SDK set up, its stop events
 * turned into graceful stops, and the options read again with the actor's input. A failure here
 * ends the actor run before it is passed on.
 */
export async function startActorRun(argv: string[], env: NodeJS.ProcessEnv): Promise<ActorRun | undefined> {
    if (!onRunner(env)) return undefined;
    // Loaded only here: importing the SDK patches how Crawlee's configuration reads the environment.
    const { Actor, Configuration, PlatformEventManager } = await import('apify');
    if (!env.APIFY_IS_AT_HOME && env.ACTOR_EVENTS_WEBSOCKET_URL) {
        // What Actor.init() does at home; the SDK's global configuration is the one its Actor uses.
        const sdkConfig = Configuration.getGlobalConfig();
        sdkConfig.useEventManager(new PlatformEventManager(sdkConfig));
    }
    // The SDK logs through Crawlee's log, which goes to stdout until dragnet's logger takes it over
    // (monitor/logger.ts): stdout carries only the summary, so the SDK's start-up lines are left out.
    crawleeLog.setLevel(LogLevel.WARNING);
    const run = new RunningActor(Actor);
    try {
        await Actor.init({ gracefulShutdown: false });
        for (const event of STOP_EVENTS)
            Actor.on(event, () => requestStop({ signal: 'SIGTERM', cause: `the actor's ${event} event` }));
        const input: unknown = await Actor.getInput();
        // The SDK gives a record that is not JSON as its bytes: read as text, it is refused as not an object.
        const value = Buffer.isBuffer(input) ? input.toString('utf8') : input;
        // --help was answered before the runner started (main.ts).
        const config = parseConfig(argv, env, { source: 'Actor.getInput()', value }) as Config;
        running = run;
        return {
            config,
            feedItems: async (site, log) => {
                if (config.redisUrl || config.databaseUrl) {
                    log.warn(
                        "the actor's dataset is not fed in the distributed mode: the items are in PostgreSQL (npm " +
                            'run export)',
                    );
                    return;
                }
                const storages = {
                    pushData: (items: object[]) => Actor.pushData(items),
                    getValue: <T>(key: string) => Actor.getValue<T>(key),
                    setValue: (key: string, value: unknown) => Actor.setValue(key, value),
                };
                run.feed = await ActorDatasetFeed.start({
                    storageDir: config.storageDir,
                    dataset: storeNames(site).items,
                    actor: storages,
                    log,
                });
            },
        };
    } catch (error) {
        await run.endFailed();
        throw error;
    }
}

/**
 * `main` as a command that ends its actor run, when it started one: the last items pushed and
 * `Actor.exit()` with main's exit code. When main fails the actor run is ended without exiting.
 */
export function endingActorRun(main: () => Promise<number>): () => Promise<number> {
    return async () => {
        let exitCode: number;
        try {
            exitCode = await main();
        } catch (error) {
            await running?.endFailed();
            throw error;
        }
        await running?.end(exitCode);
        return exitCode;
    };
}
