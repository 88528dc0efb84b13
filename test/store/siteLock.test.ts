/**
 * One process at a time per site and storage dir. The other process is real: a child that takes
 * the lock and holds it until it is killed.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';

import { DeadLetterStore } from '../../src/store/deadLetterStore.js';
import { lockSite, SiteBusyError } from '../../src/store/siteLock.js';
import { openSiteStores } from '../../src/wiring/open.js';
import { openDatabase, releaseDatabase } from '../../src/store/sqlite/database.js';
import { ROOT, runCli } from '../helpers/cli.js';

const SITE = 'demo-shop';

async function storageDir(t: TestContext): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'dragnet-lock-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    return dir;
}

/** A child process holding the site's lock in `dir`, once it says so. */
async function holder(t: TestContext, dir: string): Promise<ChildProcess> {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/holdSiteLock.ts', dir, SITE], {
        cwd: ROOT,
    });
    t.after(() => child.kill('SIGKILL'));
    const [line] = (await once(child.stdout!.setEncoding('utf8'), 'data')) as [string];
    assert.equal(line.trim(), 'locked');
    return child;
}

describe('site lock', () => {
    it(`refuses a second process, naming the one that holds \
it, and is taken over once that one is killed`, async (t) => {
        const dir = await storageDir(t);
        const child = await holder(t, dir);
        const db = openDatabase(dir);
        t.after(() => releaseDatabase(dir));

        assert.throws(
            () => lockSite(db, SITE, 'crawl'),
            (error: Error) => error instanceof SiteBusyError && error.message.includes(`process ${child.pid} (a crawl`),
        );
        // Another site in the same dir is not held.
        lockSite(db, 'other-site', 'crawl').release();

        child.kill('SIGKILL');
        await once(child, 'exit');
        const lock = lockSite(db, SITE, 'crawl');
        assert.equal(lock.takenOverFrom, undefined, 'a dead process on this host is not worth a warning');
        lock.release();
    });

    it('is let go of when released, and taken over with a note when it was held on another host', async (t) => {
        const dir = await storageDir(t);
        const db = openDatabase(dir);
        t.after(() => releaseDatabase(dir));
        lockSite(db, SITE, 'crawl').release();
        assert.equal(db.prepare<[], { n: number }>('SELECT count(*) AS n FROM site_locks').get()!.n, 0);

        db.prepare('INSERT INTO site_locks (site, pid, host, purpose, since) VALUES (?, ?, ?, ?, ?)').run(
            SITE,
            1,
            'elsewhere',
            'crawl',
            0,
        );
        const lock = lockSite(db, SITE, 'crawl');
        assert.deepEqual(lock.takenOverFrom, { pid: 1, host: 'elsewhere', purpose: 'crawl', since: 0 });
        lock.release();
    });

    it(`keeps a crawl (exit 2, one line) and a dead-letter \
requeue off a site another process is crawling`, async (t) => {
        const dir = await storageDir(t);
        // A run of the site stored its (empty) datasets here, so the dead-letter exists.
        (await openSiteStores({ site: SITE, storageDir: dir })).lock.release();
        const child = await holder(t, dir);

        const cli = await runCli(['--site', SITE, '--start-url', 'http://127.0.0.1:9/', '--storage-dir', dir]);
        assert.equal(cli.code, 2, cli.stderr);
        assert.match(
            cli.stderr,
            new RegExp(`^dragnet: ${SITE} is in use in this storage dir by process ${child.pid} `),
        );
        assert.equal(cli.stderr.trim().split('\n').length, 1);

        const store = DeadLetterStore.open(dir, SITE)!;
        t.after(() => store.close());
        assert.throws(() => store.requeue(), SiteBusyError);
    });
});
