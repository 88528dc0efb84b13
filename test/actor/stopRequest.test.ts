/**
 * The graceful stop as a runner's event asks for it (src/runtime/stopSignal.ts): told to the run once,
 * whichever of the event and a signal comes first, or when the run starts listening if it came
 * before; a signal after the event does not count as the second one that quits at once.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { onStop, requestStop, type StopRequest } from '../../src/runtime/stopSignal.js';

const ABORTING: StopRequest = { signal: 'SIGTERM', cause: "the actor's aborting event" };

describe('a stop requested by a runner event', () => {
    it('is told to the run once, and a signal after it does not quit at once; a second signal does', (t) => {
        const exit = t.mock.method(process, 'exit', () => undefined);
        const told: StopRequest[] = [];
        const stopListening = onStop((request) => told.push(request));
        try {
            requestStop(ABORTING);
            process.emit('SIGTERM', 'SIGTERM');
            requestStop({ signal: 'SIGTERM', cause: "the actor's migrating event" });
            assert.deepEqual(told, [ABORTING]);
            assert.equal(exit.mock.callCount(), 0, 'the SIGTERM that follows the event is the first signal');
            process.emit('SIGTERM', 'SIGTERM');
            assert.deepEqual(
                exit.mock.calls.map((call) => call.arguments),
                [[143]],
            );
        } finally {
            stopListening();
        }
    });

    it('made while no run listens, is told to the next run as it starts listening', () => {
        requestStop(ABORTING);
        const told: StopRequest[] = [];
        const stopListening = onStop((request) => told.push(request));
        stopListening();
        assert.deepEqual(told, [ABORTING]);
        const later: StopRequest[] = [];
        onStop((request) => later.push(request))();
        assert.deepEqual(later, [], 'told to one run only');
    });

    it('handles signals only while a run listens', () => {
        const before = process.listenerCount('SIGTERM');
        const stopListening = onStop(() => undefined);
        assert.equal(process.listenerCount('SIGTERM'), before + 1);
        stopListening();
        assert.equal(process.listenerCount('SIGTERM'), before);
    });
});
