/**
 * A run's input as an actor takes it: one JSON object whose keys are the option table's names
 * (options/options.ts: `site`, `startUrls`, `maxConcurrency`, `proxyTiers`, ...), from `--input FILE`, else
 * the `DRAGNET_INPUT` variable, else an input given from elsewhere (on a runner, the actor's:
 * `Actor.getInput()`, runtime/actor.ts), else `<storage-dir>/key_value_stores/default/INPUT.json` —
 * where Crawlee and Apify keep an actor's input. Flags and variables override it (options/config.ts), and
 * each value is read by its option's own schema, so an input says nothing a flag could not.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from './configError.js';
import { OPTIONS, type OptionName } from './options.js';

/** The variable that holds a run's input as JSON, read after `--input` and before the rest. */
export const INPUT_VARIABLE = 'DRAGNET_INPUT';

export interface RunInput {
    /**
     * Where it came from, for messages: `--input run.json`,
     * `DRAGNET_INPUT`, `storage/key_value_stores/default/INPUT.json`.
     */
    source: string;
    values: Partial<Record<OptionName, unknown>>;
}

/** The input file in a storage dir, as Crawlee's key-value store `default` holds the record `INPUT`. */
export function inputFileIn(storageDir: string): string {
    return join(storageDir, 'key_value_stores', 'default', 'INPUT.json');
}

/** An input that came from elsewhere than a file or a variable, as its JSON reads: an actor's, say. */
export interface GivenInput {
    /** Where it came from, for messages: `Actor.getInput()`. */
    source: string;
    /** The parsed JSON; null or undefined when there is none. */
    value: unknown;
}

/**
 * The run's input, or undefined when none is given or found: `given` takes the place of the storage
 * dir's INPUT.json, unless it has no value. Throws ConfigError for one that is not a JSON object of options.
 */
export function readRunInput(
    inputFlag: string | undefined,
    env: NodeJS.ProcessEnv,
    storageDir: string,
    given?: GivenInput,
): RunInput | undefined {
    if (inputFlag) return parseInput(`--input ${inputFlag}`, readText(inputFlag, `--input ${inputFlag}`));
    const fromVariable = env[INPUT_VARIABLE];
    if (fromVariable) return parseInput(INPUT_VARIABLE, fromVariable);
    if (given && given.value !== null && given.value !== undefined) return inputOf(given.source, given.value);
    const stored = inputFileIn(storageDir);
    if (!existsSync(stored)) return undefined;
    const input = parseInput(stored, readText(stored, stored));
    // The file is found through the storage dir: it cannot then move it.
    if (input.values.storageDir !== undefined)
        throw new ConfigError(`${stored}: storageDir cannot be set by the input inside the storage dir`);
    return input;
}

function readText(file: string, source: string): string {
    try {
        return readFileSync(file, 'utf8');
    } catch (error) {
        throw new ConfigError(
            `${source}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
        );
    }
}

function parseInput(source: string, text: string): RunInput {
    let parsed: unknown;
    try {
        parsed = JSON.parse(text);
    } catch (error) {
        throw new ConfigError(`${source}: not JSON (${(error as Error).message})`);
    }
    return inputOf(source, parsed);
}

function inputOf(source: string, parsed: unknown): RunInput {
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
        throw new ConfigError(`${source}: must be a JSON object of options`);
    const values: RunInput['values'] = {};
    for (const [key, value] of Object.entries(parsed)) {
        if (!Object.hasOwn(OPTIONS, key)) throw new ConfigError(`${source}: unknown key "${key}"${suggestion(key)}`);
        const name = key as OptionName;
        // null is "not given", as an empty variable is.
        if (value !== null) values[name] = asOptionValue(name, value);
    }
    return { source, values };
}

/**
 * What an input's JSON gives, as the option's schema reads it: a one-value list as a list, Apify's
 * request-list entries (`{ "url": … }`) as URLs, a proxy tier object as `NAME=URL,URL`.
 */
function asOptionValue(name: OptionName, value: unknown): unknown {
    if (OPTIONS[name].kind !== 'list') return value;
    const entries = Array.isArray(value) ? value : [value];
    return entries.map((entry) => {
        if (entry === null || typeof entry !== 'object') return entry;
        const fields = entry as Record<string, unknown>;
        if (typeof fields.url === 'string') return fields.url;
        if (typeof fields.name === 'string' && fields.proxyUrls !== undefined) {
            const urls = Array.isArray(fields.proxyUrls) ? fields.proxyUrls.join(',') : String(fields.proxyUrls);
            return `${fields.name}=${urls}`;
        }
        return entry;
    });
}

/**
 * ` (did you mean "maxConcurrency"?)` for a key written as the
 * flag (`max-concurrency`), the variable, or in another case.
 */
function suggestion(key: string): string {
    const plain = (text: string) => text.toLowerCase().replace(/[-_]/g, '');
    const near = (Object.keys(OPTIONS) as OptionName[]).find(
        (name) => plain(name) === plain(key) || OPTIONS[name].flag === key || OPTIONS[name].env === key,
    );
    return near ? ` (did you mean "${near}"?)` : '';
}
