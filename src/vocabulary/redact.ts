/**
 * Secrets out of everything dragnet writes for people to read (logs, the summary and report,
 * dead-letter, quarantine, raw pages' headers): the password of a URL's userinfo
 * (`postgres://dragnet:***@db/`, a proxy's `http://user:***@proxy:8000`), and the values of the
 * headers that carry credentials (Authorization, Proxy-Authorization, Cookie, Set-Cookie).
 * The username stays: it says which account without letting anyone use it.
 *
 * A leaf every part can import: the stores, the logger, the frontier's Redis connection and
 * the wiring all call these, so there is one idea of what a secret looks like. The queues are
 * the one place a URL keeps its password: they need it to fetch.
 */

/** What a secret header's or field's value becomes. */
export const REDACTED = '[redacted]';
/** What a URL's password becomes. */
export const PASSWORD_MASK = '***';

/** Headers whose values are credentials, lower-cased. */
export const SECRET_HEADERS: readonly string[] = ['authorization', 'proxy-authorization', 'cookie', 'set-cookie'];
/** Field names whose values are credentials wherever they appear in a logged or stored object. */
const SECRET_FIELDS = new Set([...SECRET_HEADERS, 'cookies', 'password']);

/**
 * `scheme://user:password@` in free text. The password runs to the last `@` before a space, a
 * `/`, `?` or a quote, so one holding an unescaped `@` is masked whole; a host after a stray `#`
 * may be masked with it, which costs a reader nothing a leak would.
 */
const USERINFO_IN_TEXT = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#:@"'<>]*):([^\s/?"'<>]*)@/gi;
/** A header line of a credential header: `Cookie: a=b`, to the end of the line. */
const SECRET_HEADER_LINE = /\b(proxy-authorization|authorization|set-cookie|cookie)([ \t]*:[ \t]*)[^\r\n]+/gi;

/**
 * The URL with its password replaced by `***` (the username kept). A URL without a password
 * comes back exactly as given; a string the URL parser refuses (a password with an unescaped `#`,
 * say) is scrubbed as text.
 */
export function redactUrl(url: string): string {
    let parsed: URL;
    try {
        parsed = new URL(url);
    } catch {
        return scrubText(url);
    }
    if (!parsed.password) return url;
    parsed.password = PASSWORD_MASK;
    return parsed.href;
}

/**
 * Free text (an error message, a stack trace) with every URL's password masked and the values
 * of credential header lines (`Authorization: …`, `Cookie: …`) replaced.
 */
export function scrubText(text: string): string {
    return scrubUrls(text).replace(SECRET_HEADER_LINE, `$1$2${REDACTED}`);
}

/**
 * Only the URLs' passwords of scrubText: safe on serialized text such as a JSON log line, where a
 * header line's "to the end of the line" would run past the end of its string.
 */
export function scrubUrls(text: string): string {
    return text.replace(USERINFO_IN_TEXT, `$1$2:${PASSWORD_MASK}@`);
}

export function isSecretHeader(name: string): boolean {
    return SECRET_HEADERS.includes(name.toLowerCase());
}

/**
 * A copy of the headers with the credential headers' values (any case) replaced: a repeated
 * header (set-cookie) keeps its count. The other values are scrubbed as text (a `Location`
 * carrying a password).
 */
export function redactHeaders<T extends Record<string, unknown>>(headers: T): T {
    const redacted: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(headers)) {
        redacted[name] = isSecretHeader(name) ? masked(value) : scrubStrings(value);
    }
    return redacted as T;
}

/**
 * A deep copy of a value for logs and stored records: fields named like a secret (a header, a
 * `password`, in any case) replaced, every string scrubbed (scrubText), errors turned into plain
 * fields by `serializeError` (their message and stack scrubbed with the rest). A value with
 * `toJSON` (a Date, a URL) is copied as it would be stringified; a cycle ends in `[Circular]`.
 */
export function scrubValue(value: unknown, serializeError: (error: Error) => unknown = errorFields): unknown {
    const ancestors = new Set<object>();
    const walk = (current: unknown): unknown => {
        if (typeof current === 'string') return scrubText(current);
        if (typeof current !== 'object' || current === null) return current;
        if (ancestors.has(current)) return '[Circular]';
        ancestors.add(current);
        try {
            if (current instanceof Error) return walk(serializeError(current));
            if (Array.isArray(current)) return current.map(walk);
            const toJSON = (current as { toJSON?: unknown }).toJSON;
            if (typeof toJSON === 'function') return walk(toJSON.call(current));
            const copy: Record<string, unknown> = {};
            for (const [key, field] of Object.entries(current))
                copy[key] = SECRET_FIELDS.has(key.toLowerCase()) ? masked(field) : walk(field);
            return copy;
        } finally {
            ancestors.delete(current);
        }
    };
    return walk(value);
}

/** An error as plain fields, the shape pino gives one: type, message, stack, its own fields and its cause. */
function errorFields(error: Error): Record<string, unknown> {
    const fields: Record<string, unknown> = {
        type: error.constructor?.name ?? error.name,
        message: error.message,
        stack: error.stack,
    };
    for (const [key, value] of Object.entries(error)) fields[key] ??= value;
    if (error.cause !== undefined) fields.cause = error.cause;
    return fields;
}

function masked(value: unknown): unknown {
    if (value === undefined || value === null) return value;
    return Array.isArray(value) ? value.map(() => REDACTED) : REDACTED;
}

function scrubStrings(value: unknown): unknown {
    if (typeof value === 'string') return scrubText(value);
    return Array.isArray(value) ? value.map((item) => (typeof item === 'string' ? scrubText(item) : item)) : value;
}
