/**
 * The adaptive concurrency's limits shared by a fleet (concurrencyController.ts, `FleetLimits`):
 * one limit per domain for every worker, in one Redis hash (`{<prefix>:<site>}:concurrency`, a
 * field per domain holding `<limit>:<version>`). Each worker still judges its own fetches; a change
 * it decides is proposed here, and the fleet's limit after it comes back to every worker: to the
 * proposer at once, to the others at their next read (every `syncMillis`). A worker that joins
 * starts at the limits the fleet has learned, not at the maximum.
 *
 * Concurrent proposals resolve as one controller would: a cut always lands (the lowest of two cuts
 * wins), a raise only from the limit it was judged under (a raise judged under a limit the fleet
 * has since cut is dropped). Redis unreachable for a while: each worker goes on with its own limits.
 */
import type { RedisClient } from '../../frontier/redis/connection.js';
import type { FleetLimits } from './concurrencyController.js';

export interface RedisFleetLimitsOptions {
    redis: RedisClient;
    /** The hash the limits live in (`{<prefix>:<site>}:concurrency`). */
    key: string;
    /** How often the fleet's limits are read back. Default: 1,000 ms, the controller's window. */
    syncMillis?: number;
}

// ARGV: domain, from, to. Returns the domain's limit and version after the proposal.
const PROPOSE_SCRIPT = `
local stored = redis.call('HGET', KEYS[1], ARGV[1])
local from, to = tonumber(ARGV[2]), tonumber(ARGV[3])
local limit, version = from, 0
if stored then
    local l, v = string.match(stored, '^(%d+):(%d+)$')
    limit, version = tonumber(l), tonumber(v)
end
local new = limit
if to < from then new = math.min(limit, to) elseif limit == from then new = to end
if new ~= limit or not stored then
    version = version + 1
    redis.call('HSET', KEYS[1], ARGV[1], new .. ':' .. version)
end
return {new, version}
`;

type Listener = (domain: string, limit: number) => void;

export class RedisFleetLimits implements FleetLimits {
    private readonly redis: RedisClient;
    private readonly key: string;
    /** Per domain, the newest limit read and its version. */
    private readonly limits = new Map<string, { limit: number; version: number }>();
    private readonly listeners = new Set<Listener>();
    private readonly timer: NodeJS.Timeout;

    private constructor(options: RedisFleetLimitsOptions) {
        this.redis = options.redis;
        this.key = options.key;
        if (!('dragnetProposeLimit' in this.redis))
            this.redis.defineCommand('dragnetProposeLimit', { numberOfKeys: 1, lua: PROPOSE_SCRIPT });
        this.timer = setInterval(() => void this.sync().catch(() => undefined), options.syncMillis ?? 1000);
        this.timer.unref();
    }

    /** Opens the fleet's limits, read once before the first fetch. */
    static async open(options: RedisFleetLimitsOptions): Promise<RedisFleetLimits> {
        const limits = new RedisFleetLimits(options);
        await limits.sync();
        return limits;
    }

    known(domain: string): number | undefined {
        return this.limits.get(domain)?.limit;
    }

    onChange(listener: Listener): void {
        this.listeners.add(listener);
    }

    propose(domain: string, from: number, to: number): void {
        const propose =
            // biome-ignore lint/plugin/noDoubleCast: defineCommand made the script a method Redis's type cannot know of
            (this.redis as unknown as { dragnetProposeLimit: ProposeCommand }).dragnetProposeLimit;
        void propose
            .call(this.redis, this.key, domain, from, to)
            .then(([limit, version]) => this.learn(domain, Number(limit), Number(version)))
            .catch(() => undefined);
    }

    close(): void {
        clearInterval(this.timer);
    }

    /** Reads every domain's limit, and passes on those newer than this worker has. */
    async sync(): Promise<void> {
        const stored = await this.redis.hgetall(this.key);
        for (const [domain, value] of Object.entries(stored)) {
            const [limit, version] = value.split(':').map(Number);
            if (limit !== undefined && version !== undefined) this.learn(domain, limit, version);
        }
    }

    private learn(domain: string, limit: number, version: number): void {
        if (version <= (this.limits.get(domain)?.version ?? 0)) return;
        this.limits.set(domain, { limit, version });
        for (const listener of this.listeners) listener(domain, limit);
    }
}

type ProposeCommand = (key: string, domain: string, from: number, to: number) => Promise<[number, number]>;
