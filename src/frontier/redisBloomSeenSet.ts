/**
 * A Bloom seen-set in Redis, shared by every worker of a distributed run: the filter of
 * bloomSeenSet.ts (same sizing, same bit positions) kept as plain Redis bitmaps, so it needs no
 * RedisBloom module. About 3.6 bytes a URL at the default 1e-6, against about 16 for the exact
 * RedisSeenSet; the price is the same as in memory: a false positive silently skips a new URL.
 *
 * The bit positions are computed here; one Lua script per chunk of URLs sets each URL's k bits
 * (BITFIELD SET returns the old bit) and answers "new" where any was unset, so the check and the
 * set are one step for the whole fleet: of two workers adding a URL at once, one gets "new".
 *
 * A Redis string holds at most 512 MB (2^32 bits), so the filter is cut into bitmaps of
 * `bitsPerKey` bits, `${key}:bits:0`, `${key}:bits:1`, …; 2^31 by default, well inside the
 * limit. At 1e-6 that is one bitmap up to about 75M URLs.
 *
 * Like RedisSeenSet, whose plumbing it shares: the layout (bits, hashes, bits per bitmap) is
 * stored in `${key}:meta` by the first opener and read by every later one; `${key}:count` counts
 * URLs admitted fleet-wide; on a Redis Cluster, the key carries a hash tag, as RedisSeenSet's.
 */
import type { RedisClient } from './redis/connection.js';
import type { SeenSetReport } from '../vocabulary/report.js';
import { bloomPositions, bloomSizing } from './bloomSeenSet.js';
import type { SeenSet } from './seenSet.js';
import {
    countKey,
    deleteKeysUnder,
    hash64,
    inChunks,
    luaScript,
    openLayout,
    readCount,
    type LuaScript,
} from './redisSeenSet.js';

export interface RedisBloomSeenSetOptions {
    /**
     * The Redis key prefix of this site's seen-set, e.g.
     * `{dragnet:shop}:seen`; every key the set writes starts with `${key}:`.
     */
    key: string;
    /**
     * URLs the run is expected to see; past it, the false-positive rate climbs. Used
     * when the set is first created. Default: BLOOM_DEFAULTS.expectedItems (10 000 000).
     */
    expectedUrls?: number;
    /**
     * Accepted chance that a new URL is taken for a seen one. Used when the
     * set is first created. Default: BLOOM_DEFAULTS.falsePositiveRate (1e-6).
     */
    falsePositiveRate?: number;
    /** Bits per Redis bitmap. Default: 2^31 (256 MB); smaller only so tests can cut a small filter into several. */
    bitsPerKey?: number;
}

const MAX_BITS_PER_KEY = 2 ** 32;

// KEYS[1]: the counter; KEYS[2]: the claims (hash field of a claimed URL → its owner's tag);
// KEYS[3], KEYS[4], …: the bitmaps. ARGV[1]: bits per bitmap; ARGV[2]: the mode.
// - 'add' (set the URLs' bits) or 'has' (only read them): ARGV[2 + i], the i-th URL's bit positions,
//   space-separated (one argument per URL, not k: encoding 20 arguments a URL made ioredis, not
//   Redis, the bottleneck: 49k URLs/s against 88k). Returns 1 or 0 per URL: for an add, whether one
//   of its bits was 0 (the URL was new), then the counter; for a look, whether all were 1 (held).
// - 'claim': ARGV[3], the URL's positions; ARGV[4], its hash field; ARGV[5], the owner's tag.
//   Returns 1 when the URL was new (its bits are set and its owner kept) or is that owner's.
// One BITFIELD per URL and bitmap sets (or gets) its bits and returns their old values. With one
// bitmap (up to ~75M URLs at 1e-6) the positions go to BITFIELD as they came, without the
// tonumber/format step that several need.
const SCRIPT = `
local perKey = tonumber(ARGV[1])
local mode = ARGV[2]
local bitmaps = #KEYS - 2

-- Sets (write) or reads the bits at a URL's positions; 1 when one of them was 0.
local function touch(positions, write)
    local byPart = {}
    for bit in string.gmatch(positions, '%d+') do
        local part = 0
        if bitmaps > 1 then
            local n = tonumber(bit)
            part = math.floor(n / perKey)
            bit = string.format('%d', n - part * perKey)
        end
        local args = byPart[part]
        if args == nil then
            args = {}
            byPart[part] = args
        end
        local n = #args
        args[n + 1] = write and 'SET' or 'GET'
        args[n + 2] = 'u1'
        args[n + 3] = bit
        if write then args[n + 4] = '1' end
    end
    local isNew = 0
    for part, args in pairs(byPart) do
        for _, was in ipairs(redis.call('BITFIELD', KEYS[part + 3], unpack(args))) do
            if was == 0 then isNew = 1 end
        end
    end
    return isNew
end

if mode == 'claim' then
    local claimant = redis.call('HGET', KEYS[2], ARGV[4])
    if claimant then
        if claimant == ARGV[5] then return 1 end
        return 0
    end
    if touch(ARGV[3], true) == 0 then return 0 end
    redis.call('HSET', KEYS[2], ARGV[4], ARGV[5])
    redis.call('INCR', KEYS[1])
    return 1
end

local add = mode == 'add'
local answers = {}
local added = 0
for url = 3, #ARGV do
    local isNew = touch(ARGV[url], add)
    if add then
        answers[url - 2] = isNew
        added = added + isNew
    else
        answers[url - 2] = 1 - isNew
    end
end
if add then answers[#ARGV - 1] = redis.call('INCRBY', KEYS[1], added) end
return answers
`;

interface BloomLayout {
    kind: 'bloom';
    bitCount: number;
    hashCount: number;
    bitsPerKey: number;
}

export class RedisBloomSeenSet implements SeenSet {
    /** The prefix of every key of this set. */
    readonly key: string;
    /** Bits in the filter (m) and positions per URL (k), as stored in `${key}:meta`. */
    readonly bitCount: number;
    readonly hashCount: number;
    readonly bitsPerKey: number;
    private readonly redis: RedisClient;
    private readonly script: LuaScript;
    private readonly keys: string[];
    private count: number;

    private constructor(redis: RedisClient, key: string, layout: BloomLayout, count: number) {
        this.redis = redis;
        this.key = key;
        this.bitCount = layout.bitCount;
        this.hashCount = layout.hashCount;
        this.bitsPerKey = layout.bitsPerKey;
        const bitmaps = Math.ceil(layout.bitCount / layout.bitsPerKey);
        this.keys = [countKey(key), `${key}:claims`, ...Array.from({ length: bitmaps }, (_, n) => `${key}:bits:${n}`)];
        this.count = count;
        this.script = luaScript(redis, 'dragnetBloomSeen', SCRIPT);
    }

    /** Opens the filter under `options.key`: its stored layout, or, first of the fleet, the one the options imply. */
    static async open(redis: RedisClient, options: RedisBloomSeenSetOptions): Promise<RedisBloomSeenSet> {
        const sizing = bloomSizing({
            expectedItems: options.expectedUrls,
            falsePositiveRate: options.falsePositiveRate,
        });
        const bitsPerKey = options.bitsPerKey ?? 2 ** 31;
        if (!(Number.isInteger(bitsPerKey) && bitsPerKey > 0 && bitsPerKey <= MAX_BITS_PER_KEY))
            throw new RangeError('bitsPerKey must be a whole number in [1, 2^32]');
        const layout = await openLayout<BloomLayout>(redis, options.key, { kind: 'bloom', ...sizing, bitsPerKey });
        if (![layout.bitCount, layout.hashCount, layout.bitsPerKey].every((n) => Number.isInteger(n) && n > 0)) {
            throw new Error(`${options.key}:meta holds no valid filter layout: ${JSON.stringify(layout)}`);
        }
        return new RedisBloomSeenSet(redis, options.key, layout, await readCount(redis, options.key));
    }

    /** For each key, whether the fleet's filter holds it (or a false positive says so). */
    async has(keys: readonly string[]): Promise<boolean[]> {
        return inChunks(keys, (chunk) => this.run('has', chunk));
    }

    /** Adds the keys; for each, whether it was new to the whole fleet (or a false positive said it was not). */
    async add(keys: readonly string[]): Promise<boolean[]> {
        return inChunks(keys, (chunk) => this.run('add', chunk));
    }

    /**
     * The filter cannot hold an owner, so claimed URLs also go in a plain hash, `${key}:claims`
     * (about 80 bytes a claim; claims are few: one per page reached by another URL than its
     * canonical one).
     */
    async claim(key: string, owner: string): Promise<boolean> {
        const positions = bloomPositions(key, this.hashCount, this.bitCount).join(' ');
        return (
            (await this.script(this.keys, [
                String(this.bitsPerKey),
                'claim',
                positions,
                hash64(key),
                hash64(owner),
            ])) === 1
        );
    }

    /** URLs admitted fleet-wide, as of this worker's last add. */
    get size(): number {
        return this.count;
    }

    describe(): SeenSetReport {
        return {
            kind: 'bloom',
            urls: this.count,
            expectedSkipped: Math.round(this.expectedSkipped * 100) / 100,
            falsePositiveRate: this.falsePositiveRate,
            bytes: this.bytes,
        };
    }

    /** Redis memory the bitmaps take once filled. */
    get bytes(): number {
        return Math.ceil(this.bitCount / 8);
    }

    /** The chance, with `size` URLs in, that a new URL is answered "seen": (1 - e^(-kn/m))^k. */
    get falsePositiveRate(): number {
        return rateAt(this.count, this);
    }

    /**
     * Estimated new URLs answered "seen" so far. Each admitted URL stands for p / (1 - p) rejected
     * ones, p the rate at its fill (as BloomSeenSet counts it); summed over the fleet's n URLs,
     * which here are only known as a count, that is the integral of p / (1 - p) from 0 to n.
     */
    get expectedSkipped(): number {
        const steps = 100;
        const width = this.count / steps;
        let sum = 0;
        for (let i = 0; i < steps; i++) {
            const p = rateAt((i + 0.5) * width, this); // midpoint rule
            sum += (p / (1 - p)) * width;
        }
        return sum;
    }

    /**
     * Empties the filter (for `--fresh`): deletes every key under `${key}:`, then writes this
     * filter's layout back so workers opening it afterwards use the same bits.
     */
    async clear(): Promise<void> {
        await deleteKeysUnder(this.redis, this.key);
        this.count = 0;
        const layout = await openLayout<BloomLayout>(this.redis, this.key, this.layout);
        if (JSON.stringify(layout) !== JSON.stringify(this.layout))
            throw new Error(`${this.key} was reopened with another layout while it was cleared`);
    }

    private get layout(): BloomLayout {
        return { kind: 'bloom', bitCount: this.bitCount, hashCount: this.hashCount, bitsPerKey: this.bitsPerKey };
    }

    /** The script over one chunk: for each key, whether it was new (add) or is held (has). */
    private async run(mode: 'add' | 'has', keys: readonly string[]): Promise<boolean[]> {
        const args = [
            String(this.bitsPerKey),
            mode,
            ...keys.map((key) => bloomPositions(key, this.hashCount, this.bitCount).join(' ')),
        ];
        const answers = (await this.script(this.keys, args)) as number[];
        if (mode === 'add') {
            // The script's last answer is the set's count after the adds.
            const count = answers.pop();
            if (count === undefined) throw new Error('the seen-set script gave no answers');
            this.count = count;
        }
        return answers.map((answer) => answer === 1);
    }
}

function rateAt(urls: number, { bitCount, hashCount }: { bitCount: number; hashCount: number }): number {
    return (1 - Math.exp((-hashCount * urls) / bitCount)) ** hashCount;
}
