/**
 * No secret in the log: a real logger (createLogger) writes JSON lines through a real pino
 * destination to a file, dragnet's calls and Crawlee's (routed in by the logger) carrying
 * credentialed URLs, errors and header objects the ways the code logs them; then every line of
 * the file is searched for the secrets, and checked to still say what it was meant to.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { log as crawleeLog } from '@crawlee/core';
import { pino } from 'pino';
import { createLogger } from '../../src/monitor/logger.js';

const DATABASE_URL = 'postgres://dragnet:s3cr3t@127.0.0.1:5432/test';
const PROXY_URL = 'http://scraper:proxypass@127.0.0.1:8000';
const SECRETS = [
    's3cr3t',
    'proxypass',
    'urlpass',
    'redispw',
    'sid=topsecret',
    'tok3n',
    'session=abc123',
    'dXNlcjpwYXNz',
];

/** Lines the logger wrote while `write` ran, parsed. */
async function logged(
    write: (log: ReturnType<typeof createLogger>) => void,
): Promise<{ raw: string; lines: Record<string, unknown>[] }> {
    const dir = await mkdtemp(join(tmpdir(), 'dragnet-logger-'));
    try {
        const file = join(dir, 'log.jsonl');
        const destination = pino.destination({ dest: file, sync: true });
        const log = createLogger({ level: 'debug', destination });
        write(log);
        destination.flushSync();
        const raw = await readFile(file, 'utf8');
        return {
            raw,
            lines: raw
                .trim()
                .split('\n')
                .map((line) => JSON.parse(line) as Record<string, unknown>),
        };
    } finally {
        createLogger({ level: 'silent' }); // Crawlee's log away from the file
        await rm(dir, { recursive: true, force: true });
    }
}

function assertNoSecrets(raw: string) {
    raw.split('\n').forEach((line, index) => {
        for (const secret of SECRETS) assert.ok(!line.includes(secret), `line ${index + 1} holds "${secret}": ${line}`);
    });
}

function failure(): Error {
    const error = new Error(`could not reach ${DATABASE_URL}`);
    return Object.assign(error, { code: 'ECONNREFUSED', cause: new Error(`tunnel through ${PROXY_URL} refused`) });
}

describe('the log', () => {
    it("scrubs dragnet's messages, fields and errors", async () => {
        const { raw, lines } = await logged((log) => {
            log.error({ err: failure() }, 'failed http://reader:urlpass@127.0.0.1:9/a');
            log.error(failure());
            log.warn({ err: failure(), url: 'http://reader:urlpass@127.0.0.1:9/b' });
            log.info({ site: 'shop', startUrls: ['http://reader:urlpass@127.0.0.1:9/'] }, 'crawling shop');
            log.warn('Redis at %s is slow: %j', 'redis://:redispw@127.0.0.1:6379', { proxy: PROXY_URL });
            log.debug(
                {
                    request: {
                        url: 'http://127.0.0.1:9/c',
                        headers: { Authorization: 'Bearer tok3n', Cookie: 'sid=topsecret' },
                    },
                    response: {
                        status: 200,
                        headers: { 'set-cookie': ['session=abc123; HttpOnly'], 'content-type': 'text/html' },
                    },
                    headers: { 'proxy-authorization': 'Basic dXNlcjpwYXNz' },
                },
                'fetched',
            );
            log.error('upstream said:\nAuthorization: Basic dXNlcjpwYXNz\nCookie: sid=topsecret');
            log.child({ proxy: PROXY_URL, headers: { cookie: 'sid=topsecret' } }).info('child logger');
        });
        assertNoSecrets(raw);
        assert.equal(lines.length, 8);
        // Still saying what they said, with the passwords masked.
        assert.equal(lines[0]!.msg, 'failed http://reader:***@127.0.0.1:9/a');
        const err = lines[0]!.err as Record<string, unknown>;
        assert.equal(err.type, 'Error');
        assert.equal(err.code, 'ECONNREFUSED');
        assert.match(String(err.message), /could not reach postgres:\/\/dragnet:\*\*\*@127\.0\.0\.1:5432\/test/);
        assert.match(String(err.stack), /^Error: could not reach postgres:\/\/dragnet:\*\*\*@[^\n]+\n {4}at /);
        assert.match(
            String(err.stack),
            /caused by: Error: tunnel through http:\/\/scraper:\*\*\*@127\.0\.0\.1:8000 refused/,
        );
        assert.equal(lines[1]!.msg, 'could not reach postgres://dragnet:***@127.0.0.1:5432/test');
        assert.equal(lines[2]!.msg, 'could not reach postgres://dragnet:***@127.0.0.1:5432/test');
        assert.equal(lines[2]!.url, 'http://reader:***@127.0.0.1:9/b');
        assert.deepEqual(lines[3]!.startUrls, ['http://reader:***@127.0.0.1:9/']);
        assert.equal(
            lines[4]!.msg,
            'Redis at redis://:***@127.0.0.1:6379 is slow: {"proxy":"http://scraper:***@127.0.0.1:8000"}',
        );
        assert.deepEqual(lines[5]!.request, {
            url: 'http://127.0.0.1:9/c',
            headers: { Authorization: '[redacted]', Cookie: '[redacted]' },
        });
        assert.equal((lines[5]!.response as { headers: Record<string, unknown> }).headers['content-type'], 'text/html');
        assert.equal(lines[6]!.msg, 'upstream said:\nAuthorization: [redacted]\nCookie: [redacted]');
        assert.equal(lines[7]!.proxy, 'http://scraper:***@127.0.0.1:8000');
    });

    it("scrubs Crawlee's lines, routed into it", async () => {
        const { raw, lines } = await logged(() => {
            crawleeLog.error(`Request failed through ${PROXY_URL}`, {
                url: 'http://reader:urlpass@127.0.0.1:9/a',
                headers: { cookie: 'sid=topsecret' },
            });
            crawleeLog.exception(failure(), 'crawler failed');
            crawleeLog.warning(`Reclaiming failed request back to the list or queue. ${failure().stack}`);
            crawleeLog.info('crawler started, Set-Cookie: session=abc123');
        });
        assertNoSecrets(raw);
        assert.equal(lines.length, 4);
        assert.equal(lines[0]!.msg, 'Request failed through http://scraper:***@127.0.0.1:8000');
        assert.equal(lines[0]!.url, 'http://reader:***@127.0.0.1:9/a');
        assert.match(JSON.stringify(lines[1]!.err), /postgres:\/\/dragnet:\*\*\*@127\.0\.0\.1:5432\/test/);
        assert.match(
            String(lines[2]!.msg),
            new RegExp(
                String.raw`^Reclaiming failed request back to the list or queue\. ` +
                    String.raw`Error: could not reach postgres:\/\/dragnet:\*\*\*@`,
            ),
        );
        assert.equal(lines[3]!.msg, 'crawler started, Set-Cookie: [redacted]');
    });
});
