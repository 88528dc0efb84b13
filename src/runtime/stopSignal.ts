/**
 * A graceful stop, asked for by SIGINT (Ctrl+C), SIGTERM (a container runtime stopping the run) or
 * a runner's own stop event (an actor's `aborting` or `migrating`: runtime/actor.ts, through
 * `requestStop`). A run (wiring/rounds.ts) is told once, whichever asks first; a second signal exits
 * at once with the signal's conventional exit code. Only signals count for that: a runner that
 * sends its event and then SIGTERM asks for one stop, not two.
 */
import { constants } from 'node:os';

const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

export interface StopRequest {
    /** The signal the stop counts as: the run's exit code is 128 + its number (SIGTERM: 143). */
    signal: NodeJS.Signals;
    /** What asked, for the log: `SIGINT`, `the actor's aborting event`. */
    cause: string;
}

type StopListener = (request: StopRequest) => void;

const listeners = new Set<StopListener>();
/** A request made while no run listened: the next run to listen is told at once. */
let unheard: StopRequest | undefined;
let signalled = false;

function onSignal(signal: NodeJS.Signals): void {
    if (signalled) process.exit(128 + constants.signals[signal]);
    signalled = true;
    tell({ signal, cause: signal });
}

function tell(request: StopRequest): void {
    if (listeners.size === 0) unheard ??= request;
    for (const listener of [...listeners]) listener(request);
}

/** Asks the run to stop gracefully, as a signal would: for a stop that comes as a runner's event. */
export function requestStop(request: StopRequest): void {
    tell(request);
}

/**
 * Calls `stop` once, on the first SIGINT, SIGTERM or `requestStop` (at once for one made before);
 * returns a function that stops listening. Signals are handled only while a run listens.
 */
export function onStop(stop: StopListener): () => void {
    let told = false;
    const listener = (request: StopRequest) => {
        if (told) return;
        told = true;
        stop(request);
    };
    if (listeners.size === 0) for (const signal of SIGNALS) process.on(signal, onSignal);
    listeners.add(listener);
    if (unheard) {
        const request = unheard;
        unheard = undefined;
        listener(request);
    }
    return () => {
        listeners.delete(listener);
        if (listeners.size > 0) return;
        for (const signal of SIGNALS) process.off(signal, onSignal);
        signalled = false;
    };
}
