/**
 * The tier controller's outcomes shared by a fleet (tierController.ts): every worker adds its
 * own and decides from everyone's, so ten workers learn a site's block rate as one would. Each
 * worker keeps its new outcomes for a moment (a second; a tenth of one after a block) and sends
 * them in one script call, which decays the stored tallies to now, adds them, and returns the whole
 * table.
 */
import type { RedisClient } from '../../frontier/redis/connection.js';
import { MemoryTierCounts, type TierCounts, type TierTally } from './tierController.js';

export interface RedisTierCountsOptions {
    redis: RedisClient;
    /** The hash the tallies live in (`{<prefix>:<site>}:tiers`). */
    key: string;
    halfLifeMillis: number;
    /** How often this worker's outcomes are sent and the fleet's read back. Default: 1,000 ms. */
    syncMillis?: number;
    /**
     * How soon after a block they are, sooner than `syncMillis`: a
     * block is what moves a section, for the fleet. Default: 100 ms.
     */
    blockSyncMillis?: number;
}

// ARGV: now, half-life, then (field, ok, blocked) triples. Fields `<section>|<tier>` hold `:ok`, `:blocked`, `:at`.
const SYNC_SCRIPT = `
local key, now, half = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2])
for i = 3, #ARGV, 3 do
    local field = ARGV[i]
    local stored = redis.call('HMGET', key, field .. ':ok', field .. ':blocked', field .. ':at')
    local factor = 0.5 ^ ((now - tonumber(stored[3] or now)) / half)
    redis.call('HSET', key,
        field .. ':ok', tonumber(stored[1] or 0) * factor + tonumber(ARGV[i + 1]),
        field .. ':blocked', tonumber(stored[2] or 0) * factor + tonumber(ARGV[i + 2]),
        field .. ':at', now)
end
return redis.call('HGETALL', key)
`;

export class RedisTierCounts implements TierCounts {
    private readonly redis: RedisClient;
    private readonly key: string;
    private readonly halfLifeMillis: number;
    private view: MemoryTierCounts;
    private pending = new Map<string, TierTally>();
    private readonly timer: NodeJS.Timeout;
    private readonly blockSyncMillis: number;
    private blockSync: NodeJS.Timeout | undefined;

    constructor(options: RedisTierCountsOptions) {
        this.redis = options.redis;
        this.key = options.key;
        this.halfLifeMillis = options.halfLifeMillis;
        this.view = new MemoryTierCounts(this.halfLifeMillis);
        if (!('dragnetTierSync' in this.redis))
            this.redis.defineCommand('dragnetTierSync', { numberOfKeys: 1, lua: SYNC_SCRIPT });
        this.timer = setInterval(() => void this.sync().catch(() => undefined), options.syncMillis ?? 1000);
        this.timer.unref();
        this.blockSyncMillis = options.blockSyncMillis ?? 100;
    }

    add(key: string, tier: number, outcome: keyof TierTally, now: number): void {
        this.view.add(key, tier, outcome, now);
        const field = `${key}|${tier}`;
        let tally = this.pending.get(field);
        if (!tally) {
            tally = { ok: 0, blocked: 0 };
            this.pending.set(field, tally);
        }
        tally[outcome] += 1;
        if (outcome === 'blocked' && !this.blockSync) {
            this.blockSync = setTimeout(() => {
                this.blockSync = undefined;
                void this.sync().catch(() => undefined);
            }, this.blockSyncMillis);
            this.blockSync.unref();
        }
    }

    get(key: string, tier: number, now: number): TierTally {
        return this.view.get(key, tier, now);
    }

    /** Sends this worker's outcomes and takes the fleet's table as the view. */
    async sync(now = Date.now()): Promise<void> {
        const sent = this.pending;
        this.pending = new Map();
        const args = [...sent].flatMap(([field, { ok, blocked }]) => [field, ok, blocked]);
        const sync =
            // biome-ignore lint/plugin/noDoubleCast: defineCommand made the script a method Redis's type cannot know of
            (this.redis as unknown as { dragnetTierSync(key: string, ...args: (string | number)[]): Promise<string[]> })
                .dragnetTierSync;
        const table = await sync.call(this.redis, this.key, now, this.halfLifeMillis, ...args);
        this.view = MemoryTierCounts.fromTable(table, this.halfLifeMillis);
        // Outcomes added while the call was out are in `pending` for the next sync; the view gets them now.
        for (const [field, tally] of this.pending) this.view.addTally(field, tally, now);
    }

    async close(): Promise<void> {
        clearInterval(this.timer);
        clearTimeout(this.blockSync);
        await this.sync().catch(() => undefined);
    }
}
