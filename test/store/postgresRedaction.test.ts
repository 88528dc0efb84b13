/**
 * No secret in what the distributed stores write (against the machine's real PostgreSQL, as
 * test/store/postgres.test.ts): a dead-letter entry and a quarantine entry committed by the sink,
 * a raw page with Set-Cookie headers put in IndexedRawPages; then every row of the tables, read back as
 * PostgreSQL's own text of it, and the raw page's segment file are searched for the secrets.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { IndexedRawPages } from '../../src/store/postgres/indexedRawPages.js';
import { PgSink } from '../../src/store/postgres/sink.js';
import { rawPageKey } from '../../src/store/archive/rawPage.js';
import { quarantineEntries } from '../../src/store/records.js';
import { testDatabase } from '../helpers/pgSchema.js';
import { storedFiles } from '../helpers/storedFiles.js';
import { tempDir } from '../helpers/tempDir.js';

const SITE = 'secret-site';
const SECRETS = ['proxypass', 's3cr3t', 'urlpass', 'session=abc123', 'xyz789'];

describe('the PostgreSQL stores keep no secrets', () => {
    it('of a dead-letter entry, a quarantine entry or a raw page', async (t) => {
        const { db } = await testDatabase(t);
        const fetchedAt = new Date(0).toISOString();
        const key = rawPageKey('http://127.0.0.1:9/b', 'http');
        const quarantine = quarantineEntries(
            { valid: [], invalid: [{ record: { title: 'Lamp' }, issues: ['price: required'], fields: ['price'] }] },
            { url: 'http://reader:urlpass@127.0.0.1:9/b', route: 'product', rawKey: key, renderer: 'http', fetchedAt },
        );
        await new PgSink(db).commit(SITE, [
            {
                requestKey: 'http://127.0.0.1:9/a',
                deadLetter: {
                    url: 'http://reader:urlpass@127.0.0.1:9/a',
                    failureClass: 'transient',
                    reason: 'proxy-refused',
                    error:
                        'tunneling socket could not be established via http://scraper:proxypass@127.0.0.1:8000 ' +
                        '(sink postgres://dragnet:s3cr3t@127.0.0.1:5432/test)',
                    attempts: 3,
                    stage: 'http',
                    deadLetteredAt: fetchedAt,
                },
            },
            { requestKey: 'http://127.0.0.1:9/b', quarantine },
        ]);
        const raw = await IndexedRawPages.open(db, SITE, { archiveDir: await tempDir(t, 'redaction'), writer: 'w1' });
        await raw.put({
            key,
            url: 'http://127.0.0.1:9/b',
            finalUrl: 'http://127.0.0.1:9/b',
            status: 200,
            headers: { 'content-type': 'text/html', 'Set-Cookie': ['session=abc123; HttpOnly', 'csrftoken=xyz789'] },
            fetchedAt,
            renderer: 'http',
            label: 'product',
            body: '<html></html>',
        });

        const rows: string[] = [];
        for (const table of ['dead_letter', 'quarantine', 'raw_index'] as const) {
            const { rows: found } = await db.query<{ row: string }>(`SELECT t::text AS row FROM ${db.table(table)} t`);
            assert.equal(found.length, 1, table);
            rows.push(...found.map(({ row }) => row));
        }
        for (const bytes of (await storedFiles(raw.dir)).values()) rows.push(bytes.toString());
        for (const row of rows) {
            for (const secret of SECRETS) assert.ok(!row.includes(secret), `a row holds "${secret}": ${row}`);
        }
        // The rows are the ones written, masked.
        const text = rows.join('\n');
        for (const kept of [
            'proxy-refused',
            'scraper:***@127.0.0.1:8000',
            'dragnet:***@127.0.0.1:5432',
            'reader:***@127.0.0.1:9/a',
            'reader:***@127.0.0.1:9/b',
            'text/html',
        ]) {
            assert.ok(text.includes(kept), `"${kept}" is stored`);
        }
        assert.deepEqual(
            (await raw.get(key))?.headers['set-cookie'],
            ['[redacted]', '[redacted]'],
            'names read back lower-cased',
        );
    });
});
