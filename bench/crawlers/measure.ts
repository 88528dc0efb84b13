/**
 * The measurements every crawler child takes the same way, without looking inside the crawler:
 * it watches the process's own HTTP clients through Node's diagnostics channels — node:http's
 * (`http.client.request.start`: got, which plain Crawlee uses) and undici's (`undici:request:*`:
 * dragnet's) — so a request counts as in flight from the moment the client creates it until it
 * closes, and as a page when it closed with a response. A crawler whose requests another process
 * sends (dragnet's chrome wire: Chromium) says so (`requestsSentHere: false`) and gives its own
 * count of pages; what only each response's time would tell (steady pages/s, in flight) is then null.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { ClientRequest } from 'node:http';
import { cpus } from 'node:os';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import type { CrawlerResult } from './protocol.js';

/** The steady part of a run: its middle 60% of wall time, ramp-up and tail dropped. */
export const STEADY_WINDOW = { from: 0.2, to: 0.8 } as const;

export interface MeasurementOptions {
    sampleIntervalMs: number;
    /** Extra series sampled with the in-flight count (plain Crawlee's autoscaled pool). */
    extraSeries?: Partial<Record<ExtraSeries, () => number | undefined>>;
    /**
     * Whether this process's HTTP clients send the crawler's requests. When not, none is counted
     * here (another client of this process, such as the egress proxy Chromium sends through, is not
     * the crawler's) and `stop` is given the pages. Default: true.
     */
    requestsSentHere?: boolean;
}

type ExtraSeries = 'poolConcurrencySamples' | 'poolDesiredSamples';

export type Measured = Omit<CrawlerResult, 'crawlerPages' | 'items' | 'finished'>;

export interface Measurement {
    /**
     * Stops counting and sampling; returns what was measured since `startMeasurement`.
     * `pages`: the crawler's own count, taken when its requests are not sent here.
     */
    stop(pages?: number): Measured;
}

const REQUEST_START = 'http.client.request.start';
/** undici's request life: created, its response's headers in, then its end (trailers) or an error. */
const UNDICI = {
    create: 'undici:request:create',
    headers: 'undici:request:headers',
    end: 'undici:request:trailers',
    error: 'undici:request:error',
};

export function startMeasurement(options: MeasurementOptions): Measurement {
    const startRssMb = peakRssMb();
    const startCpu = process.cpuUsage();
    const startTicks = machineTicks();
    const startedAtMs = Date.now();
    const completions: number[] = [];
    const inflightSamples: number[] = [];
    /** The event loop's cumulative busy and idle time, read with each in-flight sample. */
    const loopSamples: Array<{ atMs: number; loop: EventLoopUtilization }> = [];
    const extraSeries: Partial<Record<ExtraSeries, number[]>> = {};
    const extraReaders = Object.entries(options.extraSeries ?? {}) as [ExtraSeries, () => number | undefined][];
    const requestsSentHere = options.requestsSentHere ?? true;
    let inflight = 0;

    const onRequest = (message: unknown) => {
        const request = (message as { request: ClientRequest }).request;
        let answered = false;
        inflight += 1;
        request.once('response', () => {
            answered = true;
        });
        // 'close' comes once, whether the response was read to the end or the request failed.
        request.once('close', () => {
            inflight -= 1;
            if (answered) completions.push(Date.now());
        });
    };
    const answeredByUndici = new WeakSet<object>();
    const undiciListeners: Record<keyof typeof UNDICI, (message: unknown) => void> = {
        create: () => (inflight += 1),
        headers: (message) => void answeredByUndici.add((message as { request: object }).request),
        end: (message) => {
            inflight -= 1;
            if (answeredByUndici.has((message as { request: object }).request)) completions.push(Date.now());
        },
        error: () => (inflight -= 1),
    };
    if (requestsSentHere) {
        subscribe(REQUEST_START, onRequest);
        for (const [event, listener] of Object.entries(undiciListeners))
            subscribe(UNDICI[event as keyof typeof UNDICI], listener);
    }

    const timer = setInterval(() => {
        inflightSamples.push(inflight);
        loopSamples.push({ atMs: Date.now(), loop: performance.eventLoopUtilization() });
        for (const [name, read] of extraReaders) {
            extraSeries[name] ??= [];
            extraSeries[name].push(read() ?? 0);
        }
    }, options.sampleIntervalMs);

    return {
        stop(crawlerPages) {
            const endedAtMs = Date.now();
            const cpu = process.cpuUsage(startCpu);
            const ticks = machineTicks();
            clearInterval(timer);
            let pages = completions.length;
            if (requestsSentHere) {
                unsubscribe(REQUEST_START, onRequest);
                for (const [event, listener] of Object.entries(undiciListeners))
                    unsubscribe(UNDICI[event as keyof typeof UNDICI], listener);
            } else {
                if (crawlerPages === undefined)
                    throw new Error('stop(pages): requests not sent here are not counted here');
                pages = crawlerPages;
            }
            const durationSec = (endedAtMs - startedAtMs) / 1000;
            const windowStart = startedAtMs + STEADY_WINDOW.from * (endedAtMs - startedAtMs);
            const windowEnd = startedAtMs + STEADY_WINDOW.to * (endedAtMs - startedAtMs);
            const inWindow = completions.filter((t) => t >= windowStart && t < windowEnd).length;
            return {
                pages,
                ...(requestsSentHere ? {} : { pagesCountedBy: 'crawler' as const }),
                durationSec: round(durationSec, 3),
                pagesPerSec: round(pages / durationSec, 1),
                steadyPagesPerSec: requestsSentHere ? round(inWindow / ((windowEnd - windowStart) / 1000), 1) : null,
                peakRssMb: peakRssMb(),
                startRssMb,
                cpuSec: round((cpu.user + cpu.system) / 1e6, 2),
                machineCpuBusy: round(1 - (ticks.idle - startTicks.idle) / (ticks.total - startTicks.total || 1), 3),
                threadBusy: round(loopBusyBetween(loopSamples, windowStart, windowEnd), 3),
                startedAtMs,
                endedAtMs,
                inflightSamples: requestsSentHere ? inflightSamples : null,
                ...extraSeries,
            };
        },
    };
}

/**
 * The event loop's utilization between the first sample at or after
 * `fromMs` and the last before `toMs` (0 with fewer than two).
 */
function loopBusyBetween(
    samples: Array<{ atMs: number; loop: EventLoopUtilization }>,
    fromMs: number,
    toMs: number,
): number {
    const inWindow = samples.filter(({ atMs }) => atMs >= fromMs && atMs < toMs);
    if (inWindow.length < 2) return 0;
    return performance.eventLoopUtilization(inWindow.at(-1)!.loop, inWindow[0]!.loop).utilization;
}

/** CPU time of all cores so far, idle and total, in the units os.cpus() reports. */
export function machineTicks(): { idle: number; total: number } {
    let idle = 0;
    let total = 0;
    for (const { times } of cpus()) {
        idle += times.idle;
        total += times.user + times.nice + times.sys + times.idle + times.irq;
    }
    return { idle, total };
}

function peakRssMb(): number {
    return Math.round(process.resourceUsage().maxRSS / 1024);
}

function round(value: number, digits: number): number {
    const factor = 10 ** digits;
    return Math.round(value * factor) / factor;
}
