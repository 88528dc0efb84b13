/**
 * An exact seen-set in Redis, shared by every worker of a distributed run: a URL is admitted by
 * one worker of the fleet, once.
 *
 * Each URL key is hashed to 64 bits (the first 8 bytes of its md5). The high bits choose a
 * bucket, the Redis hash `${key}:${bucket}`; the 8 hash bytes are the field. A bucket is kept
 * under Redis's `hash-max-listpack-entries` (default 128) so it stays in the compact listpack
 * encoding, about 12 bytes a field; past that limit Redis converts it to a hashtable at several
 * times the bytes. Hence 64 URLs a bucket at the expected count (2× headroom for an overrun and
 * for unlucky buckets), which comes to about 16 bytes a URL at 10M URLs, against about 100 for
 * the URL strings in a Redis set.
 *
 * Exact up to the hash: with 64-bit hashes, the chance that any two of 10M URLs collide is
 * n² / 2^65 ≈ 3e-6; a collision is one URL wrongly skipped as seen.
 *
 * One script touches many buckets, so on a Redis Cluster the key must carry a hash tag (the fleet's
 * keys carry the site's, wiring/openDistributed.ts): every bucket is then in the tag's slot.
 *
 * Keys, all under `options.key`: `${key}:meta` (the layout, written by the first opener and read
 * by every later one, so workers with different `expectedUrls` still agree), `${key}:count` (URLs
 * admitted fleet-wide) and the buckets. No other set's key may start with `${key}:`, since
 * `clear()` deletes everything under it.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { primariesOf, type RedisClient } from './redis/connection.js';
import type { SeenSetReport } from '../vocabulary/report.js';
import { BLOOM_DEFAULTS } from './bloomSeenSet.js';
import type { SeenSet } from './seenSet.js';

export interface RedisSeenSetOptions {
    /**
     * The Redis key prefix of this site's seen-set, e.g.
     * `{dragnet:shop}:seen`; every key the set writes starts with `${key}:`.
     */
    key: string;
    /**
     * URLs the run is expected to see. Sizes the buckets when the set is first created; later
     * openers use the stored layout whatever they pass. Past it, buckets outgrow the compact
     * encoding and the bytes per URL climb. Default: BLOOM_DEFAULTS.expectedItems (10 000 000).
     */
    expectedUrls?: number;
}

/** URLs per bucket at the expected count: half of Redis's default `hash-max-listpack-entries` (128). */
const URLS_PER_BUCKET = 64;
/** Keys per script call: each call blocks Redis for about a millisecond, so other clients are not held up. */
const SCRIPT_CHUNK = 1_000;

// ARGV[1]: 'add' (add the URLs) or 'has' (only look). KEYS[1]: the counter; from i = 2, KEYS[i] and
// ARGV[i]: the bucket and hash field of a URL. Returns 1 or 0 per URL: for an add, whether it was
// new (HSETNX says whether the field is new, so a URL repeated within an add is new once), then the
// counter; for a look, whether the set holds it.
const SCRIPT = `
local add = ARGV[1] == 'add'
local answers = {}
local added = 0
for i = 2, #ARGV do
    if add then
        answers[i - 1] = redis.call('HSETNX', KEYS[i], ARGV[i], '1')
        added = added + answers[i - 1]
    else
        answers[i - 1] = redis.call('HEXISTS', KEYS[i], ARGV[i])
    end
end
if add then answers[#ARGV] = redis.call('INCRBY', KEYS[1], added) end
return answers
`;

// KEYS[1]: the counter; KEYS[2]: the URL's bucket. ARGV[1]: its hash field; ARGV[2]: the owner's
// tag (8 bytes, where a link's value is '1'). Returns 1 when the URL was new or is that owner's.
const CLAIM_SCRIPT = `
if redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2]) == 1 then
    redis.call('INCR', KEYS[1])
    return 1
end
if redis.call('HGET', KEYS[2], ARGV[1]) == ARGV[2] then return 1 end
return 0
`;

interface ExactLayout {
    kind: 'exact';
    buckets: number;
}

export class RedisSeenSet implements SeenSet {
    /** The prefix of every key of this set. */
    readonly key: string;
    /** Bucket hashes the URLs are spread over: a power of two, as stored in `${key}:meta`. */
    readonly buckets: number;
    private readonly redis: RedisClient;
    private readonly script: LuaScript;
    private readonly claimScript: LuaScript;
    private readonly bucketDivisor: number;
    private count: number;

    private constructor(redis: RedisClient, key: string, layout: ExactLayout, count: number) {
        this.redis = redis;
        this.key = key;
        this.buckets = layout.buckets;
        // The bucket is the top log2(buckets) bits of the hash's first 32.
        this.bucketDivisor = 2 ** 32 / layout.buckets;
        this.count = count;
        this.script = luaScript(redis, 'dragnetExactSeen', SCRIPT);
        this.claimScript = luaScript(redis, 'dragnetExactSeenClaim', CLAIM_SCRIPT);
    }

    /** Opens the set under `options.key`: its stored layout, or, first of the fleet, the one `expectedUrls` implies. */
    static async open(redis: RedisClient, options: RedisSeenSetOptions): Promise<RedisSeenSet> {
        const expectedUrls = options.expectedUrls ?? BLOOM_DEFAULTS.expectedItems;
        if (!(expectedUrls > 0 && Number.isFinite(expectedUrls))) throw new RangeError('expectedUrls must be positive');
        let buckets = 1;
        while (buckets < expectedUrls / URLS_PER_BUCKET) buckets *= 2;
        if (buckets > 2 ** 32) throw new RangeError('expectedUrls is past what 32 bucket bits hold');
        const layout = await openLayout<ExactLayout>(redis, options.key, { kind: 'exact', buckets });
        if (!(Number.isInteger(Math.log2(layout.buckets)) && layout.buckets <= 2 ** 32)) {
            throw new Error(`${options.key}:meta holds no valid bucket count: ${JSON.stringify(layout)}`);
        }
        return new RedisSeenSet(redis, options.key, layout, await readCount(redis, options.key));
    }

    /** For each key, whether the fleet's set holds it. */
    async has(keys: readonly string[]): Promise<boolean[]> {
        return inChunks(keys, (chunk) => this.run('has', chunk));
    }

    /** Adds the keys; for each, whether it was new to the whole fleet. Atomic per chunk of SCRIPT_CHUNK keys. */
    async add(keys: readonly string[]): Promise<boolean[]> {
        return inChunks(keys, (chunk) => this.run('add', chunk));
    }

    /** The owner is kept as the key's value (a link's is '1'), so a claim costs no more memory than a link. */
    async claim(key: string, owner: string): Promise<boolean> {
        const { bucket, field } = this.locate(key);
        return (await this.claimScript([countKey(this.key), bucket], [field, hash64(owner)])) === 1;
    }

    /** URLs admitted fleet-wide, as of this worker's last add. */
    get size(): number {
        return this.count;
    }

    describe(): SeenSetReport {
        return { kind: 'exact', urls: this.count };
    }

    /**
     * Empties the set (for `--fresh`): deletes every key under `${key}:`, then writes this set's
     * layout back so workers opening it afterwards hash as this one does. To change the layout,
     * delete the keys (`deleteKeysUnder`) before opening instead.
     */
    async clear(): Promise<void> {
        await deleteKeysUnder(this.redis, this.key);
        this.count = 0;
        const layout = await openLayout<ExactLayout>(this.redis, this.key, { kind: 'exact', buckets: this.buckets });
        if (layout.buckets !== this.buckets)
            throw new Error(`${this.key} was reopened with another layout while it was cleared`);
    }

    /** The script over one chunk: for each key, whether it was new (add) or is held (has). */
    private async run(mode: 'add' | 'has', keys: readonly string[]): Promise<boolean[]> {
        const buckets: string[] = [];
        const fields: Buffer[] = [];
        for (const key of keys) {
            const { bucket, field } = this.locate(key);
            buckets.push(bucket);
            fields.push(field);
        }
        const answers = (await this.script([countKey(this.key), ...buckets], [mode, ...fields])) as number[];
        if (mode === 'add') {
            // The script's last answer is the set's count after the adds.
            const count = answers.pop();
            if (count === undefined) throw new Error('the seen-set script gave no answers');
            this.count = count;
        }
        return answers.map((answer) => answer === 1);
    }

    /** A URL key's hash field (its 64-bit hash) and the bucket that holds it (the hash's top bits). */
    private locate(key: string): { bucket: string; field: Buffer } {
        const field = hash64(key);
        return { bucket: `${this.key}:${Math.floor(field.readUInt32BE(0) / this.bucketDivisor)}`, field };
    }
}

// The Redis plumbing both Redis seen-sets share (redisBloomSeenSet.ts imports it).

/**
 * A Lua script called with its keys and arguments; ioredis sends EVALSHA and falls back to EVAL once per connection.
 */
export type LuaScript = (keys: readonly string[], args: readonly (string | Buffer | number)[]) => Promise<unknown>;

export function luaScript(redis: RedisClient, name: string, lua: string): LuaScript {
    if (!(name in redis)) redis.defineCommand(name, { lua });
    // biome-ignore lint/plugin/noDoubleCast: defineCommand made the command a method Redis's type cannot know of
    const command = (redis as unknown as Record<string, ((...args: unknown[]) => Promise<unknown>) | undefined>)[name];
    if (!command) throw new Error(`ioredis did not define the command ${name}`);
    return (keys, args) => command.call(redis, keys.length, ...keys, ...args);
}

/**
 * The layout stored in `${key}:meta`, after storing `proposed` there if there was none. SET NX
 * makes one opener of the fleet the first; the rest read what it wrote.
 */
export async function openLayout<T extends { kind: string }>(redis: RedisClient, key: string, proposed: T): Promise<T> {
    const metaKey = `${key}:meta`;
    await redis.set(metaKey, JSON.stringify(proposed), 'NX');
    const stored = await redis.get(metaKey);
    if (stored === null) throw new Error(`${metaKey} was deleted while the seen-set was opened`);
    const layout = JSON.parse(stored) as T;
    if (layout.kind !== proposed.kind)
        throw new Error(`${key} holds ${article(layout.kind)} seen-set, not ${article(proposed.kind)} one`);
    return layout;
}

function article(kind: string): string {
    return `${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind}`;
}

/** The first 8 bytes of the text's md5: how both Redis sets store a URL key or a claim's owner. */
export function hash64(text: string): Buffer {
    return createHash('md5').update(text).digest().subarray(0, 8);
}

export function countKey(key: string): string {
    return `${key}:count`;
}

export async function readCount(redis: RedisClient, key: string): Promise<number> {
    return Number((await redis.get(countKey(key))) ?? 0);
}

/** The keys under `${key}:`, a SCAN batch at a time. */
export async function* scanKeysUnder(redis: RedisClient, key: string): AsyncGenerator<string[]> {
    for (const node of primariesOf(redis)) yield* scanNode(node, key);
}

/**
 * Deletes the keys under `${key}:`, each by the node that holds it (one key a command, so keys of
 * different slots never meet in one); UNLINK frees their memory off Redis's main thread.
 */
export async function deleteKeysUnder(redis: RedisClient, key: string): Promise<void> {
    for (const node of primariesOf(redis))
        for await (const keys of scanNode(node, key)) await node.pipeline(keys.map((name) => ['unlink', name])).exec();
}

async function* scanNode(node: Redis, key: string): AsyncGenerator<string[]> {
    const match = `${key.replace(/[*?[\]\\]/g, '\\$&')}:*`;
    let cursor = '0';
    do {
        const [next, keys] = await node.scan(cursor, 'MATCH', match, 'COUNT', 1_000);
        cursor = next;
        if (keys.length > 0) yield keys;
    } while (cursor !== '0');
}

/**
 * A script call over chunks of SCRIPT_CHUNK keys, sent together:
 * one connection pipelines them and Redis runs them in order.
 */
export async function inChunks(
    keys: readonly string[],
    runChunk: (chunk: string[]) => Promise<boolean[]>,
): Promise<boolean[]> {
    const chunks: string[][] = [];
    for (let from = 0; from < keys.length; from += SCRIPT_CHUNK) chunks.push(keys.slice(from, from + SCRIPT_CHUNK));
    return (await Promise.all(chunks.map(runChunk))).flat();
}
