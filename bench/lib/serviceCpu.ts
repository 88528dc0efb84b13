/**
 * CPU time of the services a distributed run leans on, read from /proc (Linux only), so a bench
 * can say where a fleet's time went on this machine: Redis, PostgreSQL, the worker processes
 * and the rest of the machine.
 *
 * - `redisSec`: every `redis-server` process (one, unless the machine runs several).
 * - `postgresSec`: every `postgres` process (postmaster, backends, background workers) plus what
 *   the postmaster reaped: a backend's CPU moves into its parent's cutime when its connection
 *   closes, so a delta taken after the workers have gone still holds their backends' work.
 * - `reapedChildrenSec`: this process's reaped children (cutime + cstime): taken before and after
 *   a set of child processes has been started and waited for, the delta is their CPU, exactly.
 *
 * Every figure is of the whole machine, whoever else uses it: the parts measured by deltas around
 * a run are as good as the machine is quiet.
 */
import { listProcesses } from './processTree.js';
import { machineTicks } from '../crawlers/measure.js';

export interface ServiceCpu {
    redisSec: number;
    postgresSec: number;
    reapedChildrenSec: number;
    /** Machine-wide CPU ticks (os.cpus()), for the busy share over an interval. */
    machine: { idle: number; total: number };
}

export async function serviceCpu(): Promise<ServiceCpu> {
    const processes = await listProcesses();
    let redisSec = 0;
    let postgresSec = 0;
    for (const info of processes.values()) {
        if (info.comm === 'redis-server') redisSec += info.cpuSec;
        if (info.comm === 'postgres') {
            postgresSec += info.cpuSec;
            // The postmaster (a postgres process whose parent is not one) reaps the backends.
            if (processes.get(info.ppid)?.comm !== 'postgres') postgresSec += info.childrenCpuSec;
        }
    }
    const self = processes.get(process.pid);
    return { redisSec, postgresSec, reapedChildrenSec: self?.childrenCpuSec ?? 0, machine: machineTicks() };
}

/** What each service used between two readings, in CPU seconds, and the machine's busy share (0..1). */
export function cpuBetween(
    before: ServiceCpu,
    after: ServiceCpu,
): { redisSec: number; postgresSec: number; reapedChildrenSec: number; machineBusy: number } {
    const total = after.machine.total - before.machine.total;
    const idle = after.machine.idle - before.machine.idle;
    return {
        redisSec: after.redisSec - before.redisSec,
        postgresSec: after.postgresSec - before.postgresSec,
        reapedChildrenSec: after.reapedChildrenSec - before.reapedChildrenSec,
        machineBusy: total > 0 ? 1 - idle / total : 0,
    };
}
