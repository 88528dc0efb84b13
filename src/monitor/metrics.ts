/**
 * Prometheus metrics of a run, in a registry of its own (not prom-client's global one), so
 * several runs or tests can share a process. Two kinds of number, kept apart on purpose:
 *
 * - counts RunStats keeps (pages, retries, errors by class, dead-letters by reason, items and
 *   escalations per route, skipped links) are read from it when Prometheus scrapes: one count
 *   of each thing, so the metrics never disagree with the progress line or the summary;
 * - what only the moment of a fetch knows — the response status and how long it took — is
 *   recorded then, by the stages, through the small recorder below.
 */
import { performance } from 'node:perf_hooks';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type LabelValues } from 'prom-client';
import type { DomainConcurrency, ProxyReport } from '../vocabulary/report.js';
import type { Stage } from '../vocabulary/request.js';
import { inFlightOf, type Load } from './live.js';
import type { RunStats } from './stats.js';

/**
 * Upper bounds of the fetch-latency buckets, in seconds: a local
 * fixture answers in ~10 ms, a navigation times out at 60 s.
 */
export const LATENCY_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60];

const STAGES: readonly Stage[] = ['http', 'browser'];

export interface MetricsOptions {
    stats: RunStats;
    /** The stages' load (see RunningStages), read at scrape time. Default: in-flight and limit stay 0. */
    load?: () => Load;
    /** The adaptive concurrency controller's per-domain limits, read at scrape time. Default: none exported. */
    concurrency?: { byDomain(): Record<string, DomainConcurrency> };
    /**
     * The proxy routing's report (fetch/egress/proxyRouting.ts
     * `report()`), read at scrape time. Default: no proxy series exported.
     */
    proxies?: () => ProxyReport;
    /** Also export Node's process metrics (CPU, memory, event-loop lag, GC). Default: true. */
    processMetrics?: boolean;
}

/** The metrics of one run, and the recorder the stages call as fetches happen. */
export class Metrics {
    readonly registry = new Registry();

    /** Fetch attempts by what came back: the HTTP status, or `none` when no usable response did. */
    private readonly requests: Counter<'stage' | 'status'>;
    private readonly latency: Histogram<'stage'>;
    /** Fetch attempts under way: when each started. Keyed by Crawlee's request object, held weakly. */
    private readonly attempts = new WeakMap<object, number>();

    constructor({ stats, load, concurrency, proxies, processMetrics = true }: MetricsOptions) {
        const registers = [this.registry];
        this.requests = new Counter({
            name: 'dragnet_requests_total',
            help:
                'Fetch attempts by stage and response status (`none`: the connection failed or timed out before a ' +
                'usable response).',
            labelNames: ['stage', 'status'],
            registers,
        });
        this.latency = new Histogram({
            name: 'dragnet_fetch_duration_seconds',
            help:
                'Time from sending a request until its page is in hand (HTTP: body read; browser: navigation ' +
                'done), by stage.',
            labelNames: ['stage'],
            buckets: LATENCY_BUCKETS,
            registers,
        });

        const counted = countersFrom(this.registry);
        counted('dragnet_urls_admitted_total', 'URLs admitted to the frontier.', [], (set) => set({}, stats.admitted));
        counted(
            'dragnet_pages_succeeded_total',
            'Pages finished successfully at their last stage (redirects and duplicates included).',
            [],
            (set) => set({}, stats.succeeded),
        );
        counted('dragnet_retries_total', 'Retries of failed fetch attempts.', [], (set) => set({}, stats.retries));
        counted(
            'dragnet_errors_total',
            'Failed attempts by failure class (transient, blocked, permanent, invalid, exit).',
            ['class'],
            (set) => {
                for (const [failureClass, count] of Object.entries(stats.errorsByClass))
                    set({ class: failureClass }, count);
            },
        );
        counted(
            'dragnet_dead_lettered_total',
            'Requests given up on, by reason (http-404, timeout, renderer-unavailable, …).',
            ['reason'],
            (set) => {
                for (const [reason, count] of Object.entries(stats.deadLetterReasons)) set({ reason }, count);
            },
        );
        counted(
            'dragnet_items_total',
            'Records by route: valid ones stored, invalid ones quarantined.',
            ['route', 'outcome'],
            (set) => {
                for (const [route, counts] of stats.routes) {
                    set({ route, outcome: 'valid' }, counts.itemsStored);
                    set({ route, outcome: 'invalid' }, counts.itemsInvalid);
                }
            },
        );
        counted(
            'dragnet_escalations_total',
            'Pages sent from the HTTP stage to the browser, by route.',
            ['route'],
            (set) => {
                for (const [route, counts] of stats.routes) set({ route }, counts.escalations);
            },
        );
        counted(
            'dragnet_links_skipped_total',
            'Discovered links that did not enter the frontier, by why.',
            ['reason'],
            (set) => {
                for (const [reason, count] of Object.entries(stats.linksSkipped)) set({ reason }, count);
            },
        );

        const gauge = gaugesFrom(this.registry);
        const inFlightNow = () => (load ? inFlightOf(load()) : 0);
        gauge(
            'dragnet_queue_pending',
            'URLs admitted and not yet finished, less those in flight (escalated pages included).',
            [],
            (set) => set({}, Math.max(0, stats.admitted - stats.finished - inFlightNow())),
        );
        gauge('dragnet_in_flight', 'Requests being fetched or handled, by stage.', ['stage'], (set) => {
            const now = load?.();
            for (const stage of STAGES) set({ stage }, now?.[stage].inFlight ?? 0);
        });
        gauge(
            'dragnet_concurrency_limit',
            "Requests the stage's autoscaled pool lets run at once just now, by stage.",
            ['stage'],
            (set) => {
                const now = load?.();
                for (const stage of STAGES) set({ stage }, now?.[stage].concurrencyLimit ?? 0);
            },
        );

        if (concurrency) {
            // A name of its own: `dragnet_concurrency_limit` is per stage,
            // and one name with two label sets would double-count in sums.
            gauge(
                'dragnet_domain_concurrency_limit',
                'Requests the adaptive concurrency controller allows in flight to each domain just now.',
                ['domain'],
                (set) => {
                    for (const [domain, { limit }] of Object.entries(concurrency.byDomain())) set({ domain }, limit);
                },
            );
            counted(
                'dragnet_concurrency_changes_total',
                'Adaptive concurrency decisions by domain and direction (up: a clean window; down: errors climbed).',
                ['domain', 'direction'],
                (set) => {
                    for (const [domain, { increases, decreases }] of Object.entries(concurrency.byDomain())) {
                        set({ domain, direction: 'up' }, increases);
                        set({ domain, direction: 'down' }, decreases);
                    }
                },
            );
        }

        if (proxies) proxyMetrics(counted, proxies);

        if (processMetrics) collectDefaultMetrics({ register: this.registry });
    }

    /** A fetch attempt is about to be sent (a pre-navigation hook). */
    fetchStarted(request: object): void {
        this.attempts.set(request, performance.now());
    }

    /** A response came back for the attempt: counted by status, and timed when its start was seen. */
    responded(request: object, { stage, status }: { stage: Stage; status: number }): void {
        const startedAt = this.attempts.get(request);
        this.attempts.delete(request);
        this.requests.inc({ stage, status: String(status) });
        if (startedAt !== undefined) this.latency.observe({ stage }, (performance.now() - startedAt) / 1000);
    }

    /**
     * The attempt failed (a stage's error handler). Counted here only when no response came
     * back; one that did was counted under its status when it arrived.
     */
    fetchFailed(request: object, stage: Stage): void {
        if (!this.attempts.delete(request)) return;
        this.requests.inc({ stage, status: 'none' });
    }

    /** The registry's content in Prometheus text format, and its content type. */
    async scrape(): Promise<{ contentType: string; body: string }> {
        return { contentType: this.registry.contentType, body: await this.registry.metrics() };
    }
}

type Setter<L extends string> = (labels: LabelValues<L>, value: number) => void;
type Counted = ReturnType<typeof countersFrom>;

/** The proxy routing's counters, copied from its report like RunStats' are: one count of each thing. */
function proxyMetrics(counted: Counted, proxies: () => ProxyReport): void {
    counted(
        'dragnet_proxy_requests_total',
        'Requests by proxy tier, exit (host:port or direct) and outcome: ok, blocked, limited (429) or exit_fault ' +
            '(the proxy failed, not the site).',
        ['tier', 'exit', 'outcome'],
        (set) => {
            for (const exit of proxies().exits) {
                const labels = { tier: exit.tier, exit: exitLabel(exit.name) };
                set({ ...labels, outcome: 'ok' }, exit.ok);
                set({ ...labels, outcome: 'blocked' }, exit.blocked);
                set({ ...labels, outcome: 'limited' }, exit.limited);
                set({ ...labels, outcome: 'exit_fault' }, exit.exitFaults);
            }
        },
    );
    counted(
        'dragnet_proxy_bytes_total',
        'Response body bytes received, by proxy tier and exit.',
        ['tier', 'exit'],
        (set) => {
            for (const exit of proxies().exits) set({ tier: exit.tier, exit: exitLabel(exit.name) }, exit.bytes);
        },
    );
    counted(
        'dragnet_exit_breaker_opened_total',
        "Times an exit's breaker opened after its faults, by proxy tier and exit.",
        ['tier', 'exit'],
        (set) => {
            for (const exit of proxies().exits)
                set({ tier: exit.tier, exit: exitLabel(exit.name) }, exit.breakerOpened);
        },
    );
    counted(
        'dragnet_sessions_retired_total',
        'Sessions retired, by why: blocked, max-uses, errors (error score).',
        ['reason'],
        (set) => {
            for (const [reason, count] of Object.entries(proxies().sessions.retired)) set({ reason }, count);
        },
    );
    counted(
        'dragnet_tier_moves_total',
        'Moves of a site section (or the whole site) from one proxy tier to another.',
        [],
        (set) => set({}, proxies().tierMoves.length),
    );
    counted(
        'dragnet_politeness_wait_seconds_total',
        "Time requests waited for the site's turn (spacing and 429 coolings), summed.",
        [],
        (set) => set({}, proxies().politeness.waitedMs / 1000),
    );
}

/**
 * Exit names are `host:port` already; anything up to an `@` is dropped all the same, so a name
 * built wrongly somewhere upstream cannot put a proxy password into a label that is scraped and kept.
 */
function exitLabel(name: string): string {
    return name.slice(name.lastIndexOf('@') + 1);
}

/** Counters whose values are copied from RunStats at scrape time. */
function countersFrom(registry: Registry) {
    return <L extends string>(name: string, help: string, labelNames: L[], read: (set: Setter<L>) => void): void => {
        new Counter<L>({
            name,
            help,
            labelNames,
            registers: [registry],
            collect() {
                this.reset();
                read((labels, value) => this.inc(labels, value));
            },
        });
    };
}

/** Gauges whose values are read at scrape time. */
function gaugesFrom(registry: Registry) {
    return <L extends string>(name: string, help: string, labelNames: L[], read: (set: Setter<L>) => void): void => {
        new Gauge<L>({
            name,
            help,
            labelNames,
            registers: [registry],
            collect() {
                this.reset();
                read((labels, value) => this.set(labels, value));
            },
        });
    };
}
