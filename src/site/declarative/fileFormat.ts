/**
 * The file format of a declarative site (declarativeSite.ts): what a YAML or JSON file may say, as
 * a zod schema of strict objects, so that a key the format does not know (`selecter:`) is an error
 * rather than ignored. Every check that needs no page is made here too, at load: each CSS selector
 * compiles (with css-select, which textOf and elementsOf run), each regular expression compiles,
 * each field's transforms fit one another and its type, and each enqueue rule names a route of the
 * file. The output is the file with its shorthands expanded and each field's type filled in.
 */
import { compile } from 'css-select';
import { z } from 'zod';
import type { RenderPolicy, RouteDefinition } from '../site.js';
import { KEYED_TRANSFORMS, kindAfter, NAMED_TRANSFORMS, type TransformSpec, type ValueKind } from './transforms.js';

const FIELD_TYPES = ['string', 'url', 'number', 'integer', 'boolean'] as const;
type FieldType = (typeof FIELD_TYPES)[number];

/** A field's type when the file gives none: what its transforms leave. */
const DEFAULT_TYPES: Record<ValueKind, FieldType> = {
    text: 'string',
    url: 'url',
    number: 'number',
    boolean: 'boolean',
};
/** The kinds of value each type can be given: a url field may read a full URL straight from an attribute. */
const KINDS_FITTING: Record<FieldType, readonly ValueKind[]> = {
    string: ['text', 'url'],
    url: ['text', 'url'],
    number: ['number'],
    integer: ['number'],
    boolean: ['boolean'],
};
const STRING_CONSTRAINTS = ['minLength', 'maxLength', 'pattern'] as const;
const NUMBER_CONSTRAINTS = ['min', 'max', 'positive'] as const;

const RENDER_POLICIES = ['auto', 'never', 'always'] as const satisfies readonly RenderPolicy[];
const WAIT_CONDITIONS = ['load', 'networkidle', 'fields'] as const satisfies readonly NonNullable<
    RouteDefinition['waitUntil']
>[];

const selector = z
    .string()
    .min(1, 'a CSS selector cannot be empty')
    .superRefine((text, ctx) => {
        try {
            compile(text);
        } catch (error) {
            ctx.addIssue({ code: 'custom', message: `invalid CSS selector "${text}": ${(error as Error).message}` });
        }
    });

/** Why `source` (with `flags`) is not a regular expression, or undefined when it is one. */
function regexProblem(source: string, flags?: string): string | undefined {
    try {
        new RegExp(source, flags);
        return undefined;
    } catch (error) {
        return (error as Error).message;
    }
}

/**
 * A JavaScript regular expression's source, without slashes. It is searched for: anchor it with ^ and $ to match whole.
 */
const regexSource = z
    .string()
    .min(1, 'a regular expression cannot be empty')
    .superRefine((source, ctx) => {
        const problem = regexProblem(source);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });

/** A URL pattern: one regular expression or a list of them (any may match). */
const patterns = z.union([regexSource, z.array(regexSource).min(1)], {
    error: 'expected a regular expression, or a list of them',
});

const keyedTransform = z
    .strictObject({
        regex: z.string().min(1).optional(),
        matches: z.string().min(1).optional(),
        // g and y would make the pattern remember where it stopped, from one page to the next.
        flags: z
            .string()
            .regex(/^[imsu]*$/, 'flags may be i, m, s and u')
            .optional(),
        map: z
            .record(
                z.string(),
                z.union([z.string(), z.number(), z.boolean()], {
                    error: 'a map value is a string, a number or a boolean',
                }),
            )
            .optional(),
        split: z.string().min(1).optional(),
    })
    .superRefine((spec, ctx) => {
        const keys = KEYED_TRANSFORMS.filter((key) => spec[key] !== undefined);
        const [key] = keys;
        if (key === undefined || keys.length !== 1) {
            const message =
                keys.length === 0
                    ? `a transform object has one of the keys ${KEYED_TRANSFORMS.join(', ')}`
                    : `one transform per list item: ${keys.join(' and ')} are two`;
            ctx.addIssue({ code: 'custom', message });
            return;
        }
        const pattern = spec.regex ?? spec.matches;
        if (pattern === undefined) {
            if (spec.flags !== undefined)
                ctx.addIssue({ code: 'custom', path: ['flags'], message: 'flags go with regex or matches' });
            return;
        }
        const problem = regexProblem(pattern, spec.flags);
        if (problem) ctx.addIssue({ code: 'custom', path: [key], message: problem });
    });

const transform = z.union(
    [
        z.enum(NAMED_TRANSFORMS, {
            error: (issue) =>
                `unknown transform ${JSON.stringify(issue.input)} (the named ones: ${NAMED_TRANSFORMS.join(', ')})`,
        }),
        keyedTransform,
    ],
    {
        error:
            `a transform is one of ${NAMED_TRANSFORMS.join(', ')}, or an object with one of the ` +
            `keys ${KEYED_TRANSFORMS.join(', ')}`,
    },
) satisfies z.ZodType<TransformSpec>;

/** A field in full as a file writes it. */
const writtenField = z.strictObject({
    selector,
    attr: z.string().min(1).optional(),
    all: z.boolean().optional(),
    transforms: z.array(transform).optional(),
    required: z.boolean().optional(),
    type: z.enum(FIELD_TYPES).optional(),
    minLength: z.number().int().nonnegative().optional(),
    maxLength: z.number().int().nonnegative().optional(),
    pattern: regexSource.optional(),
    min: z.number().optional(),
    max: z.number().optional(),
    positive: z.boolean().optional(),
});

type WrittenField = z.output<typeof writtenField>;

/**
 * The field with its type filled in, once its transforms fit one another and the type, and each constraint the type.
 */
function typedField(field: WrittenField, ctx: z.RefinementCtx): WrittenField & { type: FieldType } {
    const chain = kindAfter(field.transforms ?? []);
    if ('problem' in chain) {
        ctx.addIssue({ code: 'custom', path: ['transforms', chain.step], message: chain.problem });
        return z.NEVER;
    }
    const type = field.type ?? DEFAULT_TYPES[chain.kind];
    const problems: { key: string; message: string }[] = [];
    if (!KINDS_FITTING[type].includes(chain.kind)) {
        problems.push({
            key: 'type',
            message:
                `type ${type} does not fit the value, which is ${chain.kind} ` +
                `after ${field.transforms?.length ? 'the transforms' : 'no transform'}`,
        });
    }
    const isString = type === 'string' || type === 'url';
    const isNumber = type === 'number' || type === 'integer';
    for (const key of STRING_CONSTRAINTS)
        if (field[key] !== undefined && !isString)
            problems.push({ key, message: `${key} is for string and url fields, and this one is ${type}` });
    for (const key of NUMBER_CONSTRAINTS)
        if (field[key] !== undefined && !isNumber)
            problems.push({ key, message: `${key} is for number and integer fields, and this one is ${type}` });
    for (const { key, message } of problems) ctx.addIssue({ code: 'custom', path: [key], message });
    return problems.length > 0 ? z.NEVER : { ...field, type };
}

const fieldObject = writtenField.transform(typedField);

/** A field in full, its type filled in. A shorthand (`title: h1`) is `{ selector: 'h1', type: 'string' }`. */
export type FieldSpec = z.output<typeof fieldObject>;

const field = z
    .union([selector, fieldObject], {
        error: 'a field is a CSS selector, or an object with a selector: { selector, attr, transforms, required, ... }',
    })
    .transform((value): FieldSpec => (typeof value === 'string' ? { selector: value, type: 'string' } : value));

const route = z
    .strictObject({
        /** Tested against the whole URL, like a RegExp in a TypeScript site; `{ path }` against the URL's path only. */
        match: z
            .union([patterns, z.strictObject({ path: patterns })], {
                error:
                    'match is a regular expression (or a list of them) tested against the whole URL, or { path: ' +
                    '... } tested against its path',
            })
            .optional(),
        records: selector.optional(),
        fields: z
            .record(z.string(), field)
            .refine(
                (fields) => Object.keys(fields).length > 0,
                'fields needs a field (leave it out for a route that only enqueues)',
            )
            .optional(),
        minRecords: z.number().int().nonnegative().optional(),
        enqueue: z.array(z.strictObject({ selector, label: z.string().min(1) })).optional(),
        render: z.enum(RENDER_POLICIES).optional(),
        waitFor: z.string().min(1).optional(),
        waitUntil: z.enum(WAIT_CONDITIONS).optional(),
        contentTypes: z.array(z.string().min(1)).optional(),
    })
    .superRefine((spec, ctx) => {
        if (spec.records !== undefined && spec.fields === undefined)
            ctx.addIssue({
                code: 'custom',
                path: ['records'],
                message: 'records needs fields to read from each record',
            });
        // A whole URL starts with its scheme, so `^/` there is a path pattern in the wrong place: it would never match.
        const urlPatterns = typeof spec.match === 'string' ? [spec.match] : Array.isArray(spec.match) ? spec.match : [];
        for (const [index, source] of urlPatterns.entries()) {
            if (source.startsWith('^/')) {
                const path = typeof spec.match === 'string' ? ['match'] : ['match', index];
                ctx.addIssue({
                    code: 'custom',
                    path,
                    message:
                        `${source} is tested against the whole URL (https://…), which never starts with /: ` +
                        `write match: { path: ${source} }`,
                });
            }
        }
    });

export type RouteSpec = z.output<typeof route>;

const proxyTier = z.strictObject({
    name: z.string().min(1),
    proxyUrls: z
        .union([z.literal('direct'), z.array(z.string().min(1))], {
            error: 'proxyUrls is "direct" or a list of proxy URLs',
        })
        .optional(),
    cost: z.number().positive().optional(),
});

/** The site-level keys, handed to defineSite as they are: the SiteDefinition options of the same names. */
const siteOptions = {
    name: z.string(),
    startUrls: z.array(z.url()),
    allowedDomains: z.array(z.string().min(1)).optional(),
    trackingParams: z.array(z.string().min(1)).optional(),
    maxLinksPerPage: z.number().int().positive().optional(),
    headers: z.record(z.string(), z.string()).optional(),
    proxyTiers: z.array(proxyTier).optional(),
    maxRate: z.number().positive().optional(),
    maxConcurrency: z.number().int().positive().optional(),
    sitemaps: z
        .union([z.literal(true), z.array(z.url())], {
            error: 'sitemaps is true (the ones robots.txt names) or a list of sitemap URLs',
        })
        .optional(),
};

export const siteFileSchema = z
    .strictObject({
        ...siteOptions,
        routes: z.record(z.string(), route).refine((routes) => Object.keys(routes).length > 0, 'a site needs a route'),
    })
    .superRefine((file, ctx) => {
        const labels = Object.keys(file.routes);
        for (const [label, spec] of Object.entries(file.routes)) {
            for (const [index, rule] of (spec.enqueue ?? []).entries()) {
                if (!Object.hasOwn(file.routes, rule.label)) {
                    ctx.addIssue({
                        code: 'custom',
                        path: ['routes', label, 'enqueue', index, 'label'],
                        message: `no route "${rule.label}" to enqueue links to (routes: ${labels.join(', ')})`,
                    });
                }
            }
        }
    });
