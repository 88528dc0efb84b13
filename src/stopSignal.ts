/**
 * A graceful stop on SIGINT (Ctrl+C) or SIGTERM (a container runtime stopping the run): `stop` is
 * called once; a second signal exits at once with the signal's conventional exit code.
 */
import { constants } from 'node:os';

const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/** Calls `stop` on the first SIGINT or SIGTERM; returns a function that removes the handler. */
export function onStopSignal(stop: (signal: NodeJS.Signals) => void): () => void {
    let stopping = false;
    const handler = (signal: NodeJS.Signals) => {
        if (stopping) process.exit(128 + constants.signals[signal]);
        stopping = true;
        stop(signal);
    };
    for (const signal of SIGNALS) process.on(signal, handler);
    return () => {
        for (const signal of SIGNALS) process.off(signal, handler);
    };
}
