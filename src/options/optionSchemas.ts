/**
 * The value readers of the option table (options/options.ts): zod schemas that read a flag's or a
 * variable's string, with messages that follow the flag's name (`--max-concurrency must be a
 * number`).
 */
import { z } from 'zod';

export const number = () => z.coerce.number({ error: 'must be a number' });
export const wholeAtLeast1 = () => number().int('must be a whole number').positive('must be at least 1');
export const atLeast0 = () => number().min(0, 'must be 0 or more');
export const oneOf = <const Values extends readonly [string, ...string[]]>(values: Values) =>
    z.enum(values, {
        error: `must be ${values.slice(0, -1).join(', ')}${values.length > 2 ? ',' : ''} or ${values.at(-1)}`,
    });
/** `on` or `off` from a flag or a variable; true or false from a run's JSON input too. */
export const onOff = () =>
    z
        .custom<boolean | 'on' | 'off'>((value) => typeof value === 'boolean' || value === 'on' || value === 'off', {
            error: 'must be on or off',
        })
        .transform((value) => value === true || value === 'on');
const SWITCH_VALUES = { '1': true, true: true, '0': false, false: false } as const;
/** A switch: true from its flag, or its variable's 1, 0, true or false. */
export const onOrOff = () =>
    z
        .custom<boolean | keyof typeof SWITCH_VALUES>(
            (value) => typeof value === 'boolean' || (typeof value === 'string' && value in SWITCH_VALUES),
            {
                error: 'must be 1, 0, true or false',
            },
        )
        .transform((value) => (typeof value === 'boolean' ? value : SWITCH_VALUES[value]));
export const share = (includingOne: boolean) => {
    const message = 'must be between 0 and 1';
    return includingOne ? number().gt(0, message).max(1, message) : number().gt(0, message).lt(1, message);
};
export const onOffDefault = (on: boolean) => (on ? 'on' : 'off');

const DURATION_UNITS_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** A length of time, `90s`, `15m`, `6h`, `7d` or a bare number of seconds, read as milliseconds. */
export const duration = () =>
    z.union([z.number(), z.string()]).transform((value, context) => {
        const match = /^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$/.exec(String(value));
        if (!match) {
            context.addIssue({ code: 'custom', message: 'must be a duration such as 90s, 15m, 6h or 7d' });
            return z.NEVER;
        }
        return Number(match[1]) * DURATION_UNITS_MS[(match[2] || 's') as keyof typeof DURATION_UNITS_MS];
    });

/** A length of time in milliseconds as `duration()` reads it, in the largest unit it is whole in: `7d`, `90s`. */
export function durationText(ms: number): string {
    if (ms === 0) return '0s';
    const [unit, size] = Object.entries(DURATION_UNITS_MS)
        .reverse()
        .find(([, size]) => ms % size === 0) ?? ['s', 1000];
    return `${ms / size}${unit}`;
}
