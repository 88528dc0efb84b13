/**
 * The run's events: what the stages tell whoever watches them. A stage emits an event where
 * something happens and knows nothing of who listens; metrics, the run's counters, the
 * concurrency controller, the adaptive timeout, the render learner and the drift breaker subscribe
 * in the wiring (wiring/observers.ts). A new observer is a new subscriber, not an edit to a stage.
 *
 * Listeners run synchronously, in the order they subscribed, inside `emit`: what they record is
 * there before the stage goes on (the counters a commit saves next include it), and a listener
 * that throws fails the stage's step as a direct call would.
 *
 * What must be counted inside a commit stays there, not here: a page's items, quarantine and
 * dead-letter counts are counted in the transaction that stores them (store/outcomes.ts), so the
 * saved counters always agree with the stores.
 */
import type { Renderer, WireProfile } from '../site/site.js';
import type { ClassifiedFailure } from './failure.js';
import type { Stage } from './request.js';

export interface RunEventMap {
    /**
     * A fetch attempt is about to be sent: an HTTP request, or a browser navigation. `request` identifies the attempt.
     */
    attemptStarted: { stage: Stage; request: object; url: string };
    /**
     * The attempt got a response (any status); for HTTP, `responseMs` is the site's time to the response headers,
     * and `wire` the profile the request went out on.
     */
    responded: { stage: Stage; request: object; url: string; status: number; responseMs?: number; wire?: WireProfile };
    /** The attempt failed, as the failure classifier judged it; `error` as it was thrown. */
    attemptFailed: { stage: Stage; request: object; url: string; error: unknown; failure: ClassifiedFailure };
    /** A failed request will be fetched again in `delayMs`; `attempt` is the attempt that failed (1 for the first). */
    retryScheduled: { stage: Stage; url: string; failure: ClassifiedFailure; attempt: number; delayMs: number };
    /** A page's HTML is in hand, from the cheap fetch or the browser. */
    pageFetched: { renderer: Renderer; route: string; url: string };
    /** A cheap fetch of a `render: 'auto'` route was judged: did it need the browser? */
    cheapFetchJudged: { route: string; neededBrowser: boolean };
    /** A page goes to the browser because its cheap fetch missed required fields. */
    escalated: { route: string; url: string; reason: string; failingFields: string[] };
    /** A page goes to the browser without a cheap fetch: its route learned that it needs one. */
    sentToBrowser: { route: string; url: string };
    /** A page's records were judged for the last time and stored: valid ones in the dataset, the rest quarantined. */
    recordsStored: {
        route: string;
        url: string;
        rawKey: string;
        stored: number;
        quarantined: number;
        failingFields: string[];
        issues: string[];
    };
}

export type RunEventName = keyof RunEventMap;
export type RunEventListener<K extends RunEventName> = (event: RunEventMap[K]) => void;

/** One run's event bus. */
export class RunEvents {
    private readonly listeners: { [K in RunEventName]?: RunEventListener<K>[] } = {};

    /** Calls `listener` on every `name` event, for as long as the run lasts. */
    on<K extends RunEventName>(name: K, listener: RunEventListener<K>): void {
        this.listeners[name] ??= [];
        const listeners: RunEventListener<K>[] = this.listeners[name];
        listeners.push(listener);
    }

    emit<K extends RunEventName>(name: K, event: RunEventMap[K]): void {
        const listeners: RunEventListener<K>[] | undefined = this.listeners[name];
        if (listeners) for (const listener of listeners) listener(event);
    }
}
