/**
 * What an extractor may hand back: nothing, one record, or a list of records, each a plain object
 * of plain data (strings, numbers, booleans, null, dates, and arrays and plain objects of those).
 * That is what the stores can keep (they write JSON) and what a parse worker can send to the
 * crawling thread (structured clone). Anything else is a bug in the route's code, and left alone
 * it fails late and far from its cause: a string is spread into the dataset as `{0: 'a', 1: 'b'}`
 * when the route has no schema, a Promise passes a loose schema as `{}`, a function or a Promise
 * cannot leave a parse worker, and a circular record passes the schema and then fails to be
 * written, so its request is retried and dead-lettered as an `error` of the crawl.
 */

/** Why `extracted` is not records of plain data, e.g. `price is a function`; undefined when it is. */
export function nonDataIn(extracted: unknown): string | undefined {
    if (extracted == null) return undefined;
    if (isThenable(extracted))
        return 'a Promise: extractors are synchronous, and an async one returns its records too late';
    if (Array.isArray(extracted)) {
        for (const [index, record] of extracted.entries()) {
            if (!isPlainObject(record))
                return `record ${index + 1} of ${extracted.length} is ${describe(record)}, not a record`;
            const problem = nonDataField(record, `records[${index}]`, new Set());
            if (problem) return problem;
        }
        return undefined;
    }
    if (!isPlainObject(extracted)) return `${describe(extracted)}, not a record`;
    return nonDataField(extracted, '', new Set());
}

/** Whether `value` looks like a Promise: what an async extractor returns. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
    return (
        (typeof value === 'object' || typeof value === 'function') &&
        value !== null &&
        typeof (value as { then?: unknown }).then === 'function'
    );
}

/**
 * The first value under `value` that is not plain data, with its path. Only the objects on the
 * path so far count as a cycle: the same object twice in a record is stored twice, fine.
 */
function nonDataField(value: unknown, path: string, ancestors: Set<object>): string | undefined {
    if (value === null || value === undefined || value instanceof Date) return undefined;
    const type = typeof value;
    if (type === 'string' || type === 'number' || type === 'boolean') return undefined;
    const where = path || 'the record';
    if (type !== 'object' || !(Array.isArray(value) || isPlainObject(value))) return `${where} is ${describe(value)}`;
    const object = value as object;
    if (ancestors.has(object)) return `${where} is circular (it contains itself)`;
    ancestors.add(object);
    try {
        const entries = Array.isArray(object)
            ? object.map((item, index) => [`[${index}]`, item] as const)
            : Object.entries(object).map(([key, item]) => [path ? `.${key}` : key, item] as const);
        for (const [step, item] of entries) {
            const problem = nonDataField(item, `${path}${step}`, ancestors);
            if (problem) return problem;
        }
        return undefined;
    } finally {
        ancestors.delete(object);
    }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
    const prototype = Object.getPrototypeOf(value);
    return prototype === Object.prototype || prototype === null;
}

/** A short description of a value, for the quarantine issue: `a string ("Blue lamp")`, `a Cheerio object`. */
function describe(value: unknown): string {
    if (value === null) return 'null';
    if (value === undefined) return 'undefined';
    switch (typeof value) {
        case 'string':
            return `a string (${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)})`;
        case 'number':
        case 'boolean':
        case 'bigint':
            return `a ${typeof value} (${String(value)})`;
        case 'function':
            return 'a function';
        case 'symbol':
            return 'a symbol';
    }
    if (Array.isArray(value)) return 'a list';
    if (isThenable(value)) return 'a Promise';
    const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
    if (typeof name === 'string' && /cheerio/i.test(name)) return 'a Cheerio object (a selection, not its text)';
    return typeof name === 'string' && name ? `a ${name}` : 'an object that is not plain data';
}
