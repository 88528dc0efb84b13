/**
 * One process at a time has a site's stores in a storage dir to itself: a crawl, or a dead-letter
 * requeue. Two crawls of the same site would hand out the same requests twice and overwrite each
 * other's counters; a requeue under a running crawl would be undone by the crawl's next save.
 *
 * The lock is a row in the storage dir's SQLite file, naming the holder's pid and host. A holder
 * that died without letting go (SIGKILL, OOM, a power cut) leaves it behind: on the same host the
 * lock is stale when no process has that pid (or the pid is our own), and it is taken over. A lock
 * from another host cannot be checked; it is taken over with a warning, since a storage dir is not
 * meant to be shared between machines (SQLite over a network file system is not safe anyway).
 */
import { hostname } from 'node:os';
import { ConfigError } from '../options/configError.js';
import type { SqliteDb } from './sqlite/database.js';

export type LockPurpose = 'crawl' | 'requeue';

/** Another live process holds the site's lock: a configuration problem, reported in one line. */
export class SiteBusyError extends ConfigError {}

interface LockRow {
    pid: number;
    host: string;
    purpose: LockPurpose;
    since: number;
}

export interface SiteLock {
    /** A lock taken over from another host, which may still be running there; undefined otherwise. */
    takenOverFrom?: LockRow;
    release(): void;
}

/** Takes the lock of `site` in `db`, or throws SiteBusyError naming the process that holds it. */
export function lockSite(db: SqliteDb, site: string, purpose: LockPurpose): SiteLock {
    const read = db.prepare<[string], LockRow>('SELECT pid, host, purpose, since FROM site_locks WHERE site = ?');
    const write = db.prepare<[string, number, string, string, number]>(
        `INSERT INTO site_locks (site, pid, host, purpose, since) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (site) DO UPDATE SET pid = excluded.pid, host = excluded.host, purpose = excluded.purpose, since \
= excluded.since`,
    );
    const host = hostname();
    const take = db.transaction((): LockRow | undefined => {
        const holder = read.get(site);
        if (holder && holder.host === host && holder.pid !== process.pid && isRunning(holder.pid)) {
            const since = new Date(holder.since).toISOString();
            throw new SiteBusyError(
                `${site} is in use in this storage dir by process ${holder.pid} (a ${holder.purpose} ` +
                    `since ${since}): wait for it to finish, stop it, or use another --storage-dir`,
            );
        }
        write.run(site, process.pid, host, purpose, Date.now());
        return holder && holder.host !== host ? holder : undefined;
    });
    const takenOverFrom = take.immediate();
    return {
        takenOverFrom,
        release: () => {
            db.prepare<[string, number, string]>('DELETE FROM site_locks WHERE site = ? AND pid = ? AND host = ?').run(
                site,
                process.pid,
                host,
            );
        },
    };
}

function isRunning(pid: number): boolean {
    try {
        process.kill(pid, 0);
        return true;
    } catch (error) {
        // EPERM: the process exists, under another user.
        return (error as NodeJS.ErrnoException).code === 'EPERM';
    }
}
