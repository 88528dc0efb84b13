/**
 * What the log does so that no secret reaches it (vocabulary/redact.ts says what a secret is):
 * every line, whoever logs it — dragnet, or Crawlee through the bridge in logger.ts — goes
 * through these. A layer for each place a secret can ride in a pino call:
 * - the message and its format arguments (`log.error({ err }, 'failed http://u:secret@host/')`):
 *   `hooks.logMethod` scrubs them before pino formats the line, and gives pino the scrubbed
 *   message of an error logged without one (pino would otherwise take the error's own);
 * - the fields (`{ url, headers, err }`): `formatters.log` deep-copies them scrubbed, header
 *   fields of any case and depth masked, errors serialized first so their message and stack are
 *   scrubbed too;
 * - a child logger's fields, which pino formats once, without formatters.log: `redact`'s paths
 *   mask the usual header spots there (and anywhere else, a second line behind the copy), and
 *   `hooks.streamWrite` masks URL passwords in the finished line, whatever field holds them.
 */
import { pino, type LoggerOptions } from 'pino';
import { REDACTED, scrubUrls, scrubValue, SECRET_HEADERS } from '../vocabulary/redact.js';

const HEADER_SPOTS = ['headers', '*.headers', 'req.headers', 'request.headers', 'response.headers', 'options.headers'];

/** `headers.authorization`, `*.headers["set-cookie"]`, …: every credential header at every usual spot. */
export const REDACT_PATHS: readonly string[] = HEADER_SPOTS.flatMap((spot) =>
    SECRET_HEADERS.flatMap((name) => [`${spot}["${name}"]`, `${spot}["${capitalized(name)}"]`]),
).concat(['authorization', 'cookie', 'password', '*.password']);

const serializeError = (error: Error) => pino.stdSerializers.err(error);
const scrubFields = (fields: object) => scrubValue(fields, serializeError) as Record<string, unknown>;

export const redactionOptions: Pick<LoggerOptions, 'redact' | 'formatters' | 'serializers' | 'hooks'> = {
    redact: { paths: [...REDACT_PATHS], censor: REDACTED },
    formatters: { log: scrubFields },
    // formatters.log has made errors plain fields already; pino's own err serializer would take
    // those for an error again and call it an `Object`.
    serializers: { err: (value: unknown) => (value instanceof Error ? scrubValue(value, serializeError) : value) },
    hooks: {
        logMethod(args, method) {
            // The merging object (a first argument that is not a string) is formatters.log's to scrub.
            const scrubbed = args.map((arg, index) =>
                index === 0 && typeof arg === 'object' ? arg : scrubValue(arg),
            ) as unknown[];
            const first = scrubbed[0];
            if (scrubbed.length === 1 && typeof first === 'object' && first !== null) {
                const error =
                    first instanceof Error
                        ? first
                        : (first as { err?: unknown; msg?: unknown }).msg === undefined
                          ? (first as { err?: unknown }).err
                          : undefined;
                if (error instanceof Error) scrubbed.push(scrubValue(error.message));
            }
            method.apply(this, scrubbed as Parameters<typeof method>);
        },
        streamWrite: scrubUrls,
    },
};

function capitalized(header: string): string {
    return header.replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => dash + letter.toUpperCase());
}
