/**
 * What a run keeps in the storage dir's SQLite file, beside its queues and datasets, so that a run
 * killed at any moment can be resumed: its counters, saved with every request's outcome
 * (outcomes.ts), and the canonical URLs its pages claimed. The seen-set is rebuilt from the queues
 * (every admitted URL is a request in one) plus these claims.
 */
import type { StatsSnapshot } from '../monitor/stats.js';
import type { SqliteDb } from './sqlite/database.js';

function prepare(db: SqliteDb) {
    return {
        load: db.prepare<[string], { json: string }>('SELECT json FROM run_state WHERE name = ?'),
        save: db.prepare<[string, string, number]>(
            `INSERT INTO run_state (name, json, updated_at) VALUES (?, ?, ?)
             ON CONFLICT (name) DO UPDATE SET json = excluded.json, updated_at = excluded.updated_at`,
        ),
        claim: db.prepare<[string, string]>(
            'INSERT INTO canonical_claims (name, key) VALUES (?, ?) ON CONFLICT DO NOTHING',
        ),
        claims: db.prepare<[string], { key: string }>('SELECT key FROM canonical_claims WHERE name = ?'),
        clearState: db.prepare<[string]>('DELETE FROM run_state WHERE name = ?'),
        clearClaims: db.prepare<[string]>('DELETE FROM canonical_claims WHERE name = ?'),
    };
}

export class RunState {
    private readonly st;

    /** The state of the run of `site` in `db`. */
    constructor(
        db: SqliteDb,
        private readonly site: string,
    ) {
        this.st = prepare(db);
    }

    /** The counters last saved, if the run saved any. */
    loadStats(): StatsSnapshot | undefined {
        const row = this.st.load.get(this.site);
        return row && (JSON.parse(row.json) as StatsSnapshot);
    }

    saveStats(snapshot: StatsSnapshot): void {
        this.st.save.run(this.site, JSON.stringify(snapshot), Date.now());
    }

    /** Remembers that a page claimed this canonical URL key. */
    addClaim(key: string): void {
        this.st.claim.run(this.site, key);
    }

    claims(): string[] {
        return this.st.claims.all(this.site).map((row) => row.key);
    }

    /** Forgets the run: a fresh one starts. */
    clear(): void {
        this.st.clearState.run(this.site);
        this.st.clearClaims.run(this.site);
    }
}
