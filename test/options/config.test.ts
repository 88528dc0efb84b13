import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { helpText, parseConfig, type Config } from '../../src/options/config.js';
import { ConfigError } from '../../src/options/configError.js';

/** parseConfig for a run (not `--help`). */
function parse(argv: string[], env: NodeJS.ProcessEnv = {}): Config {
    const config = parseConfig(argv, env);
    assert.notEqual(config, 'help');
    return config as Config;
}

/** The named fields of a config, so a test states what it is about and new options do not break it. */
function pick(config: Config, keys: (keyof Config)[]): Partial<Config> {
    return Object.fromEntries(keys.map((key) => [key, config[key]]));
}

/** Asserts parseConfig throws a one-line ConfigError whose message matches. */
function assertConfigError(argv: string[], message: RegExp, env: NodeJS.ProcessEnv = {}): void {
    assert.throws(
        () => parseConfig(argv, env),
        (error: unknown) => {
            assert.ok(error instanceof ConfigError, `expected ConfigError, got ${String(error)}`);
            assert.equal(error.name, 'ConfigError');
            assert.ok(!error.message.includes('\n'), `one line: ${JSON.stringify(error.message)}`);
            assert.match(error.message, message);
            return true;
        },
    );
}

describe('parseConfig', () => {
    it('has the documented defaults', () => {
        const defaults: Partial<Config> = {
            site: 'demo-shop',
            startUrls: [],
            maxConcurrency: undefined,
            browserConcurrency: undefined,
            parseWorkers: undefined,
            maxRequests: undefined,
            maxAttempts: 4,
            retryBaseDelaySecs: 1,
            retryFactor: 2,
            retryMaxDelaySecs: 60,
            maxRetryAfterSecs: 600,
            requestOrder: 'fifo',
            fresh: false,
            adaptiveTimeout: true,
            requestTimeoutSecs: 30,
            storageDir: './storage',
            summaryJson: undefined,
            progressIntervalSecs: 5,
            logLevel: 'info',
            seenSet: 'exact',
            expectedUrls: 10_000_000,
            bloomErrorRate: 0.000001,
        };
        assert.deepEqual(pick(parse([]), Object.keys(defaults) as (keyof Config)[]), defaults);
    });

    it('reads every option from its flag', () => {
        const config = parse([
            '--site',
            'quotes-toscrape',
            '--start-url',
            'http://127.0.0.1/a',
            '--max-concurrency',
            '7',
            '--browser-concurrency',
            '2',
            '--parse-workers',
            '0',
            '--max-requests',
            '100',
            '--max-attempts',
            '1',
            '--retry-base-delay',
            '0.5',
            '--retry-factor',
            '3',
            '--retry-max-delay',
            '10',
            '--max-retry-after',
            '30',
            '--request-order',
            'random',
            '--fresh',
            '--request-timeout',
            '9',
            '--storage-dir',
            '/tmp/s',
            '--summary-json',
            '/tmp/s/summary.json',
            '--progress-interval',
            '1',
            '--log-level',
            'warn',
            '--seen-set',
            'bloom',
            '--expected-urls',
            '5000',
            '--bloom-error-rate',
            '0.01',
        ]);
        const expected: Partial<Config> = {
            site: 'quotes-toscrape',
            startUrls: ['http://127.0.0.1/a'],
            maxConcurrency: 7,
            browserConcurrency: 2,
            parseWorkers: 0,
            maxRequests: 100,
            maxAttempts: 1,
            retryBaseDelaySecs: 0.5,
            retryFactor: 3,
            retryMaxDelaySecs: 10,
            maxRetryAfterSecs: 30,
            requestOrder: 'random',
            fresh: true,
            requestTimeoutSecs: 9,
            storageDir: '/tmp/s',
            summaryJson: '/tmp/s/summary.json',
            progressIntervalSecs: 1,
            logLevel: 'warn',
            seenSet: 'bloom',
            expectedUrls: 5000,
            bloomErrorRate: 0.01,
        };
        assert.deepEqual(pick(config, Object.keys(expected) as (keyof Config)[]), expected);
    });

    it('reads every option from its environment variable when the flag is absent', () => {
        const config = parse([], {
            DRAGNET_SITE: 'books-toscrape',
            DRAGNET_MAX_CONCURRENCY: '3',
            DRAGNET_BROWSER_CONCURRENCY: '1',
            DRAGNET_PARSE_WORKERS: '3',
            DRAGNET_MAX_REQUESTS: '50',
            DRAGNET_MAX_ATTEMPTS: '5',
            DRAGNET_RETRY_BASE_DELAY_SECS: '2',
            DRAGNET_RETRY_FACTOR: '1.5',
            DRAGNET_RETRY_MAX_DELAY_SECS: '20',
            DRAGNET_MAX_RETRY_AFTER_SECS: '0',
            DRAGNET_REQUEST_ORDER: 'random',
            DRAGNET_FRESH: '1',
            DRAGNET_REQUEST_TIMEOUT_SECS: '11',
            DRAGNET_STORAGE_DIR: '/data',
            DRAGNET_SUMMARY_JSON: '/data/s.json',
            DRAGNET_PROGRESS_INTERVAL_SECS: '60',
            LOG_LEVEL: 'debug',
            DRAGNET_SEEN_SET: 'bloom',
            DRAGNET_EXPECTED_URLS: '777',
            DRAGNET_BLOOM_ERROR_RATE: '0.001',
        });
        const expected: Partial<Config> = {
            site: 'books-toscrape',
            startUrls: [],
            maxConcurrency: 3,
            browserConcurrency: 1,
            parseWorkers: 3,
            maxRequests: 50,
            maxAttempts: 5,
            retryBaseDelaySecs: 2,
            retryFactor: 1.5,
            retryMaxDelaySecs: 20,
            maxRetryAfterSecs: 0,
            requestOrder: 'random',
            fresh: true,
            requestTimeoutSecs: 11,
            storageDir: '/data',
            summaryJson: '/data/s.json',
            progressIntervalSecs: 60,
            logLevel: 'debug',
            seenSet: 'bloom',
            expectedUrls: 777,
            bloomErrorRate: 0.001,
        };
        assert.deepEqual(pick(config, Object.keys(expected) as (keyof Config)[]), expected);
    });

    it('lets a flag override its environment variable', () => {
        const env = {
            DRAGNET_MAX_CONCURRENCY: '3',
            DRAGNET_SITE: 'books-toscrape',
            DRAGNET_START_URLS: 'http://127.0.0.1/env',
        };
        const config = parse(
            ['--max-concurrency', '8', '--site', 'quotes-toscrape', '--start-url', 'http://127.0.0.1/flag'],
            env,
        );
        assert.equal(config.maxConcurrency, 8);
        assert.equal(config.site, 'quotes-toscrape');
        assert.deepEqual(config.startUrls, ['http://127.0.0.1/flag']);
    });

    it('treats an empty environment variable as unset', () => {
        assert.equal(parse([], { DRAGNET_MAX_CONCURRENCY: '', DRAGNET_SITE: '' }).maxConcurrency, undefined);
        assert.equal(parse([], { DRAGNET_SITE: '' }).site, 'demo-shop');
    });

    it('splits DRAGNET_START_URLS on whitespace', () => {
        const config = parse([], {
            DRAGNET_START_URLS: '  http://127.0.0.1/a http://127.0.0.1/b\n\thttp://127.0.0.1/c ',
        });
        assert.deepEqual(config.startUrls, ['http://127.0.0.1/a', 'http://127.0.0.1/b', 'http://127.0.0.1/c']);
    });

    it('collects a repeated --start-url in order', () => {
        const config = parse([
            '--start-url',
            'http://127.0.0.1/b',
            '--start-url',
            'http://127.0.0.1/a',
            '--start-url=http://127.0.0.1/c',
        ]);
        assert.deepEqual(config.startUrls, ['http://127.0.0.1/b', 'http://127.0.0.1/a', 'http://127.0.0.1/c']);
    });

    it('rejects a number that is not one, naming the flag', () => {
        assertConfigError(['--max-concurrency', 'abc'], /^--max-concurrency must be a number$/);
        assertConfigError(['--max-concurrency', '2.5'], /^--max-concurrency must be a whole number$/);
        assertConfigError(['--max-concurrency', '0'], /^--max-concurrency must be at least 1$/);
        assertConfigError(['--max-requests=-4'], /^--max-requests must be at least 1$/);
        assertConfigError(['--browser-concurrency', 'many'], /--browser-concurrency/);
        assertConfigError(['--request-timeout', 'soon'], /--request-timeout/);
        assertConfigError(['--progress-interval', '0'], /--progress-interval/);
        assertConfigError(['--max-attempts', '0'], /^--max-attempts must be at least 1$/);
        assertConfigError(['--retry-base-delay=-1'], /^--retry-base-delay must be 0 or more$/);
        assertConfigError(['--retry-factor', '0.5'], /^--retry-factor must be 1 or more$/);
        assertConfigError(['--parse-workers', 'many'], /^--parse-workers must be auto or a whole number >= 0$/);
        assertConfigError(['--request-order', 'lifo'], /^--request-order must be fifo or random$/);
        assertConfigError(['--adaptive-timeout', 'maybe'], /^--adaptive-timeout must be on or off$/);
        assertConfigError([], /^DRAGNET_FRESH \(--fresh\) must be 1, 0, true or false$/, {
            DRAGNET_FRESH: 'yes please',
        });
        assertConfigError(['--expected-urls', '1e3x'], /^--expected-urls must be a number$/);
        assertConfigError(['--bloom-error-rate', '1'], /^--bloom-error-rate must be between 0 and 1$/);
        assertConfigError(['--bloom-error-rate', '0'], /^--bloom-error-rate must be between 0 and 1$/);
    });

    it('rejects a seen-set kind that does not exist, naming the flag', () => {
        assertConfigError(['--seen-set', 'fuzzy'], /^--seen-set must be exact or bloom$/);
    });

    it('reads the wire profile from --wire and DRAGNET_WIRE, and rejects one that does not exist', () => {
        assert.equal(parse(['--wire', 'chrome']).wire, 'chrome');
        assert.equal(parse([], { DRAGNET_WIRE: 'fast' }).wire, 'fast');
        assert.equal(parse([]).wire, undefined, "unset: the site's wire, else auto");
        assertConfigError(['--wire', 'curl'], /^--wire must be fast, chrome, or auto$/);
    });

    it(`names the variable, and its flag, when the bad number \
comes from the variable; the flag when it was given`, () => {
        assertConfigError([], /^DRAGNET_MAX_CONCURRENCY \(--max-concurrency\) must be a number$/, {
            DRAGNET_MAX_CONCURRENCY: 'twenty',
        });
        assertConfigError(['--max-concurrency', 'ten'], /^--max-concurrency must be a number$/, {
            DRAGNET_MAX_CONCURRENCY: '20',
        });
    });

    it('rejects an unknown flag, a flag without its value and a stray argument, pointing to --help', () => {
        assertConfigError(['--max-concurency', '4'], /^Unknown option '--max-concurency'.*\(see --help\)$/);
        assertConfigError(['--storage-dir'], /--storage-dir.*\(see --help\)$/);
        assertConfigError(
            ['--max-retry-after', '-5'],
            new RegExp(
                String.raw`^Option '--max-retry-after' argument is ambiguous\. To specify an option argument ` +
                    String.raw`starting with a dash use '--max-retry-after=-XYZ'\. \(see --help\)$`,
            ),
        );
        assertConfigError(['--max-retry-after=-5'], /^--max-retry-after must be 0 or more$/);
        assertConfigError(['quotes-toscrape'], /quotes-toscrape.*\(see --help\)$/);
    });

    it("returns 'help' for --help, whatever else is given", () => {
        assert.equal(parseConfig(['--help'], {}), 'help');
        assert.equal(parseConfig(['--site', 'x', '--help', '--max-concurrency', 'abc'], {}), 'help');
    });
});

describe('helpText', () => {
    const text = helpText();
    /** `--name` of every option line. */
    const listed = [...text.matchAll(/^ {2}--([a-z-]+)/gm)].map((match) => match[1] ?? '');

    it('lists every flag with its environment variable', () => {
        const flags: [string, string | undefined][] = [
            ['site', 'DRAGNET_SITE'],
            ['start-url', 'DRAGNET_START_URLS'],
            ['max-concurrency', 'DRAGNET_MAX_CONCURRENCY'],
            ['browser-concurrency', 'DRAGNET_BROWSER_CONCURRENCY'],
            ['parse-workers', 'DRAGNET_PARSE_WORKERS'],
            ['max-requests', 'DRAGNET_MAX_REQUESTS'],
            ['max-attempts', 'DRAGNET_MAX_ATTEMPTS'],
            ['retry-base-delay', 'DRAGNET_RETRY_BASE_DELAY_SECS'],
            ['retry-factor', 'DRAGNET_RETRY_FACTOR'],
            ['retry-max-delay', 'DRAGNET_RETRY_MAX_DELAY_SECS'],
            ['max-retry-after', 'DRAGNET_MAX_RETRY_AFTER_SECS'],
            ['request-order', 'DRAGNET_REQUEST_ORDER'],
            ['adaptive-timeout', 'DRAGNET_ADAPTIVE_TIMEOUT'],
            ['fresh', 'DRAGNET_FRESH'],
            ['request-timeout', 'DRAGNET_REQUEST_TIMEOUT_SECS'],
            ['seen-set', 'DRAGNET_SEEN_SET'],
            ['expected-urls', 'DRAGNET_EXPECTED_URLS'],
            ['bloom-error-rate', 'DRAGNET_BLOOM_ERROR_RATE'],
            ['storage-dir', 'DRAGNET_STORAGE_DIR'],
            ['summary-json', 'DRAGNET_SUMMARY_JSON'],
            ['progress-interval', 'DRAGNET_PROGRESS_INTERVAL_SECS'],
            ['log-level', 'LOG_LEVEL'],
            ['help', undefined],
        ];
        for (const [flag, env] of flags) {
            const line = text.split('\n').find((candidate) => candidate.startsWith(`  --${flag} `));
            assert.ok(line, `--${flag} is listed`);
            if (env) assert.ok(line.includes(`env: ${env}`), `--${flag} names ${env}: ${line}`);
        }
    });

    it('lists only flags parseConfig accepts, each with an environment variable', () => {
        assert.ok(listed.length >= 15, listed.join(' '));
        for (const flag of listed) {
            if (flag === 'help') {
                assert.equal(parseConfig(['--help'], {}), 'help');
                continue;
            }
            assert.match(text, new RegExp(`^  --${flag} .*env: [A-Z_]+`, 'm'), `--${flag} has an environment variable`);
            // Any value will do: a value the option refuses is a ConfigError, but never an unknown option.
            try {
                parseConfig([`--${flag}`, '1'], {});
            } catch (error) {
                assert.ok(error instanceof ConfigError);
                assert.doesNotMatch(error.message, /Unknown option/, `--${flag}`);
            }
        }
    });

    it('shows the defaults', () => {
        assert.match(text, /^ {2}--max-concurrency .*default: none: the width is found, from 20 up to 2000/m);
        assert.match(text, /^ {2}--site .*default: demo-shop/m);
        assert.match(text, /^ {2}--storage-dir .*default: \.\/storage/m);
    });
});
