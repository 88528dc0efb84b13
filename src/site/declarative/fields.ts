/**
 * A declarative field (fileFormat.ts) made into what a TypeScript route writes by hand: a reader
 * of its value from a record's part of the page, and its schema. Text is read with textOf and
 * elements found with elementsOf, the helpers of the route API, so a field reads a page exactly as
 * the same selector would in a site module.
 */
import type { CheerioAPI } from 'cheerio';
import type { Element } from 'domhandler';
import { textContent } from 'domutils';
import { z } from 'zod';
import { collapsedText, elementsOf, textOf } from '../site.js';
import type { FieldSpec } from './fileFormat.js';
import { compileTransform, type TransformPage } from './transforms.js';

/** The page a record is read from. */
export interface FieldPage extends TransformPage {
    $: CheerioAPI;
}

/**
 * The field's value in the part of the page under `root` (the whole page when undefined): undefined
 * when missing, and for a list field the list of the values found, empty when none was.
 */
export type FieldReader = (page: FieldPage, root: Element | undefined) => unknown;

/** Whether the field holds a list: every match (`all`), or the parts of a split. */
function isList(field: FieldSpec): boolean {
    return (
        field.all === true ||
        (field.transforms ?? []).some((spec) => typeof spec === 'object' && spec.split !== undefined)
    );
}

export function fieldReader(field: FieldSpec): FieldReader {
    const steps = (field.transforms ?? []).map(compileTransform);
    const list = isList(field);
    return (page, root) => {
        let values = readValues(field, page.$, root);
        for (const step of steps) {
            // A missing value drops out, and the parts of a split become values of their own.
            values = values.flatMap((value) => {
                const after = step(value, page);
                return after === undefined ? [] : after;
            });
        }
        return list ? values : values[0];
    };
}

/**
 * What the selector finds: the text (collapsed and trimmed, as textOf reads it) or the attribute
 * of its first match, or of every match with `all`. A blank value counts as missing, as it does
 * for textOf.
 */
function readValues(field: FieldSpec, $: CheerioAPI, root: Element | undefined): unknown[] {
    if (!field.all && field.attr === undefined) {
        const text = textOf($, field.selector, root);
        return text === undefined ? [] : [text];
    }
    const elements = elementsOf($, field.selector, root);
    const read = (element: Element) =>
        field.attr === undefined ? collapsedText(textContent(element)) : element.attribs[field.attr];
    return (field.all ? elements : elements.slice(0, 1))
        .map(read)
        .filter((value): value is string => value !== undefined && value.trim() !== '');
}

/**
 * The field's schema in its record's: its type and constraints, for each item of a list. A field
 * is optional unless required; a list is always there, and required asks for at least one item.
 */
export function fieldSchema(field: FieldSpec): z.ZodType {
    const value = valueSchema(field);
    if (isList(field)) return field.required ? z.array(value).min(1) : z.array(value);
    return field.required ? value : value.optional();
}

function valueSchema(field: FieldSpec): z.ZodType {
    switch (field.type) {
        case 'string':
            return stringChecks(z.string(), field);
        case 'url':
            return stringChecks(z.url(), field);
        case 'number':
            return numberChecks(z.number(), field);
        case 'integer':
            return numberChecks(z.number().int(), field);
        case 'boolean':
            return z.boolean();
    }
}

/** z.string() or z.url(): both have zod's string checks. */
type StringSchema = z.ZodString | z.ZodURL;

function stringChecks<S extends StringSchema>(schema: S, field: FieldSpec): S {
    let checked = schema;
    if (field.minLength !== undefined) checked = checked.min(field.minLength) as S;
    if (field.maxLength !== undefined) checked = checked.max(field.maxLength) as S;
    if (field.pattern !== undefined) checked = checked.regex(new RegExp(field.pattern)) as S;
    return checked;
}

function numberChecks(schema: z.ZodNumber, field: FieldSpec): z.ZodNumber {
    let checked = schema;
    if (field.positive) checked = checked.positive();
    if (field.min !== undefined) checked = checked.min(field.min);
    if (field.max !== undefined) checked = checked.max(field.max);
    return checked;
}
