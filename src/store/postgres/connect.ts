/**
 * Opening the PostgreSQL of a run for a command or a worker, with the one-line error a user can act
 * on. Apart from the distributed wiring, so that the commands that read PostgreSQL alone (export,
 * reparse) do not load BullMQ and ioredis with it.
 */
import { ConfigError } from '../../options/configError.js';
import { redactUrl } from '../../vocabulary/redact.js';
import { isConnectionError, openPostgres, type PgDatabase } from './database.js';

/**
 * Connects to the PostgreSQL at `url` and migrates it; unreachable
 * is a ConfigError (one line, exit 2). `close()` when done.
 */
export async function connectPostgres(url: string): Promise<PgDatabase> {
    try {
        return await openPostgres(url);
    } catch (error) {
        if (error instanceof Error && (isConnectionError(error) || isConnectionError(error.cause))) {
            throw new ConfigError(`${error.message}; check --database-url / DATABASE_URL (${redactUrl(url)})`);
        }
        throw error;
    }
}
