/**
 * Memory and CPU of a process and everything it started, read from /proc (Linux only) by the
 * bench parent, so the measured processes do no measuring themselves. A crawl with a browser
 * is a tree: the crawler's Node process and, under it, Chromium's browser, zygote, renderer
 * and utility processes; `npm run export` is npm → sh → tsx → node. A `ps`-style look at one
 * pid would miss most of the cost.
 *
 * The tree is found by scanning /proc for parent pids at every sample, so processes started
 * and ended between two samples are missed (their CPU is still counted if they were seen once:
 * each pid keeps the last CPU figure it was seen with). Memory figures per sample:
 *
 * - `rssMb`: the sum of every process's VmRSS. Pages shared between processes (Chromium's
 *   binary and shared memory, mapped by all of its processes) are counted once per process, so
 *   this overstates what the tree takes from the machine; it is what `ps` and most reports add up.
 * - `pssMb`: the sum of Pss (proportional set size, /proc/<pid>/smaps_rollup): each shared page
 *   split between the processes that map it. What the tree really costs; read only when asked,
 *   since the kernel walks every mapping to compute it.
 */
import { readdir, readFile } from 'node:fs/promises';

/** Kernel clock ticks per second for /proc/<pid>/stat times; 100 on every Linux this runs on. */
const CLOCK_TICKS = 100;

export interface ProcessInfo {
    pid: number;
    ppid: number;
    /** Executable name as the kernel keeps it (at most 15 characters): `node`, `chromium`, `sh`. */
    comm: string;
    /** User + system CPU seconds of this process itself (not of its reaped children). */
    cpuSec: number;
    /** CPU seconds of its children that exited and were reaped by it. */
    childrenCpuSec: number;
}

/** Every process on the machine, by pid. Processes that exit while being read are left out. */
export async function listProcesses(): Promise<Map<number, ProcessInfo>> {
    const pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name));
    const processes = new Map<number, ProcessInfo>();
    await Promise.all(
        pids.map(async (name) => {
            const info = await readStat(Number(name));
            if (info) processes.set(info.pid, info);
        }),
    );
    return processes;
}

/** The process and all its descendants, root first. */
export function treeOf(root: number, processes: Map<number, ProcessInfo>): ProcessInfo[] {
    const children = new Map<number, ProcessInfo[]>();
    for (const info of processes.values()) {
        const siblings = children.get(info.ppid) ?? [];
        siblings.push(info);
        children.set(info.ppid, siblings);
    }
    const tree: ProcessInfo[] = [];
    const start = processes.get(root);
    const pending = start ? [start] : [];
    while (pending.length > 0) {
        const next = pending.shift()!;
        tree.push(next);
        pending.push(...(children.get(next.pid) ?? []));
    }
    return tree;
}

async function readStat(pid: number): Promise<ProcessInfo | undefined> {
    try {
        const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
        // The name is in parentheses and may itself hold spaces or parentheses: split after the last ')'.
        const close = stat.lastIndexOf(')');
        const comm = stat.slice(stat.indexOf('(') + 1, close);
        const fields = stat.slice(close + 2).split(' ');
        // Fields after the name, 0-based: 1 ppid, 11 utime, 12 stime, 13 cutime, 14 cstime.
        const ticks = (index: number) => Number(fields[index]);
        return {
            pid,
            ppid: ticks(1),
            comm,
            cpuSec: (ticks(11) + ticks(12)) / CLOCK_TICKS,
            childrenCpuSec: (ticks(13) + ticks(14)) / CLOCK_TICKS,
        };
    } catch {
        return undefined;
    }
}

/**
 * A `kB` field of /proc/<pid>/status (VmRSS, VmHWM) or
 * smaps_rollup (Pss) in MB; undefined once the process is gone.
 */
async function kbField(path: string, field: string): Promise<number | undefined> {
    try {
        const text = await readFile(path, 'utf8');
        const kb = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1];
        return kb === undefined ? undefined : Number(kb) / 1024;
    } catch {
        return undefined;
    }
}

export interface TreeSample {
    atMs: number;
    /** Processes in the tree at this sample. */
    processes: number;
    /** Sum of VmRSS over the tree, and over the processes of each group. */
    rssMb: number;
    rssMbByGroup: Record<string, number>;
    /** Sum of Pss over the tree; only when `pss` was asked for. */
    pssMb?: number;
    /** Cumulative CPU seconds per group: each pid's last seen own CPU, summed (exited pids included). */
    cpuSecByGroup: Record<string, number>;
}

export interface TreeSamplerOptions {
    /** The root of the tree. */
    pid: number;
    /** Milliseconds between samples. Default: 250. */
    intervalMs?: number;
    /** Also sum Pss (see the module comment). Default: false. */
    pss?: boolean;
    /** Names the group a process counts under, e.g. `node` / `browser`. Default: its `comm`. */
    group?: (process: ProcessInfo, root: number) => string;
}

export interface TreeSampler {
    samples: TreeSample[];
    /**
     * Highest VmHWM seen per pid, by comm and pid, for the processes'
     * own peaks (`VmHWM` is kept by the kernel between samples).
     */
    peakHwmMb(): Array<{ pid: number; comm: string; hwmMb: number }>;
    /** Takes one more sample and stops. */
    stop(): Promise<TreeSample[]>;
}

/** Samples the tree under `pid` every `intervalMs` until stopped; a sample never overlaps the one before it. */
export function sampleTree(options: TreeSamplerOptions): TreeSampler {
    const intervalMs = options.intervalMs ?? 250;
    const group = options.group ?? ((process) => process.comm);
    const samples: TreeSample[] = [];
    const lastCpu = new Map<number, { group: string; cpuSec: number }>();
    const hwm = new Map<number, { comm: string; hwmMb: number }>();
    let stopped = false;
    let running: Promise<void> = Promise.resolve();

    async function take(): Promise<void> {
        const atMs = Date.now();
        const tree = treeOf(options.pid, await listProcesses());
        const rssMbByGroup: Record<string, number> = {};
        let rssMb = 0;
        let pssMb = 0;
        await Promise.all(
            tree.map(async (process) => {
                const name = group(process, options.pid);
                lastCpu.set(process.pid, { group: name, cpuSec: process.cpuSec });
                const [rss, peak, pss] = await Promise.all([
                    kbField(`/proc/${process.pid}/status`, 'VmRSS'),
                    kbField(`/proc/${process.pid}/status`, 'VmHWM'),
                    options.pss ? kbField(`/proc/${process.pid}/smaps_rollup`, 'Pss') : undefined,
                ]);
                if (rss !== undefined) {
                    rssMb += rss;
                    rssMbByGroup[name] = (rssMbByGroup[name] ?? 0) + rss;
                }
                if (peak !== undefined && peak > (hwm.get(process.pid)?.hwmMb ?? 0))
                    hwm.set(process.pid, { comm: process.comm, hwmMb: peak });
                pssMb += pss ?? 0;
            }),
        );
        const cpuSecByGroup: Record<string, number> = {};
        for (const { group: name, cpuSec } of lastCpu.values())
            cpuSecByGroup[name] = (cpuSecByGroup[name] ?? 0) + cpuSec;
        samples.push({
            atMs,
            processes: tree.length,
            rssMb,
            rssMbByGroup,
            ...(options.pss ? { pssMb } : {}),
            cpuSecByGroup,
        });
    }

    let timer: NodeJS.Timeout | undefined;
    const tick = () => {
        if (stopped) return;
        const started = Date.now();
        running = take()
            .catch(() => undefined)
            .finally(() => {
                if (!stopped) timer = setTimeout(tick, Math.max(0, intervalMs - (Date.now() - started)));
            });
    };
    timer = setTimeout(tick, 0);

    return {
        samples,
        peakHwmMb: () => [...hwm].map(([pid, { comm, hwmMb }]) => ({ pid, comm, hwmMb })),
        async stop() {
            stopped = true;
            clearTimeout(timer);
            await running;
            await take().catch(() => undefined);
            return samples;
        },
    };
}
