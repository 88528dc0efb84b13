/**
 * One log for the whole run: pino, pretty on a terminal and JSON lines otherwise, on stderr
 * so stdout carries only the summary. Crawlee's own log is routed into it. The progress line's
 * numbers ride under `progress`: fields in JSON, hidden on a terminal where the message says it all.
 * No secret reaches it: every line, Crawlee's included, is scrubbed on the way (logRedaction.ts).
 * On a terminal the lines go above the live progress line (pinnedLine.ts), in colour when the
 * terminal takes it (not under NO_COLOR).
 */
import { createRequire } from 'node:module';
import { Logger as CrawleeLogger, LogLevel, log as crawleeLog } from '@crawlee/core';
import { type DestinationStream, pino, type Logger } from 'pino';
import type PinoPretty from 'pino-pretty';
import { redactionOptions } from './logRedaction.js';
import { stderrLine } from './pinnedLine.js';

export type { Logger } from 'pino';

export const DEFAULT_LOG_LEVEL = 'info';

export interface LoggerOptions {
    /** pino level name. Default: `info`. */
    level?: string;
    /** Human-readable output. Default: when stderr is a terminal. */
    pretty?: boolean;
    /** Where the JSON lines go instead of stderr (`pretty` is then not used). Default: stderr. */
    destination?: DestinationStream;
}

export function createLogger(options: LoggerOptions = {}): Logger {
    const level = options.level ?? DEFAULT_LOG_LEVEL;
    const usePretty = options.pretty ?? process.stderr.isTTY === true;
    const destination =
        options.destination ??
        (usePretty
            ? prettyStream()({
                  destination: stderrLine?.stream() ?? 2,
                  sync: true,
                  colorize: process.stderr.isTTY === true && process.stderr.hasColors(),
                  singleLine: true,
                  translateTime: 'HH:MM:ss',
                  ignore: 'pid,hostname,progress',
              })
            : (stderrLine?.stream() ?? pino.destination({ fd: 2, sync: true })));
    const logger = pino({ level, base: undefined, ...redactionOptions }, destination);
    routeCrawleeLog(logger);
    return logger;
}

/** pino-pretty, loaded only for a log that is read by people (it is ~10 MB of a process's memory). */
function prettyStream(): typeof PinoPretty {
    return createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
}

/**
 * Crawlee messages that dragnet reports itself, with the failure class: at debug level they
 * do not repeat every retry and dead-letter as a stack trace.
 */
const REPORTED_BY_DRAGNET = [/^Reclaiming failed request/, /^Request failed and reached maximum retries/];

class PinoBridge extends CrawleeLogger {
    constructor(private readonly target: Logger) {
        super({});
    }

    override _log(level: LogLevel, message: string, data?: Record<string, unknown>, exception?: unknown): void {
        const fields = { ...data, ...(exception ? { err: exception } : {}) };
        if (REPORTED_BY_DRAGNET.some((pattern) => pattern.test(message))) {
            this.target.debug(fields, message);
        } else if (level <= LogLevel.ERROR) {
            this.target.error(fields, message);
        } else if (level <= LogLevel.WARNING) {
            this.target.warn(fields, message);
        } else {
            // Crawlee's INFO lines (periodic statistics, "crawler started") repeat what the progress line says.
            this.target.debug(fields, message);
        }
    }
}

function routeCrawleeLog(logger: Logger): void {
    crawleeLog.setOptions({
        logger: new PinoBridge(logger),
        level: logger.isLevelEnabled('debug') ? LogLevel.DEBUG : LogLevel.INFO,
    });
}
