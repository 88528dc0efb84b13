/**
 * Who reads a site's sitemaps in a run (wiring/sitemapSeeding.ts). A process alone reads them
 * itself (OWN_TURN); a fleet reads them once, by whichever worker takes the turn first
 * (RedisSitemapTurn). The turn is a lease in Redis, `{<prefix>:<site>}:sitemaps`, renewed while its
 * worker reads: a worker that dies mid-read stops renewing, and another takes the turn when the lease
 * runs out and reads them again (the seen-set keeps what the first one queued from being queued
 * twice). Once read, the key says `done`, and no worker of the run reads them again; a new run of
 * the site forgets it.
 */
import type { RedisClient } from './connection.js';
import { type LuaScript, luaScript } from '../redisSeenSet.js';

export interface SitemapTurn {
    /**
     * Resolves true once this worker is to read the sitemaps, false once another has read them (or
     * `signal` stopped the wait).
     */
    take(signal: AbortSignal): Promise<boolean>;
    /** This worker read them all. */
    done(): Promise<void>;
    /** This worker stops reading (done, stopped or failed); a turn it did not finish is another's to take. */
    release(): Promise<void>;
}

/** A process alone: its turn, always. */
export const OWN_TURN: SitemapTurn = {
    take: async () => true,
    done: async () => {},
    release: async () => {},
};

export interface RedisSitemapTurnOptions {
    redis: RedisClient;
    /** `{<prefix>:<site>}:sitemaps`. */
    key: string;
    /** This worker's id (Fleet.workerId). */
    holder: string;
    /** How long a turn stays this worker's without a renewal; it is renewed every third of it. Default: 30,000 ms. */
    leaseMillis?: number;
}

// KEYS[1]: the turn. ARGV[1]: the holder; ARGV[2]: the lease (ms), or '' to let the turn go.
const HOLDER_SCRIPT = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[1]) else redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1
`;

export class RedisSitemapTurn implements SitemapTurn {
    private readonly leaseMillis: number;
    private readonly holderScript: LuaScript;
    private renewal: NodeJS.Timeout | undefined;

    constructor(private readonly options: RedisSitemapTurnOptions) {
        this.leaseMillis = options.leaseMillis ?? 30_000;
        this.holderScript = luaScript(options.redis, 'dragnetSitemapTurn', HOLDER_SCRIPT);
    }

    async take(signal: AbortSignal): Promise<boolean> {
        const { redis, key, holder } = this.options;
        while (!signal.aborted) {
            if ((await redis.get(key)) === 'done') return false;
            if ((await redis.set(key, holder, 'PX', this.leaseMillis, 'NX')) === 'OK') {
                // Unref'd: the renewal keeps the turn, never the process, alive.
                this.renewal = setInterval(
                    () => void this.holderScript([key], [holder, this.leaseMillis]).catch(() => {}),
                    this.leaseMillis / 3,
                ).unref();
                return true;
            }
            await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, this.leaseMillis / 3)));
        }
        return false;
    }

    async done(): Promise<void> {
        clearInterval(this.renewal);
        this.renewal = undefined;
        await this.options.redis.set(this.options.key, 'done');
    }

    async release(): Promise<void> {
        if (this.renewal === undefined) return;
        clearInterval(this.renewal);
        this.renewal = undefined;
        await this.holderScript([this.options.key], [this.options.holder, '']);
    }
}
