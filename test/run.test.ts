/**
 * `crawl()` lets go of what it opened, whatever goes wrong after its stores are open: a part that
 * refuses its options, or a metrics port already taken. The site's lock row is gone and the storage
 * dir's database is closed, so the next run of the site (or a dead-letter requeue) can start.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import siteDefinition from '../routes/demo-shop.js';
import type { CrawlOptions } from '../src/options/crawlOptions.js';
import { createLogger } from '../src/monitor/logger.js';
import { crawl } from '../src/run.js';
import { openDatabase, releaseDatabase } from '../src/store/sqlite/database.js';

async function storageDir(t: TestContext): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'dragnet-run-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    return dir;
}

/** A crawl of the demo site that is to fail before it fetches anything (port 9 is discard: nothing is asked of it). */
function failingCrawl(dir: string, options: Partial<CrawlOptions>): Promise<unknown> {
    return crawl({
        site: siteDefinition,
        startUrls: ['http://127.0.0.1:9/'],
        storageDir: dir,
        chromiumPath: undefined,
        respectRobotsTxt: false,
        log: createLogger({ level: 'silent' }),
        ...options,
    });
}

/** The site locks held in the storage dir's database. */
function locksIn(dir: string): unknown[] {
    const db = openDatabase(dir);
    try {
        return db.prepare('SELECT site, pid FROM site_locks').all();
    } finally {
        releaseDatabase(dir);
    }
}

describe('crawl() when it cannot run', () => {
    it('releases the site lock when a part refuses its options', async (t) => {
        const dir = await storageDir(t);
        await assert.rejects(failingCrawl(dir, { retry: { maxAttempts: 0 } }), /maxAttempts/);
        assert.deepEqual(locksIn(dir), []);
    });

    it('releases the site lock when the metrics port is taken', async (t) => {
        const dir = await storageDir(t);
        const taken = createServer();
        await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
        t.after(() => new Promise<void>((resolve) => taken.close(() => resolve())));
        const { port } = taken.address() as { port: number };
        await assert.rejects(failingCrawl(dir, { metricsPort: port }), /cannot serve metrics/);
        assert.deepEqual(locksIn(dir), []);
    });
});
