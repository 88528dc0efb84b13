/**
 * Whether this machine has room for more requests in flight, asked by the concurrency controller
 * before it raises a limit (concurrencyController.ts). More requests in flight help a crawl that
 * waits on the network; one whose CPU is used up only makes its pages wait longer in this process,
 * and one short of memory risks the run. Each question covers the time since the last one (the
 * controller asks about once a window), so a burst of work is not mistaken for the machine's load.
 *
 * Crawlee's autoscaled pool is told to ignore CPU (http/httpStage.ts says why), so this is where
 * CPU counts; memory is also the pool's own limit, which stops it at 90% of the budget.
 */
import { cpus, totalmem } from 'node:os';
import { type EventLoopUtilization, performance } from 'node:perf_hooks';

export type MachineShortage = 'cpu' | 'memory';

export interface MachineRoomOptions {
    /**
     * No room when the crawling thread's event loop, or the machine's CPUs taken together, were busy
     * more than this share of the time since the last question. Default: 0.9.
     */
    maxBusy?: number;
    /** The run's memory budget in MB (runtime/memoryBudget.ts). Default: a quarter of the machine's memory, as Crawlee's. */
    memoryMb?: number;
    /** No room when this process's resident memory is over this share of the budget. Default: 0.8. */
    maxMemoryShare?: number;
}

export const MACHINE_ROOM_DEFAULTS = { maxBusy: 0.9, maxMemoryShare: 0.8 } satisfies MachineRoomOptions;

interface CpuTimes {
    idle: number;
    total: number;
}

export class MachineRoom {
    private readonly maxBusy: number;
    private readonly maxRssBytes: number;
    private loopSince: EventLoopUtilization = performance.eventLoopUtilization();
    private cpusSince: CpuTimes = cpuTimes();

    constructor(options: MachineRoomOptions = {}) {
        this.maxBusy = options.maxBusy ?? MACHINE_ROOM_DEFAULTS.maxBusy;
        const budgetBytes = options.memoryMb === undefined ? totalmem() / 4 : options.memoryMb * 2 ** 20;
        this.maxRssBytes = budgetBytes * (options.maxMemoryShare ?? MACHINE_ROOM_DEFAULTS.maxMemoryShare);
    }

    /** What the machine was short of since the last call, CPU first; undefined when it has room. */
    shortage(): MachineShortage | undefined {
        const loop = performance.eventLoopUtilization(this.loopSince);
        this.loopSince = performance.eventLoopUtilization();
        const now = cpuTimes();
        const elapsed = now.total - this.cpusSince.total;
        const machineBusy = elapsed > 0 ? 1 - (now.idle - this.cpusSince.idle) / elapsed : 0;
        this.cpusSince = now;
        if (loop.utilization > this.maxBusy || machineBusy > this.maxBusy) return 'cpu';
        if (process.memoryUsage.rss() > this.maxRssBytes) return 'memory';
        return undefined;
    }
}

/** Idle and total time of all the machine's CPUs since boot, ms. */
function cpuTimes(): CpuTimes {
    let idle = 0;
    let total = 0;
    for (const { times } of cpus()) {
        idle += times.idle;
        total += times.user + times.nice + times.sys + times.idle + times.irq;
    }
    return { idle, total };
}
