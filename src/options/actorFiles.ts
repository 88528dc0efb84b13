/**
 * The actor definition a runner such as Apify reads: `.actor/actor.json` and its input schema
 * `.actor/input_schema.json` (Apify's input schema specification, version 1), made from the option
 * table so the form a runner shows and the input it sends (options/runInput.ts) are the command line's
 * options. `npm run docs` writes both; test/options/actorFiles.test.ts fails when either is stale.
 */
import { z } from 'zod';
import { OPTION_GROUPS } from './optionSpec.js';
import { OPTIONS, type OptionName, optionsByGroup } from './options.js';
import type { OptionSpec } from './optionSpec.js';

/** What a property of an input schema says (the subset dragnet uses). */
export interface InputProperty {
    title: string;
    type: 'string' | 'integer' | 'number' | 'boolean' | 'array';
    description: string;
    editor?: 'textfield' | 'select' | 'checkbox' | 'number' | 'stringList' | 'requestListSources' | 'json';
    default?: unknown;
    enum?: string[];
    pattern?: string;
    minimum?: number;
    maximum?: number;
    isSecret?: boolean;
    sectionCaption?: string;
}

/**
 * Options whose values may hold credentials (proxy passwords, database and Redis URLs): a runner
 * keeps them encrypted and never shows them.
 */
const SECRET_OPTIONS: readonly OptionName[] = ['proxyTiers', 'redisUrl', 'databaseUrl'];

export function actorJson(version: string): Record<string, unknown> {
    return {
        actorSpecification: 1,
        name: 'dragnet',
        title: 'dragnet',
        description:
            'Large-scale web scraping on Crawlee: a frontier, a cheap HTTP path that escalates to a browser per ' +
            'route, dedup, raw and parsed storage kept apart, schema checks and a dead-letter queue.',
        // The platform takes MAJOR.MINOR.
        version: version.split('.').slice(0, 2).join('.'),
        input: './input_schema.json',
        dockerfile: '../Dockerfile',
    };
}

export function actorInputSchema(): Record<string, unknown> {
    const properties: Record<string, InputProperty> = {};
    for (const { title, names } of optionsByGroup()) {
        names.forEach((name, index) => {
            properties[name] = {
                ...inputProperty(name, OPTIONS[name]),
                ...(index === 0 ? { sectionCaption: title } : {}),
            };
        });
    }
    return {
        title: 'dragnet input',
        description:
            `The options of \`npm start\` by name; what is left out keeps its default. ` +
            `Groups: ${Object.values(OPTION_GROUPS).join(', ')}.`,
        type: 'object',
        schemaVersion: 1,
        properties,
        required: [],
    };
}

function inputProperty(name: OptionName, spec: OptionSpec): InputProperty {
    const sentence = `${spec.doc.charAt(0).toUpperCase()}${spec.doc.slice(1)}`;
    const description = `${sentence}. Flag --${spec.flag}, variable ${spec.env}.`;
    const base = { title: titleOf(name), description, ...(SECRET_OPTIONS.includes(name) ? { isSecret: true } : {}) };
    const json = z.toJSONSchema(spec.schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    if (spec.kind === 'switch' || spec.default === 'on' || spec.default === 'off') {
        return {
            ...base,
            type: 'boolean',
            editor: 'checkbox',
            ...defaultOf(spec.default === undefined ? undefined : spec.default === true || spec.default === 'on'),
        };
    }
    if (spec.kind === 'list') {
        const editor =
            name === 'startUrls' ? 'requestListSources' : SECRET_OPTIONS.includes(name) ? 'json' : 'stringList';
        return { ...base, type: 'array', editor, ...defaultOf(spec.default) };
    }
    if (json.type === 'integer' || json.type === 'number') {
        const minimum =
            typeof json.exclusiveMinimum === 'number'
                ? json.exclusiveMinimum + (json.type === 'integer' ? 1 : 0)
                : json.minimum;
        const maximum =
            typeof json.maximum === 'number' && json.maximum < Number.MAX_SAFE_INTEGER ? json.maximum : undefined;
        return {
            ...base,
            type: json.type,
            ...(json.type === 'integer' ? { editor: 'number' } : {}),
            ...numberBounds(minimum, maximum),
            ...defaultOf(spec.default),
        };
    }
    if (Array.isArray(json.enum))
        return { ...base, type: 'string', editor: 'select', enum: json.enum as string[], ...defaultOf(spec.default) };
    return {
        ...base,
        type: 'string',
        editor: 'textfield',
        ...(typeof json.pattern === 'string' ? { pattern: json.pattern } : {}),
        ...defaultOf(spec.default),
    };
}

function defaultOf(value: unknown): { default?: unknown } {
    return value === undefined ? {} : { default: Array.isArray(value) ? [...value] : value };
}

function numberBounds(minimum: unknown, maximum: number | undefined): { minimum?: number; maximum?: number } {
    return { ...(typeof minimum === 'number' ? { minimum } : {}), ...(maximum === undefined ? {} : { maximum }) };
}

/** `maxConcurrency` → `Max concurrency`. */
function titleOf(name: string): string {
    const words = name
        .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
        .replace(/Url/g, 'URL')
        .toLowerCase()
        .replace(/\burl/g, 'URL')
        .replace(/\bmb\b/, 'MB');
    return words.charAt(0).toUpperCase() + words.slice(1);
}
