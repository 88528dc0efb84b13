/**
 * What both stages are given: the HTTP stage (http/httpStage.ts) and the browser stage
 * (browser/browserStage.ts) fetch one site's queue with the same frontier, stores, events,
 * retry policy, egress and routing.
 */
import type { Configuration } from '@crawlee/core';
import type { Logger } from 'pino';
import type { Frontier } from '../frontier/frontier.js';
import type { PageHandler } from '../parse/pageHandler.js';
import type { DriftBreaker } from '../quality/driftBreaker.js';
import type { Site } from '../site/site.js';
import type { Outcomes } from '../store/outcomes.js';
import type { RunEvents } from '../vocabulary/events.js';
import type { FrontierQueue } from '../vocabulary/queue.js';
import type { Egress } from './egress/egress.js';
import type { ProxyRouting } from './egress/proxyRouting.js';
import type { RetryPolicy } from './failures/retryPolicy.js';
import type { HttpClient } from './http/httpClient.js';

export interface StageOptions {
    site: Site;
    queue: FrontierQueue;
    config: Configuration;
    frontier: Frontier;
    pageHandler: PageHandler;
    /** Where each request's outcome is stored as it is marked handled. */
    outcomes: Outcomes;
    /** Told of every attempt, response, failure and retry (metrics, the counters and the controllers listen). */
    events: RunEvents;
    log: Logger;
    /** Most requests in flight. */
    maxConcurrency: number;
    /** When a failed request is retried, and when it is given up on. */
    retryPolicy: RetryPolicy;
    /** Time for one fetch (or one browser navigation). */
    requestTimeoutSecs: number;
    /** Asked before each fetch whether the request's route was stopped. */
    driftBreaker: DriftBreaker;
    /** Where requests may connect, and the DNS lookup that checks and pins each address. */
    egress: Egress;
    /** Bytes of a response body read, decompressed; a larger one is dead-lettered as `too-large`. */
    maxResponseBytes: number;
    /** Which tier, exit and session each request takes, and the site's politeness. */
    routing: ProxyRouting;
    /** What the HTTP stage fetches with (its connections outlive a stage: one client per run). */
    httpClient: HttpClient;
}
