'use strict';
// @apify/timeout 0.4.14's timeouts without its AsyncLocalStorage (see README.md). Crawlee 3.18
// uses three names of the package: TimeoutError, addTimeoutToPromise and tryCancel.

class TimeoutError extends Error {}

/**
 * Resolves with what `handler` resolves with, rejects with what it rejects with, or, when it has
 * not settled within `timeoutMillis`, rejects with `errorMessage` (an Error as it is, a string as a
 * TimeoutError). The handler is not stopped: it runs on, and what it settles with later is dropped.
 */
function addTimeoutToPromise(handler, timeoutMillis, errorMessage) {
    return new Promise((resolve, reject) => {
        const timeout = setTimeout(
            () => reject(errorMessage instanceof Error ? errorMessage : new TimeoutError(errorMessage)),
            timeoutMillis,
        );
        (async () => handler())()
            .then(resolve, reject)
            .finally(() => clearTimeout(timeout));
    });
}

/**
 * Stops nothing. The original throws here, at Crawlee's steps of a request, when an enclosing
 * timeout has fired; finding that out takes the store this package does without. dragnet stops a
 * timed-out attempt itself (src/fetch/crawlerHooks.ts, `endedAttempts`).
 */
function tryCancel() {}

exports.TimeoutError = TimeoutError;
exports.addTimeoutToPromise = addTimeoutToPromise;
exports.tryCancel = tryCancel;
