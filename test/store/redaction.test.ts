/**
 * No secret in what the embedded stores write: a dead-letter entry whose error names a proxy and
 * a database with their passwords (and the request Crawlee noted that error on), a quarantine
 * entry of a page whose canonical URL and record carry credentials, and a raw page with
 * Set-Cookie headers go through the real SQLite stores and ArchiveStore; then the bytes of every file
 * in the storage dir (the SQLite file and its -wal, the raw page segments) are searched for the
 * secrets; so are those of Crawlee's statistics, which keep error messages. Also: a request whose
 * own URL holds a password is dead-lettered with it masked and still re-queued.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { KeyValueStore, Statistics } from '@crawlee/core';
import { deadLetterOutcome } from '../../src/frontier/deadLetter.js';
import { openStorage } from '../../src/store/datasets.js';
import { DeadLetterStore } from '../../src/store/deadLetterStore.js';
import { rawPageKey } from '../../src/store/archive/rawPage.js';
import { type QuarantineEntry, quarantineEntries } from '../../src/store/records.js';
import type { DeadLetterEntry } from '../../src/vocabulary/failure.js';
import { openSiteStores } from '../../src/wiring/open.js';
import { storedFiles } from '../helpers/storedFiles.js';
import { readDataset } from '../helpers/stores.js';

const SITE = 'secret-site';
const url = (path: string) => `http://127.0.0.1:9/${path}`;
const PROXY_URL = 'http://scraper:proxypass@127.0.0.1:8000';
const DATABASE_URL = 'postgres://dragnet:s3cr3t@127.0.0.1:5432/test';
const SECRETS = ['proxypass', 's3cr3t', 'tok3n', 'urlpass', 'cdnpass', 'sid=topsecret', 'session=abc123', 'xyz789'];

async function storageDir(t: TestContext): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'dragnet-redaction-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    return dir;
}

/** Every file under `dir`, by path relative to it, as bytes. */
function assertNoSecrets(files: Map<string, Buffer>) {
    for (const [path, bytes] of files) {
        for (const secret of SECRETS) assert.ok(!bytes.includes(secret), `${path} holds "${secret}"`);
    }
}

describe('the stores keep no secrets', () => {
    it('of a dead-letter entry, a quarantine entry or a raw page, in any file of the storage dir', async (t) => {
        const dir = await storageDir(t);
        const stores = await openSiteStores({ site: SITE, storageDir: dir });
        await stores.httpQueue.addRequests(['a', 'b'].map((path) => ({ url: url(path) })));

        const a = (await stores.httpQueue.fetchNextRequest())!;
        const error =
            `tunneling socket could not be established via ${PROXY_URL}; ` +
            `sink ${DATABASE_URL} (Authorization: Bearer tok3n)`;
        // As Crawlee records a failed attempt on the request, which its queue row keeps: the stack, secrets and all.
        a.pushErrorMessage(new Error(error));
        await stores.outcomes.settle(
            stores.httpQueue,
            a,
            deadLetterOutcome({
                url: a.url,
                failureClass: 'transient',
                reason: 'proxy-refused',
                error,
                attempts: 3,
                stage: 'http',
            }),
        );

        const b = (await stores.httpQueue.fetchNextRequest())!;
        const key = rawPageKey(b.url, 'http');
        const image = 'http://cdn:cdnpass@127.0.0.1:9/i.png';
        const verdict = {
            valid: [],
            invalid: [
                {
                    record: { title: 'Lamp', image, session: { cookie: 'sid=topsecret' } },
                    issues: [`image: not a public URL: ${image}`],
                    fields: ['image'],
                },
            ],
        };
        // The page's canonical URL carries credentials (a link resolved against a URL that had them).
        const origin = {
            url: 'http://reader:urlpass@127.0.0.1:9/b',
            route: 'product',
            rawKey: key,
            renderer: 'http' as const,
            fetchedAt: new Date(0).toISOString(),
        };
        await stores.outcomes.settle(stores.httpQueue, b, { quarantine: quarantineEntries(verdict, origin) });

        await stores.raw.put({
            key,
            url: b.url,
            finalUrl: b.url,
            status: 200,
            headers: {
                'content-type': 'text/html',
                'set-cookie': ['session=abc123; HttpOnly', 'csrftoken=xyz789; Path=/'],
                Location: `${url('c')}?via=${PROXY_URL}`,
            },
            fetchedAt: new Date(0).toISOString(),
            renderer: 'http',
            label: 'product',
            body: '<html><title>Lamp</title></html>',
        });
        await stores.raw.flush();

        // While the stores are open (what is committed may still be in the -wal file) and after.
        const open = await storedFiles(dir);
        assert.ok(
            [...open.keys()].some((path) => path.endsWith('-wal')),
            [...open.keys()].join(', '),
        );
        assertNoSecrets(open);
        const stored = await stores.raw.get(key);
        await stores.close();
        const closed = await storedFiles(dir);
        assertNoSecrets(closed);

        // What was stored is still there, masked: the search read the right bytes.
        const all = Buffer.concat([...open.values(), ...closed.values()]);
        for (const kept of [
            'proxy-refused',
            'scraper:***@127.0.0.1:8000',
            'dragnet:***@127.0.0.1:5432',
            'reader:***@127.0.0.1:9/b',
            'cdn:***@',
            'Lamp',
            'text/html',
        ]) {
            assert.ok(all.includes(kept), `"${kept}" is stored`);
        }
        assert.deepEqual(stored?.headers['set-cookie'], ['[redacted]', '[redacted]']);
        const [entry] = await readDataset<DeadLetterEntry>(dir, `${SITE}-dead-letter`);
        // A header line's value runs to the end of its line: the closing parenthesis goes with it.
        assert.equal(
            entry?.error,
            'tunneling socket could not be established via http://scraper:***@127.0.0.1:8000; ' +
                'sink postgres://dragnet:***@127.0.0.1:5432/test (Authorization: [redacted]',
        );
        const [quarantined] = await readDataset<QuarantineEntry>(dir, `${SITE}-quarantine`);
        assert.deepEqual(quarantined?.record, {
            title: 'Lamp',
            image: 'http://cdn:***@127.0.0.1:9/i.png',
            session: { cookie: '[redacted]' },
        });
    });

    it("of a request's own URL in its dead-letter entry, which still re-queues the request", async (t) => {
        const dir = await storageDir(t);
        const secretUrl = 'http://reader:urlpass@127.0.0.1:9/a';
        let stores = await openSiteStores({ site: SITE, storageDir: dir });
        await stores.httpQueue.addRequest({ url: secretUrl });
        const a = (await stores.httpQueue.fetchNextRequest())!;
        await stores.outcomes.settle(
            stores.httpQueue,
            a,
            deadLetterOutcome({
                url: a.url,
                failureClass: 'permanent',
                reason: 'http-401',
                error: `HTTP 401 at ${secretUrl}`,
                status: 401,
                attempts: 1,
                stage: 'http',
                redirectedFrom: ['http://reader:urlpass@127.0.0.1:9/old'],
            }),
        );
        await stores.close();
        const [entry] = await readDataset<DeadLetterEntry>(dir, `${SITE}-dead-letter`);
        assert.equal(entry?.url, 'http://reader:***@127.0.0.1:9/a');
        assert.equal(entry?.error, 'HTTP 401 at http://reader:***@127.0.0.1:9/a');
        assert.deepEqual(entry?.redirectedFrom, ['http://reader:***@127.0.0.1:9/old']);
        assert.equal(entry?.requestId, a.id);

        const deadLetter = DeadLetterStore.open(dir, SITE)!;
        const result = deadLetter.requeue();
        deadLetter.close();
        assert.deepEqual([result.byQueue, result.added, result.alreadyPending], [{ [`${SITE}-http`]: 1 }, 0, 0]);
        // The queue holds the URL the request needs to be fetched, password and all.
        stores = await openSiteStores({ site: SITE, storageDir: dir });
        t.after(() => stores.close());
        assert.equal((await stores.httpQueue.fetchNextRequest())?.url, secretUrl);
    });

    it("of the error messages in Crawlee's statistics, saved in the storage dir", async (t) => {
        const dir = await storageDir(t);
        const { config, storage } = openStorage(dir);
        const statistics = new Statistics({
            config,
            keyValueStore: await KeyValueStore.open(null, { config }),
            logIntervalSecs: 3600,
        });
        statistics.errorTracker.add(new Error(`tunneling socket could not be established via ${PROXY_URL}`));
        statistics.errorTrackerRetry.add(new Error(`sink ${DATABASE_URL} refused`));
        await statistics.stopCapturing();
        await storage.close();
        const files = await storedFiles(dir);
        const saved = [...files].find(([path]) => path.includes('SDK_CRAWLER_STATISTICS'));
        assert.ok(saved, [...files.keys()].join(', '));
        assertNoSecrets(files);
        const errors = JSON.stringify((JSON.parse(saved[1].toString('utf8')) as { errors: unknown }).errors);
        assert.ok(
            errors.includes('tunneling socket could not be established via http://scraper:***@127.0.0.1:8000'),
            errors,
        );
    });
});
