/**
 * A schema of the test's own in the machine's real PostgreSQL (POSTGRES_URL, test/helpers/fleetWorld.ts),
 * migrated, and dropped when the test ends.
 */
import { randomUUID } from 'node:crypto';
import type { TestContext } from 'node:test';
import { openPostgres, type PgDatabase } from '../../src/store/postgres/database.js';
import { iterateItems, type PgStore } from '../../src/store/postgres/reader.js';
import { POSTGRES_URL, withSchema } from './fleetWorld.js';

/** The database and the URL a command is given to reach it. */
export async function testDatabase(t: TestContext): Promise<{ db: PgDatabase; url: string }> {
    const schema = `dragnet_test_${randomUUID().slice(0, 8)}`;
    const url = withSchema(POSTGRES_URL, schema);
    const db = await openPostgres(url);
    t.after(async () => {
        await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await db.close();
    });
    return { db, url };
}

/** What `site` has in `store`, in order. */
export async function storedRows<T = Record<string, unknown>>(
    db: PgDatabase,
    site: string,
    store: PgStore = 'items',
): Promise<T[]> {
    const rows: T[] = [];
    for await (const row of iterateItems(db, site, store)) rows.push(row as T);
    return rows;
}
