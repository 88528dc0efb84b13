/**
 * The transforms of a declarative field (fileFormat.ts): the steps its value goes through, in
 * order. Each takes text or any value and gives one kind of value, so a chain that does not fit
 * (`number` after `matches`) is refused when the file loads, at its line, instead of failing on
 * every page. A missing value (nothing matched, no number in the text, no entry in the map) stays
 * missing to the end of the chain: a required field then fails the schema, and the page escalates
 * or is quarantined, as it should when a redesign breaks a selector, rather than becoming a
 * `false` or a 0 that looks like data.
 */
import { collapsedText, firstNumber } from '../site.js';

/** What a value is between steps: text, a URL (text that absoluteUrl made), a number or a boolean. */
export type ValueKind = 'text' | 'url' | 'number' | 'boolean';

/** The transforms without a parameter, written as their bare name. */
export const NAMED_TRANSFORMS = ['trim', 'number', 'price', 'absoluteUrl'] as const;
/** The transforms with a parameter, written as an object with one of these keys: `{ regex: '…' }`. */
export const KEYED_TRANSFORMS = ['regex', 'matches', 'map', 'split'] as const;

type TransformName = (typeof NAMED_TRANSFORMS)[number] | (typeof KEYED_TRANSFORMS)[number];

type MapValue = string | number | boolean;

/** A transform as a file writes it, once fileFormat.ts has checked it (an object has exactly one transform key). */
export type TransformSpec =
    | (typeof NAMED_TRANSFORMS)[number]
    | { regex?: string; matches?: string; flags?: string; map?: Record<string, MapValue>; split?: string };

/** What a step may need of the page: the URL its relative links resolve against. */
export interface TransformPage {
    base(): URL;
}

/** One step: the value after it, undefined when that is missing, or a list (split). */
export type Step = (value: unknown, page: TransformPage) => unknown;

/** The transform's name; a checked transform object has exactly one of the keyed names. */
function transformName(spec: TransformSpec): TransformName | undefined {
    return typeof spec === 'string' ? spec : KEYED_TRANSFORMS.find((key) => spec[key] !== undefined);
}

/** The kind of value `transforms` leave, starting from text; or the first step that does not fit what it is given. */
export function kindAfter(
    transforms: readonly TransformSpec[],
): { kind: ValueKind } | { step: number; problem: string } {
    let kind: ValueKind = 'text';
    for (const [step, spec] of transforms.entries()) {
        const name = transformName(spec);
        if (name !== 'map' && kind !== 'text' && kind !== 'url')
            return { step, problem: `${name} takes text, and the value is a ${kind} by then` };
        const next = kindGiven(spec);
        if (!next)
            return { step, problem: 'a map needs entries, and their values all text, all numbers or all booleans' };
        kind = next;
    }
    return { kind };
}

function kindGiven(spec: TransformSpec): ValueKind | undefined {
    switch (transformName(spec)) {
        case 'number':
        case 'price':
            return 'number';
        case 'absoluteUrl':
            return 'url';
        case 'matches':
            return 'boolean';
        case 'map': {
            const kinds = new Set(
                Object.values((spec as { map: Record<string, MapValue> }).map).map((value) =>
                    typeof value === 'string' ? 'text' : typeof value,
                ),
            );
            return kinds.size === 1 ? ([...kinds][0] as ValueKind) : undefined;
        }
        default:
            return 'text';
    }
}

/** The step a checked transform makes. */
export function compileTransform(spec: TransformSpec): Step {
    if (typeof spec === 'string') return NAMED_STEPS[spec];
    if (spec.regex !== undefined) {
        const pattern = new RegExp(spec.regex, spec.flags);
        return (value) => {
            const found = pattern.exec(String(value));
            return found?.[found.length > 1 ? 1 : 0];
        };
    }
    if (spec.matches !== undefined) {
        const pattern = new RegExp(spec.matches, spec.flags);
        return (value) => pattern.test(String(value));
    }
    if (spec.map !== undefined) {
        const entries = spec.map;
        return (value) => (Object.hasOwn(entries, String(value)) ? entries[String(value)] : undefined);
    }
    const separator = spec.split;
    if (separator === undefined) throw new Error(`not a checked transform: ${JSON.stringify(spec)}`);
    return (value) =>
        String(value)
            .split(separator)
            .map(collapsedText)
            .filter((part) => part !== '');
}

const NAMED_STEPS: Record<(typeof NAMED_TRANSFORMS)[number], Step> = {
    trim: (value) => collapsedText(String(value)) || undefined,
    number: (value) => firstNumber(String(value)),
    price: (value) => priceAmount(String(value)),
    absoluteUrl: (value, page) => {
        try {
            return new URL(String(value), page.base()).href;
        } catch {
            return undefined;
        }
    },
};

/**
 * The amount in a price, whichever mark separates its decimals: `£1,234.50`, `1.234,50 €` and
 * `1 234,50 €` (a no-break space) are all 1234.5. The last `.` or `,` is the decimal mark, unless
 * it is the only kind of mark there and exactly three digits follow it (`1,234`, `1.234`): those
 * group thousands, since four-digit prices are commoner than prices with three decimals.
 */
function priceAmount(text: string): number | undefined {
    const written = /-?\d(?:[\d.,'\u00a0\u202f]*\d)?/.exec(text)?.[0];
    if (written === undefined) return undefined;
    const digits = written.replace(/['\u00a0\u202f]/g, '');
    const mark = Math.max(digits.lastIndexOf('.'), digits.lastIndexOf(','));
    const oneKindOfMark = !(digits.includes('.') && digits.includes(','));
    if (mark < 0 || (oneKindOfMark && digits.length - mark - 1 === 3)) return Number(digits.replace(/[.,]/g, ''));
    return Number(`${digits.slice(0, mark).replace(/[.,]/g, '')}.${digits.slice(mark + 1)}`);
}
