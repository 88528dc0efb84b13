/**
 * The shape of an option of the table (options/options.ts), its groups, and the `option` helper that
 * declares one with its schema's type kept.
 */
import type { z } from 'zod';

export const OPTION_GROUPS = {
    site: 'What to crawl',
    fetch: 'Fetching',
    proxies: 'Proxies, sessions and politeness',
    retry: 'Retries',
    frontier: 'Queue and dedup',
    quality: 'Data quality',
    output: 'Storage and output',
    distributed: 'Distributed mode (many workers, one frontier)',
    monitor: 'Monitoring',
} as const;

export type OptionGroup = keyof typeof OPTION_GROUPS;

export interface OptionSpec<Schema extends z.ZodType = z.ZodType> {
    /** The flag, without its dashes. */
    flag: string;
    env: string;
    group: OptionGroup;
    /** One line: what the option does. */
    doc: string;
    /**
     * Reads the value as given: a string from a flag or a variable, or the default. Its messages
     * follow the flag's name: `--max-concurrency must be a number`.
     */
    schema: Schema;
    /** The value when neither the flag nor the variable is given; absent: the option is unset. */
    default?: string | number | boolean | readonly string[];
    /** How the default reads in the docs when it is no value of its own (`no limit`, `off`). */
    defaultText?: string;
    /**
     * `switch`: a flag without a value (its variable: 1, 0, true or
     * false); `list`: repeatable (its variable: space-separated).
     */
    kind?: 'switch' | 'list';
    /** How a `list` option's variable is split. Default: on whitespace. */
    listSeparator?: RegExp;
}

export const option = <Schema extends z.ZodType>(spec: OptionSpec<Schema>) => spec;
