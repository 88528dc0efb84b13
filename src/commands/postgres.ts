/**
 * PostgreSQL for the commands that read a distributed crawl's results (export, reparse): a
 * server that cannot be reached is a ConfigError, one line and exit 2, as it is for a worker.
 */
import { ConfigError } from '../configError.js';
import { redactedUrl } from '../frontier/redis/connection.js';
import { isConnectionError, openPostgres, type PgDatabase } from '../store/postgres/database.js';

/** Connects to the PostgreSQL at `url` (--database-url / DATABASE_URL). `close()` when done. */
export async function openResultsDatabase(url: string): Promise<PgDatabase> {
    try {
        return await openPostgres(url);
    } catch (error) {
        if (error instanceof Error && (isConnectionError(error) || isConnectionError(error.cause))) {
            throw new ConfigError(`${error.message}; check --database-url / DATABASE_URL (${redactedUrl(url)})`);
        }
        throw error;
    }
}
