/**
 * A breaker per exit (one proxy URL, or `direct`): a proxy that failed on its own account (an
 * `exit` failure: 407, refused CONNECT, dead port) is taken out of rotation for a while, longer
 * each time it fails again, and given one request when its time is up. Its requests are retried
 * elsewhere meanwhile; the site never hears of it.
 *
 * In a fleet the breakers of all workers share their verdicts (redisExitVerdicts.ts): an exit one
 * worker opens is held out by every worker, and one a worker's trial finds working again is let back
 * in by all.
 */

export interface ExitBreakerOptions {
    /** Exit faults in a row that open the breaker. Default: 1 (a proxy that fails once is suspect). */
    faultsToOpen?: number;
    /** How long an exit stays out the first time. Default: 5 s. */
    openSecs?: number;
    /** Each further opening in a row doubles the time, up to this. Default: 300 s. */
    maxOpenSecs?: number;
    /** The clock, for tests. Default: Date.now. */
    now?: () => number;
    /** Told each time this breaker opens an exit or closes it again, for the fleet to share. Default: none. */
    onVerdict?: (exit: string, verdict: ExitVerdict) => void;
}

/** An exit held out until `openUntil` (epoch ms) after `openings` openings in a row; `openUntil` 0: in rotation. */
export interface ExitVerdict {
    openUntil: number;
    openings: number;
}

export const EXIT_BREAKER_DEFAULTS = { faultsToOpen: 1, openSecs: 5, maxOpenSecs: 300 };

interface ExitState {
    faultsInRow: number;
    /** Times opened since it last worked. */
    openings: number;
    openUntil: number;
    /**
     * A request is out to try it after an opening (half-open), until then:
     * one that never reports back does not hold the exit out for good.
     */
    trial: boolean;
    trialUntil: number;
    faults: number;
    opened: number;
}

export class ExitBreaker {
    private readonly faultsToOpen: number;
    private readonly openMillis: number;
    private readonly maxOpenMillis: number;
    private readonly now: () => number;
    private readonly onVerdict: ((exit: string, verdict: ExitVerdict) => void) | undefined;
    private readonly exits = new Map<string, ExitState>();

    constructor(options: ExitBreakerOptions = {}) {
        this.faultsToOpen = options.faultsToOpen ?? EXIT_BREAKER_DEFAULTS.faultsToOpen;
        this.openMillis = (options.openSecs ?? EXIT_BREAKER_DEFAULTS.openSecs) * 1000;
        this.maxOpenMillis = (options.maxOpenSecs ?? EXIT_BREAKER_DEFAULTS.maxOpenSecs) * 1000;
        this.now = options.now ?? Date.now;
        this.onVerdict = options.onVerdict;
    }

    /** Whether a request may go out by `exit` now. After an opening, the first caller gets the one trial. */
    allows(exit: string): boolean {
        const state = this.exits.get(exit);
        if (!state || state.openUntil === 0) return true;
        const now = this.now();
        if (now < state.openUntil || (state.trial && now < state.trialUntil)) return false;
        state.trial = true;
        state.trialUntil = now + this.maxOpenMillis;
        return true;
    }

    /** The exit carried a request to the site and back (whatever the site answered). */
    worked(exit: string): void {
        const state = this.exits.get(exit);
        if (!state) return;
        const closing = state.openings > 0;
        Object.assign(state, { faultsInRow: 0, openings: 0, openUntil: 0, trial: false });
        if (closing) this.onVerdict?.(exit, { openUntil: 0, openings: 0 });
    }

    /** The exit failed on its own account. */
    faulted(exit: string): void {
        const state = this.state(exit);
        state.faults += 1;
        state.faultsInRow += 1;
        // A request that was out when the exit opened says nothing
        // new: only a trial's fault, or the first ones, open it.
        if (!state.trial && this.now() < state.openUntil) return;
        if (state.faultsInRow < this.faultsToOpen && !state.trial) return;
        state.openUntil = this.now() + Math.min(this.maxOpenMillis, this.openMillis * 2 ** state.openings);
        state.openings += 1;
        state.opened += 1;
        state.trial = false;
        this.onVerdict?.(exit, { openUntil: state.openUntil, openings: state.openings });
    }

    /**
     * Another worker's verdict on `exit`: an opening holds the exit out here until the same time (the
     * later one, when this breaker has one too); a close lets it back in. Counted as that worker's, not
     * this one's, and not told on.
     */
    adopt(exit: string, verdict: ExitVerdict): void {
        const state = this.state(exit);
        if (verdict.openUntil === 0) {
            Object.assign(state, { faultsInRow: 0, openings: 0, openUntil: 0, trial: false });
        } else if (verdict.openUntil > state.openUntil) {
            Object.assign(state, {
                openUntil: verdict.openUntil,
                openings: Math.max(state.openings, verdict.openings),
            });
            state.trial = false;
        }
    }

    /** Exit faults and openings of `exit`, for the stats. */
    counts(exit: string): { faults: number; opened: number; open: boolean } {
        const state = this.exits.get(exit);
        return {
            faults: state?.faults ?? 0,
            opened: state?.opened ?? 0,
            open: state !== undefined && this.now() < state.openUntil,
        };
    }

    private state(exit: string): ExitState {
        let state = this.exits.get(exit);
        if (!state) {
            state = { faultsInRow: 0, openings: 0, openUntil: 0, trial: false, trialUntil: 0, faults: 0, opened: 0 };
            this.exits.set(exit, state);
        }
        return state;
    }
}
