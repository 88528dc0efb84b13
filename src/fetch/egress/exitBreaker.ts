/**
 * A breaker per exit (one proxy URL, or `direct`): a proxy that failed on its own account (an
 * `exit` failure: 407, refused CONNECT, dead port) is taken out of rotation for a while, longer
 * each time it fails again, and given one request when its time is up. Its requests are retried
 * elsewhere meanwhile; the site never hears of it.
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
    private readonly exits = new Map<string, ExitState>();

    constructor(options: ExitBreakerOptions = {}) {
        this.faultsToOpen = options.faultsToOpen ?? EXIT_BREAKER_DEFAULTS.faultsToOpen;
        this.openMillis = (options.openSecs ?? EXIT_BREAKER_DEFAULTS.openSecs) * 1000;
        this.maxOpenMillis = (options.maxOpenSecs ?? EXIT_BREAKER_DEFAULTS.maxOpenSecs) * 1000;
        this.now = options.now ?? Date.now;
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
        Object.assign(state, { faultsInRow: 0, openings: 0, openUntil: 0, trial: false });
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
