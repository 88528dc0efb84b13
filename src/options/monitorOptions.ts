/**
 * The options of the table (options/options.ts) of what a run shows while it runs: the metrics
 * server, the progress line and the log.
 */
import { z } from 'zod';
import { DEFAULT_LOG_LEVEL } from '../monitor/logger.js';
import { DEFAULT_METRICS_HOST } from '../monitor/statusServer.js';
import { CRAWL_DEFAULTS } from './crawlOptions.js';
import { number, oneOf, wholeAtLeast1 } from './optionSchemas.js';
import { option } from './optionSpec.js';

export const MONITOR_OPTIONS = {
    metricsPort: option({
        flag: 'metrics-port',
        env: 'DRAGNET_METRICS_PORT',
        group: 'monitor',
        defaultText: 'off',
        doc: 'serve Prometheus /metrics and JSON /status on this port during the run (0: any free port)',
        schema: number()
            .int('must be a whole number')
            .min(0, 'must be between 0 and 65535')
            .max(65535, 'must be between 0 and 65535')
            .optional(),
    }),
    metricsHost: option({
        flag: 'metrics-host',
        env: 'DRAGNET_METRICS_HOST',
        group: 'monitor',
        default: DEFAULT_METRICS_HOST,
        doc: 'the address the metrics server listens on (the Docker image sets 0.0.0.0)',
        schema: z.string().min(1, 'must not be empty'),
    }),
    progressIntervalSecs: option({
        flag: 'progress-interval',
        env: 'DRAGNET_PROGRESS_INTERVAL_SECS',
        group: 'monitor',
        default: CRAWL_DEFAULTS.progressIntervalSecs,
        doc: "seconds between progress lines, and the window their rate (and the live line's) is measured over",
        schema: wholeAtLeast1(),
    }),
    progress: option({
        flag: 'progress',
        env: 'DRAGNET_PROGRESS',
        group: 'monitor',
        default: CRAWL_DEFAULTS.progress,
        doc:
            'auto: on a terminal, a live line below the log, redrawn every second (with a bar once --max-requests ' +
            'URLs are admitted), elsewhere progress lines; plain: progress lines everywhere; off: neither',
        schema: oneOf(['auto', 'plain', 'off']),
    }),
    logLevel: option({
        flag: 'log-level',
        env: 'LOG_LEVEL',
        group: 'monitor',
        default: DEFAULT_LOG_LEVEL,
        doc: 'how much is logged: trace, debug, info, warn, error, fatal or silent',
        schema: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'], {
            error: 'must be one of trace, debug, info, warn, error, fatal, silent',
        }),
    }),
};
