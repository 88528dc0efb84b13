/**
 * The request budget of a fleet (requestBudget.ts): one count in Redis, `{<prefix>:<site>}:budget`,
 * from which every worker takes its admissions in one script call, so no two workers take the same
 * last URL. Each worker takes against its own `--max-requests`; give every worker the same one.
 */
import type { RedisClient } from './connection.js';
import type { RequestBudget } from '../requestBudget.js';
import { type LuaScript, luaScript } from '../redisSeenSet.js';

// KEYS[1]: the count. ARGV[1]: wanted; ARGV[2]: the limit. Returns how many were taken, then the count.
const TAKE_SCRIPT = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local taken = math.max(0, math.min(tonumber(ARGV[1]), tonumber(ARGV[2]) - used))
if taken > 0 then used = redis.call('INCRBY', KEYS[1], taken) end
return { taken, used }
`;

export class RedisRequestBudget implements RequestBudget {
    private readonly takeScript: LuaScript;
    private used = 0;

    constructor(
        private readonly redis: RedisClient,
        /** The count's key, `{<prefix>:<site>}:budget`. */
        private readonly key: string,
        private readonly limit: number,
    ) {
        this.takeScript = luaScript(redis, 'dragnetTakeBudget', TAKE_SCRIPT);
    }

    async take(wanted: number): Promise<number> {
        const [taken, used] = (await this.takeScript([this.key], [wanted, this.limit])) as [number, number];
        this.used = used;
        return taken;
    }

    async giveBack(count: number): Promise<void> {
        if (count > 0) this.used = await this.redis.decrby(this.key, count);
    }

    get spent(): boolean {
        return this.used >= this.limit;
    }
}
