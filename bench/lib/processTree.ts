/**
 * Memory and CPU of a process and everything it started, read from /proc (Linux only) by the
 * bench parent, so the measured processes do no measuring themselves. A crawl with a browser
 * is a tree: the crawler's Node process and, under it, Chromium's browser, zygote, renderer
 * and utility processes; `npm run export` is npm → sh → tsx → node. A `ps`-style look at one
 * pid would miss most of the cost.
 *
 * The tree is found by scanning /proc for parent pids at every sample, so processes started
 * and ended between two samples are missed (their CPU is still counted if they were seen once:
 * each pid keeps the last CPU figure it was seen with). A process found outside the tree is not
 * read again (a new child of the tree is a new pid), so a sample reads the tree's processes and the
 * new ones, not the whole machine's. Memory figures per sample:
 *
 * - `rssMb`: the sum of every process's VmRSS. Pages shared between processes (Chromium's
 *   binary and shared memory, mapped by all of its processes) are counted once per process, so
 *   this overstates what the tree takes from the machine; it is what `ps` and most reports add up.
 * - `pssMb`: the sum of Pss (proportional set size, /proc/<pid>/smaps_rollup): each shared page
 *   split between the processes that map it. What the tree really costs; read only when asked,
 *   since the kernel walks every mapping to compute it.
 *
 * The files are read synchronously: the sampler runs in the bench's own process, beside the shop,
 * and an async read of a /proc file costs it ~7 times the CPU of a sync one (fs.promises' open,
 * fstat, read and close, each a round trip to the thread pool). A sample blocks that process for
 * the few milliseconds it takes instead.
 */
import { readdirSync, readFileSync } from 'node:fs';

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
    return readProcesses(livePids());
}

/** The pids in /proc; none where there is no /proc. */
function livePids(): number[] {
    let names: string[];
    try {
        names = readdirSync('/proc');
    } catch {
        return [];
    }
    return names.filter((name) => /^\d+$/.test(name)).map(Number);
}

function readProcesses(pids: readonly number[]): Map<number, ProcessInfo> {
    const processes = new Map<number, ProcessInfo>();
    for (const pid of pids) {
        const info = readStat(pid);
        if (info) processes.set(info.pid, info);
    }
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

function readStat(pid: number): ProcessInfo | undefined {
    const stat = readText(`/proc/${pid}/stat`);
    if (stat === undefined) return undefined;
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
}

/** A /proc file's text; undefined once its process is gone. */
function readText(path: string): string | undefined {
    try {
        return readFileSync(path, 'utf8');
    } catch {
        return undefined;
    }
}

/** A `kB` field of /proc/<pid>/status (VmRSS, VmHWM) or smaps_rollup (Pss), in MB. */
function kbField(text: string | undefined, field: string): number | undefined {
    const kb = text === undefined ? undefined : new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
}

export interface TreeSample {
    atMs: number;
    /** Processes in the tree at this sample, and in each group. */
    processes: number;
    processesByGroup: Record<string, number>;
    /** Sum of VmRSS over the tree, and over the processes of each group. */
    rssMb: number;
    rssMbByGroup: Record<string, number>;
    /** Sum of Pss over the tree, and over the processes of each group; only on the samples that read it (`pss`). */
    pssMb?: number;
    pssMbByGroup?: Record<string, number>;
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
    /**
     * With `pss`, read it at every n-th sample only (and the last): the kernel walks every mapping
     * of every process for it, which for a tree of dozens of Chromium processes costs the sampling
     * process more than the rest of the sample. Default: 1.
     */
    pssEvery?: number;
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
    /** Live pids seen outside the tree: never read again (see the module comment). */
    const outside = new Set<number>();
    let stopped = false;

    function currentTree(): ProcessInfo[] {
        const pids = livePids();
        const live = new Set(pids);
        for (const pid of outside) if (!live.has(pid)) outside.delete(pid);
        const read = readProcesses(pids.filter((pid) => !outside.has(pid)));
        const tree = treeOf(options.pid, read);
        const inTree = new Set(tree.map((process) => process.pid));
        for (const pid of read.keys()) if (!inTree.has(pid)) outside.add(pid);
        return tree;
    }

    function take(last = false): void {
        const atMs = Date.now();
        const tree = currentTree();
        const readPss = options.pss === true && (last || samples.length % (options.pssEvery ?? 1) === 0);
        const rssMbByGroup: Record<string, number> = {};
        const pssMbByGroup: Record<string, number> = {};
        const processesByGroup: Record<string, number> = {};
        let rssMb = 0;
        let pssMb = 0;
        for (const process of tree) {
            const name = group(process, options.pid);
            processesByGroup[name] = (processesByGroup[name] ?? 0) + 1;
            lastCpu.set(process.pid, { group: name, cpuSec: process.cpuSec });
            const status = readText(`/proc/${process.pid}/status`);
            const rss = kbField(status, 'VmRSS');
            const peak = kbField(status, 'VmHWM');
            const pss = readPss ? kbField(readText(`/proc/${process.pid}/smaps_rollup`), 'Pss') : undefined;
            if (rss !== undefined) {
                rssMb += rss;
                rssMbByGroup[name] = (rssMbByGroup[name] ?? 0) + rss;
            }
            if (peak !== undefined && peak > (hwm.get(process.pid)?.hwmMb ?? 0))
                hwm.set(process.pid, { comm: process.comm, hwmMb: peak });
            if (pss !== undefined) {
                pssMb += pss;
                pssMbByGroup[name] = (pssMbByGroup[name] ?? 0) + pss;
            }
        }
        const cpuSecByGroup: Record<string, number> = {};
        for (const { group: name, cpuSec } of lastCpu.values())
            cpuSecByGroup[name] = (cpuSecByGroup[name] ?? 0) + cpuSec;
        samples.push({
            atMs,
            processes: tree.length,
            processesByGroup,
            rssMb,
            rssMbByGroup,
            ...(readPss ? { pssMb, pssMbByGroup } : {}),
            cpuSecByGroup,
        });
    }

    let timer: NodeJS.Timeout | undefined;
    const tick = () => {
        if (stopped) return;
        const started = Date.now();
        take();
        timer = setTimeout(tick, Math.max(0, intervalMs - (Date.now() - started)));
    };
    timer = setTimeout(tick, 0);

    return {
        samples,
        peakHwmMb: () => [...hwm].map(([pid, { comm, hwmMb }]) => ({ pid, comm, hwmMb })),
        async stop() {
            stopped = true;
            clearTimeout(timer);
            take(true);
            return samples;
        },
    };
}
