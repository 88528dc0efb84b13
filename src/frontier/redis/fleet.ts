/**
 * What the workers of one site share in Redis beside the queues: who is working (a heartbeat per
 * worker), each worker's counters (summed, they are the fleet's), and the routes the drift breaker
 * stopped (one worker's trip stops the route in every worker).
 *
 * Keys, under `{<prefix>:<site>}:`: `workers` and `stats` (hashes by worker id), `trips` (a hash by
 * route; the first trip of a route wins).
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { RedisClient } from './connection.js';
import type { StatsSnapshot } from '../../monitor/stats.js';
import type { Trip } from '../../vocabulary/report.js';

export interface WorkerSeen {
    id: string;
    host: string;
    pid: number;
    startedAt: string;
    seenAt: string;
    /** Pages finished per second over the last heartbeat. */
    pagesPerSec: number;
}

export interface FleetOptions {
    redis: RedisClient;
    /** The key prefix of the site's fleet, e.g. `{dragnet:shop}`. */
    key: string;
    /** How often a worker says it is alive. A worker unheard of for three of these is gone. Default: 2,000 ms. */
    heartbeatMillis?: number;
}

export const FLEET_DEFAULTS = { heartbeatMillis: 2_000 };

export class Fleet {
    /** This worker's id: host, process and a random part (two runs of one process differ). */
    readonly workerId = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
    readonly heartbeatMillis: number;
    private readonly redis: RedisClient;
    private readonly keys: { workers: string; stats: string; trips: string };
    private readonly startedAt = new Date().toISOString();
    private last: { at: number; finished: number } | undefined;

    constructor(options: FleetOptions) {
        this.redis = options.redis;
        this.heartbeatMillis = options.heartbeatMillis ?? FLEET_DEFAULTS.heartbeatMillis;
        this.keys = { workers: `${options.key}:workers`, stats: `${options.key}:stats`, trips: `${options.key}:trips` };
    }

    /** Says this worker is alive and saves its counters. */
    async heartbeat(stats: StatsSnapshot, finished: number): Promise<void> {
        const now = Date.now();
        const pagesPerSec =
            this.last && now > this.last.at ? ((finished - this.last.finished) * 1000) / (now - this.last.at) : 0;
        this.last = { at: now, finished };
        const seen: WorkerSeen = {
            id: this.workerId,
            host: hostname(),
            pid: process.pid,
            startedAt: this.startedAt,
            seenAt: new Date(now).toISOString(),
            pagesPerSec,
        };
        await this.redis
            .multi()
            .hset(this.keys.workers, this.workerId, JSON.stringify(seen))
            .hset(this.keys.stats, this.workerId, JSON.stringify(stats))
            .exec();
    }

    /** This worker is done: it leaves the list of workers (its counters stay). */
    async leave(): Promise<void> {
        await this.redis.hdel(this.keys.workers, this.workerId);
    }

    /** Every worker heard of recently, this one included. */
    async workers(): Promise<WorkerSeen[]> {
        const all = Object.values(await this.redis.hgetall(this.keys.workers)).map(
            (json) => JSON.parse(json) as WorkerSeen,
        );
        const since = Date.now() - 3 * this.heartbeatMillis;
        return all.filter((worker) => Date.parse(worker.seenAt) >= since);
    }

    /** Every worker's counters, by worker id. */
    async stats(): Promise<Record<string, StatsSnapshot>> {
        const all = await this.redis.hgetall(this.keys.stats);
        return Object.fromEntries(Object.entries(all).map(([id, json]) => [id, JSON.parse(json) as StatsSnapshot]));
    }

    /** Shares a trip of the drift breaker; a route already stopped keeps its first trip. */
    async shareTrip(trip: Trip): Promise<void> {
        await this.redis.hsetnx(this.keys.trips, trip.route, JSON.stringify(trip));
    }

    /** The routes stopped anywhere in the fleet. */
    async trips(): Promise<Trip[]> {
        return Object.values(await this.redis.hgetall(this.keys.trips)).map((json) => JSON.parse(json) as Trip);
    }

    /** Forgets the fleet: its workers, counters and trips (a fresh run). */
    async clear(): Promise<void> {
        await this.redis.del(this.keys.workers, this.keys.stats, this.keys.trips);
    }
}
