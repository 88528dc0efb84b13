/**
 * How fast one site is asked, whatever exit or worker the request leaves from. Every request of
 * the site waits for its turn here: two turns are at least max(1 / maxRate, Crawl-delay) apart,
 * plus up to `jitter` of that at random, and none comes while the site is cooling (a 429's
 * Retry-After). Exits do not have turns of their own, so rotating proxies never multiplies the
 * rate the site sees; workers share the turns through Redis, so ten workers keep one worker's rate.
 *
 * A turn is a rate-limiter-flexible key with one point whose life is the spacing: the consume that
 * creates it is the turn, and every consume is refused until it expires (the refusal says in how
 * many ms). Cooling blocks that key. In each process one waiter at a time asks the store (a FIFO),
 * so a hundred waiters do not wake together and stampede it when the key expires.
 *
 * Keys in Redis: `<keyPrefix>:politeness` (keyPrefix: the site's, e.g. `{dragnet:shop}`).
 */
import type { RedisClient } from '../../frontier/redis/connection.js';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { PolitenessReport } from '../../vocabulary/report.js';

export interface SitePolitenessOptions {
    /** Most requests per second to the site, over every exit and worker (0.5: one every 2 s). Default: no limit. */
    maxRate?: number;
    /**
     * Space requests by the robots.txt Crawl-delay (capped at `maxCrawlDelaySecs`); false ignores it. Default: true.
     */
    crawlDelay?: boolean;
    /** The longest Crawl-delay honoured, in seconds; a longer one is cut to this. Default: 10. */
    maxCrawlDelaySecs?: number;
    /**
     * Share of the spacing added at random (0.2: each gap 1 to 1.2
     * times the spacing), so requests are not periodic. Default: 0.2.
     */
    jitter?: number;
    /**
     * The Crawl-delay of a URL's origin in seconds, undefined when
     * none (the robots policy's `crawlDelaySecs`). Default: none.
     */
    crawlDelaySecs?: (url: URL) => number | undefined;
    /** Where the turns live: this process, or Redis shared by every worker of the site. Default: 'memory'. */
    store?: 'memory' | { redis: RedisClient; keyPrefix: string };
    /**
     * With no spacing to keep, how often a Redis-backed instance asks whether another worker cooled
     * the site, in seconds: a request costs nothing the rest of the time. Default: 1.
     */
    coolCheckSecs?: number;
}

export const POLITENESS_DEFAULTS = { crawlDelay: true, maxCrawlDelaySecs: 10, jitter: 0.2, coolCheckSecs: 1 };

/** Thrown to the waiters of an acquire that was aborted or whose politeness was closed. */
export class PolitenessClosedError extends Error {
    override name = 'AbortError';
}

/**
 * rate-limiter-flexible's Redis store counts in whole seconds (`Math.floor(ms / 1000)`, `SET … EX`):
 * a 200 ms spacing would floor to 0, a key with no expiry. Its script is replaceable
 * (`customIncrTtlLuaScript`), so ours sets `PX` and is handed milliseconds where the library says
 * seconds. The rest of the script is the library's own. `block()` still writes `EX`, in real
 * seconds: a cooling in Redis is rounded up to whole seconds (Retry-After is in whole seconds anyway).
 */
const PX_SCRIPT = `redis.call('set', KEYS[1], 0, 'PX', ARGV[2], 'NX')
local consumed = redis.call('incrby', KEYS[1], ARGV[1])
local ttl = redis.call('pttl', KEYS[1])
if ttl == -1 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return {consumed, ttl}`;

const KEY = 'politeness';

interface Store {
    limiter: RateLimiterMemory | RateLimiterRedis;
    /** The limiter's duration for a spacing of `ms`. */
    duration(ms: number): number;
    /** block()'s seconds for a cooling of `ms`. */
    blockSecs(ms: number): number;
    close(): void;
}

function openStore(store: SitePolitenessOptions['store']): Store {
    if (store === undefined || store === 'memory') {
        const limiter = new RateLimiterMemory({ points: 1, duration: 1 });
        return { limiter, duration: (ms) => ms / 1000, blockSecs: (ms) => ms / 1000, close: () => {} };
    }
    // The library defines its script on the client as `rlflxIncr`; another limiter on the same
    // client would redefine it (EX over our milliseconds: waits 1000x too long). Ours gets its own.
    const client = store.redis.duplicate();
    client.on('error', () => {}); // a lost connection is retried by ioredis; commands wait meanwhile
    const limiter = new RateLimiterRedis({
        storeClient: client,
        keyPrefix: store.keyPrefix,
        points: 1,
        duration: 1,
        customIncrTtlLuaScript: PX_SCRIPT,
    });
    return { limiter, duration: (ms) => ms, blockSecs: (ms) => Math.ceil(ms / 1000), close: () => client.disconnect() };
}

interface Waiter {
    url: URL;
    since: number;
    resolve(): void;
    reject(error: unknown): void;
}

export class SitePoliteness {
    private readonly rateMs: number;
    private readonly crawlDelay: boolean;
    private readonly maxCrawlDelayMs: number;
    private readonly jitter: number;
    private readonly crawlDelaySecsOf?: (url: URL) => number | undefined;
    private readonly shared: boolean;
    private readonly coolCheckMs: number;
    private readonly store: Store;
    private readonly waiters: Waiter[] = [];
    private pumping = false;
    private closed = false;
    private sleeping?: { timer: NodeJS.Timeout; wake(): void };
    /** Until when this instance knows the site cools (its own cool(), or one seen in the store). */
    private coolUntil = 0;
    private nextCoolCheck = 0;
    private coolCheck?: Promise<void>;
    private readonly counts: PolitenessReport = { acquired: 0, spaced: 0, waitedMs: 0, coolings: 0, cooledMs: 0 };

    constructor(options: SitePolitenessOptions = {}) {
        if (options.maxRate !== undefined && !(options.maxRate > 0)) throw new RangeError('maxRate must be above 0');
        this.rateMs = options.maxRate === undefined ? 0 : 1000 / options.maxRate;
        this.crawlDelay = options.crawlDelay ?? POLITENESS_DEFAULTS.crawlDelay;
        this.maxCrawlDelayMs = (options.maxCrawlDelaySecs ?? POLITENESS_DEFAULTS.maxCrawlDelaySecs) * 1000;
        this.jitter = options.jitter ?? POLITENESS_DEFAULTS.jitter;
        this.crawlDelaySecsOf = options.crawlDelaySecs;
        this.coolCheckMs = (options.coolCheckSecs ?? POLITENESS_DEFAULTS.coolCheckSecs) * 1000;
        if (!(this.maxCrawlDelayMs >= 0)) throw new RangeError('maxCrawlDelaySecs must be 0 or more');
        if (!(this.jitter >= 0 && this.jitter <= 1)) throw new RangeError('jitter must be between 0 and 1');
        if (!(this.coolCheckMs > 0)) throw new RangeError('coolCheckSecs must be above 0');
        this.shared = typeof options.store === 'object';
        this.store = openStore(options.store);
    }

    /** The least gap before a request to `url`, in ms: max(1 / maxRate, capped Crawl-delay); 0 when none. */
    spacingMs(url: URL): number {
        const delaySecs = this.crawlDelay ? this.crawlDelaySecsOf?.(url) : undefined;
        const delayMs = delaySecs !== undefined && delaySecs > 0 ? Math.min(delaySecs * 1000, this.maxCrawlDelayMs) : 0;
        return Math.max(this.rateMs, delayMs);
    }

    /** Resolves when a request to `url` may be sent; rejects with PolitenessClosedError on abort or close. */
    async acquire(url: URL, signal?: AbortSignal): Promise<void> {
        if (this.closed || signal?.aborted) throw new PolitenessClosedError('politeness closed');
        this.counts.acquired += 1;
        if (this.spacingMs(url) === 0) {
            // Nothing to space: the store is asked only now and then whether another worker cooled the site.
            if (this.shared && Date.now() >= this.nextCoolCheck) {
                this.coolCheck ??= this.checkCool();
                await this.coolCheck;
            }
            if (this.closed) throw new PolitenessClosedError('politeness closed');
            if (Date.now() >= this.coolUntil && this.waiters.length === 0) return;
        }
        await new Promise<void>((resolve, reject) => {
            const waiter: Waiter = { url, since: Date.now(), resolve, reject };
            const onAbort = () => this.drop(waiter, new PolitenessClosedError('acquire aborted'));
            signal?.addEventListener('abort', onAbort, { once: true });
            waiter.resolve = () => {
                signal?.removeEventListener('abort', onAbort);
                resolve();
            };
            waiter.reject = (error) => {
                signal?.removeEventListener('abort', onAbort);
                reject(error);
            };
            this.waiters.push(waiter);
            void this.pump();
        });
    }

    /**
     * Makes the whole site wait `ms` from now (a 429's Retry-After, or any site-wide back-off): every
     * caller of every instance sharing the store. A cooling never shortens one already running. It
     * never rejects, so it can be left unawaited: a store that cannot be written leaves the cooling
     * to this worker alone, and the other workers hear of the site's 429s themselves.
     */
    async cool(ms: number, _reason?: string): Promise<void> {
        if (!(ms > 0) || this.closed) return;
        const secs = this.store.blockSecs(ms);
        const now = Date.now();
        const until = now + secs * 1000;
        if (until <= this.coolUntil) return;
        this.counts.coolings += 1;
        this.counts.cooledMs += until - Math.max(now, this.coolUntil);
        this.coolUntil = until; // this instance's waiters hold from now on, before the store has it
        const { limiter } = this.store;
        try {
            // Not atomic with the block: two workers cooling at once may leave the shorter of the two.
            const current = await limiter.get(KEY);
            if (current && current.msBeforeNext >= secs * 1000) return;
            await limiter.block(KEY, secs);
        } catch {
            // Written or not, this worker's waiters hold until coolUntil.
        }
    }

    /** The counters for the run summary. */
    report(): PolitenessReport {
        return { ...this.counts };
    }

    /** Rejects every waiting acquire and every later one, and lets go of the store. */
    close(): void {
        if (this.closed) return;
        this.closed = true;
        this.sleeping?.wake();
        for (const waiter of this.waiters.splice(0)) waiter.reject(new PolitenessClosedError('politeness closed'));
        this.store.close();
    }

    /** Serves the waiters in order: the head asks for a turn, and sleeps as long as the store says when refused. */
    private async pump(): Promise<void> {
        if (this.pumping) return;
        this.pumping = true;
        try {
            while (!this.closed) {
                const head = this.waiters[0];
                if (!head) break;
                let waitMs: number;
                try {
                    waitMs = await this.turn(head.url);
                } catch (error) {
                    if (this.waiters[0] === head) this.waiters.shift();
                    head.reject(error);
                    continue;
                }
                if (this.closed) return;
                if (waitMs > 0) {
                    await this.sleep(waitMs);
                    continue;
                }
                // The turn is taken: if the head was aborted meanwhile, it is the next waiter's.
                const granted = this.waiters.shift();
                if (!granted) return;
                const waited = Date.now() - granted.since;
                if (waited > 0) {
                    this.counts.spaced += 1;
                    this.counts.waitedMs += waited;
                }
                granted.resolve();
            }
        } finally {
            this.pumping = false;
        }
    }

    /** Takes a turn for a request to `url`: 0 when it may go now, else the ms to wait before asking again. */
    private async turn(url: URL): Promise<number> {
        const coolingMs = this.coolUntil - Date.now();
        if (coolingMs > 0) return coolingMs;
        const spacingMs = this.spacingMs(url);
        const { limiter } = this.store;
        if (spacingMs === 0) {
            // Only a cooling can hold it: wait for whatever key is there to expire.
            const current = await limiter.get(KEY);
            return current && current.msBeforeNext > 0 ? current.msBeforeNext : 0;
        }
        // The jitter is in the key's life, so it holds between workers too: never below the spacing.
        const lifeMs = Math.max(1, Math.ceil(spacingMs * (1 + this.jitter * Math.random())));
        try {
            await limiter.consume(KEY, 1, { customDuration: this.store.duration(lifeMs) });
            return 0;
        } catch (refusal) {
            if (!(refusal instanceof RateLimiterRes)) throw refusal;
            // Redis answers 0 for a key in its last millisecond; only a key with no expiry (-1) answers less.
            return refusal.msBeforeNext >= 0 ? Math.max(1, refusal.msBeforeNext) : Math.ceil(spacingMs);
        }
    }

    /** Whether another worker cooled the site, read from the store at most every coolCheckSecs. */
    private async checkCool(): Promise<void> {
        try {
            const current = await this.store.limiter.get(KEY);
            if (current && current.msBeforeNext > 0)
                this.coolUntil = Math.max(this.coolUntil, Date.now() + current.msBeforeNext);
        } catch {
            // Unread, the store is no reason to fail a request; the next check asks again.
        } finally {
            this.nextCoolCheck = Date.now() + this.coolCheckMs;
            this.coolCheck = undefined;
        }
    }

    private sleep(ms: number): Promise<void> {
        return new Promise((resolve) => {
            const wake = () => {
                clearTimeout(timer);
                this.sleeping = undefined;
                resolve();
            };
            const timer = setTimeout(wake, ms);
            this.sleeping = { timer, wake };
        });
    }

    private drop(waiter: Waiter, error: Error): void {
        const index = this.waiters.indexOf(waiter);
        if (index < 0) return;
        this.waiters.splice(index, 1);
        waiter.reject(error);
    }
}
